import { sql, type Kysely } from 'kysely';
import { isPostgres } from './util.js';

// Two small tables kept exact by the database itself, in the same transaction as every write:
//
// - users_counts: how many users there are per (status, folded country, age). Any combination of the
//   users' status / lives_in / older_than / younger_than filters is a sum over at most a few thousand
//   of its rows, so an exact total never walks the matching users (db/table-stamps.ts explains who
//   reads it; query/summary.ts does). The country is stored folded as the lives_in filter folds it
//   (`lower(country collate "binary")`, db/sql.ts), so the filter's own SQL applies to it unchanged.
// - table_versions: one counter per table, moved by every statement that writes the table. Caches of
//   answers, totals and page boundaries are kept per table under it (db/table-stamps.ts), so a song
//   written does not throw away what was remembered about users. Committed with the write, it is
//   seen by every process and instance the moment the write is.
//
// Triggers do both, so every writer is covered: the API, group commit, seed, import, a psql session.
// SQLite has row triggers only; PostgreSQL gets statement triggers with transition tables (one
// aggregated statement per write statement: a million-row seed costs one GROUP BY, not a million
// upserts). Summary rows are upserted in key order, so two transactions moving users in opposite
// directions lock them in the same order and cannot deadlock.

// Frozen with this migration: the runtime list is db/versioned-tables.ts (runtime code never imports a
// migration, and a later change to that list must not change what this migration did).
export const VERSIONED_TABLES = ['artists', 'albums', 'songs', 'users', 'aliases', 'tokens'] as const;

const FOLDED_COUNTRY = (row: string) => sql.raw(`lower(${row}.country collate "binary")`);

async function createTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users_counts')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('age', 'integer', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('users_counts_pkey', ['status', 'country', 'age'])
    .execute();
  await sql`insert into users_counts (status, country, age, n)
    select status, ${FOLDED_COUNTRY('users')}, age, count(*) from users group by 1, 2, 3`.execute(db);

  await db.schema
    .createTable('table_versions')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(1))
    .execute();
  await db
    .insertInto('table_versions' as never)
    .values(VERSIONED_TABLES.map((name) => ({ name, version: 1 })))
    .execute();
}

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  const add = (
    row: string,
  ) => sql`insert into users_counts (status, country, age, n) values (${sql.raw(row)}.status, ${FOLDED_COUNTRY(row)}, ${sql.raw(row)}.age, 1)
      on conflict (status, country, age) do update set n = n + 1`;
  const remove = sql`update users_counts set n = n - 1 where status = old.status and country = ${FOLDED_COUNTRY('old')} and age = old.age`;
  await sql`create trigger users_counts_insert after insert on users begin ${add('new')}; end`.execute(db);
  await sql`create trigger users_counts_delete after delete on users begin ${remove}; end`.execute(db);
  await sql`create trigger users_counts_update after update of status, country, age on users begin ${remove}; ${add('new')}; end`.execute(db);
  for (const table of VERSIONED_TABLES) {
    const bump = sql`update table_versions set version = version + 1 where name = ${sql.lit(table)}`;
    for (const op of ['insert', 'update', 'delete']) {
      await sql`create trigger ${sql.id(`${table}_version_${op}`)} after ${sql.raw(op)} on ${sql.table(table)} begin ${bump}; end`.execute(db);
    }
  }
}

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  // Their rows are updated by every write: room on each page for the new versions (HOT updates, no
  // index change), so they stay a few pages long between vacuums.
  await sql`alter table users_counts set (fillfactor = 50)`.execute(db);
  await sql`alter table table_versions set (fillfactor = 10)`.execute(db);
  // One function per direction, each fed by the statement's transition table(s).
  const upsert = (select: string) =>
    sql.raw(`insert into users_counts as c (status, country, age, n)
      select status, country, age, sum(n) from (${select}) as moved group by 1, 2, 3 having sum(n) <> 0 order by 1, 2, 3
      on conflict (status, country, age) do update set n = c.n + excluded.n`);
  const rows = (table: string, sign: number) => `select status, lower(country collate "binary") as country, age, ${sign} as n from ${table}`;
  const fn = (name: string, body: ReturnType<typeof upsert>) =>
    sql`create function ${sql.id(name)}() returns trigger language plpgsql as $$ begin ${body}; return null; end $$`.execute(db);
  await fn('users_counts_added', upsert(rows('new_rows', 1)));
  await fn('users_counts_removed', upsert(rows('old_rows', -1)));
  await fn('users_counts_moved', upsert(`${rows('old_rows', -1)} union all ${rows('new_rows', 1)}`));
  await sql`create trigger users_counts_insert after insert on users referencing new table as new_rows for each statement execute function users_counts_added()`.execute(
    db,
  );
  await sql`create trigger users_counts_delete after delete on users referencing old table as old_rows for each statement execute function users_counts_removed()`.execute(
    db,
  );
  await sql`create trigger users_counts_update after update on users referencing old table as old_rows new table as new_rows for each statement execute function users_counts_moved()`.execute(
    db,
  );

  await sql`create function bump_table_version() returns trigger language plpgsql as $$
    begin update table_versions set version = version + 1 where name = tg_table_name; return null; end $$`.execute(db);
  for (const table of VERSIONED_TABLES) {
    await sql`create trigger ${sql.id(`${table}_version`)} after insert or update or delete on ${sql.table(table)}
      for each statement execute function bump_table_version()`.execute(db);
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await createTables(db);
  if (isPostgres(db)) await postgresTriggers(db);
  else await sqliteTriggers(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    for (const table of VERSIONED_TABLES) await sql`drop trigger if exists ${sql.id(`${table}_version`)} on ${sql.table(table)}`.execute(db);
    for (const op of ['insert', 'update', 'delete']) await sql`drop trigger if exists ${sql.id(`users_counts_${op}`)} on users`.execute(db);
    for (const name of ['bump_table_version', 'users_counts_added', 'users_counts_removed', 'users_counts_moved']) {
      await sql`drop function if exists ${sql.id(name)}()`.execute(db);
    }
  } else {
    for (const table of VERSIONED_TABLES) {
      for (const op of ['insert', 'update', 'delete']) await sql`drop trigger if exists ${sql.id(`${table}_version_${op}`)}`.execute(db);
    }
    for (const op of ['insert', 'update', 'delete']) await sql`drop trigger if exists ${sql.id(`users_counts_${op}`)}`.execute(db);
  }
  await db.schema.dropTable('table_versions').execute();
  await db.schema.dropTable('users_counts').execute();
}
