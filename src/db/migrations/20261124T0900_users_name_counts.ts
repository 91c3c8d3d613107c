import { sql, type Kysely } from 'kysely';
import { isPostgres } from './util.js';

// users_name_counts: how many users there are per (field, folded name), field being first_name or
// last_name. A name prefix (first_name_starts_with / last_name_starts_with) is a range on the folded
// name, `lower(x collate "binary")` as query/text.ts prefixRange and the order indexes fold it, so
// its exact total is the sum of the summary rows in that range (one range of the primary key)
// instead of a walk of the 30k-80k matching index entries. The name column compares by code point
// on both backends (collation "binary", migration 20261122T0002), as the folded key does.
//
// Kept exact by triggers in the writing transaction, as users_counts is (migration 20261124T0100,
// whose comments explain the choices): SQLite row triggers, PostgreSQL statement triggers with
// transition tables upserting in key order; rows that fall to 0 stay (the sums ignore them).
// As many rows as distinct folded names: a few dozen on the seeded data, at most one per user.

const FIELDS = ['first_name', 'last_name'] as const;
const FOLDED = (row: string, field: string) => sql.raw(`lower(${row}.${field} collate "binary")`);

async function createTable(db: Kysely<unknown>): Promise<void> {
  await sql`create table users_name_counts (
    field text not null,
    name text collate "binary" not null,
    n integer not null,
    constraint users_name_counts_pkey primary key (field, name))`.execute(db);
  for (const field of FIELDS) {
    await sql`insert into users_name_counts (field, name, n)
      select ${field}, ${FOLDED('users', field)}, count(*) from users group by 2`.execute(db);
  }
}

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  const add = (row: string, field: string) => sql`insert into users_name_counts (field, name, n) values (${sql.lit(field)}, ${FOLDED(row, field)}, 1)
      on conflict (field, name) do update set n = n + 1`;
  const remove = (field: string) => sql`update users_name_counts set n = n - 1 where field = ${sql.lit(field)} and name = ${FOLDED('old', field)}`;
  const both = (step: (field: string) => ReturnType<typeof remove>) => sql.join(FIELDS.map(step), sql`; `);
  await sql`create trigger users_name_counts_insert after insert on users begin ${both((f) => add('new', f))}; end`.execute(db);
  await sql`create trigger users_name_counts_delete after delete on users begin ${both(remove)}; end`.execute(db);
  for (const field of FIELDS) {
    await sql`create trigger ${sql.id(`users_name_counts_update_${field}`)} after update of ${sql.ref(field)} on users
      begin ${remove(field)}; ${add('new', field)}; end`.execute(db);
  }
}

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  // Updated by every write of a user's name: room on each page for the new row versions (HOT updates).
  await sql`alter table users_name_counts set (fillfactor = 50)`.execute(db);
  // Transition tables cannot go with UPDATE OF: every update statement fires, and a statement that
  // moves no name nets out to nothing (having sum(n) <> 0) and writes no summary row.
  const upsert = (select: string) =>
    sql.raw(`insert into users_name_counts as c (field, name, n)
      select field, name, sum(n) from (${select}) as moved group by 1, 2 having sum(n) <> 0 order by 1, 2
      on conflict (field, name) do update set n = c.n + excluded.n`);
  const rows = (table: string, sign: number) =>
    FIELDS.map((f) => `select '${f}'::text as field, lower(${f} collate "binary") as name, ${sign} as n from ${table}`).join(' union all ');
  const fn = (name: string, body: ReturnType<typeof upsert>) =>
    sql`create function ${sql.id(name)}() returns trigger language plpgsql as $$ begin ${body}; return null; end $$`.execute(db);
  await fn('users_name_counts_added', upsert(rows('new_rows', 1)));
  await fn('users_name_counts_removed', upsert(rows('old_rows', -1)));
  await fn('users_name_counts_moved', upsert(`${rows('old_rows', -1)} union all ${rows('new_rows', 1)}`));
  await sql`create trigger users_name_counts_insert after insert on users referencing new table as new_rows
    for each statement execute function users_name_counts_added()`.execute(db);
  await sql`create trigger users_name_counts_delete after delete on users referencing old table as old_rows
    for each statement execute function users_name_counts_removed()`.execute(db);
  await sql`create trigger users_name_counts_update after update on users referencing old table as old_rows new table as new_rows
    for each statement execute function users_name_counts_moved()`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db);
  if (isPostgres(db)) await postgresTriggers(db);
  else await sqliteTriggers(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    for (const op of ['insert', 'delete', 'update']) await sql`drop trigger if exists ${sql.id(`users_name_counts_${op}`)} on users`.execute(db);
    for (const name of ['users_name_counts_added', 'users_name_counts_removed', 'users_name_counts_moved']) {
      await sql`drop function if exists ${sql.id(name)}()`.execute(db);
    }
  } else {
    for (const name of ['insert', 'delete', ...FIELDS.map((f) => `update_${f}`)]) {
      await sql`drop trigger if exists ${sql.id(`users_name_counts_${name}`)}`.execute(db);
    }
  }
  await db.schema.dropTable('users_name_counts').execute();
}
