import { sql, type Kysely } from 'kysely';
import { isPostgres } from './util.js';

// A user's status or age is what a PATCH changes most (issues 32 and 37), and 17 of the users
// table's 19 indexes held one of them (a key or a carried column): every such UPDATE wrote an entry
// into each of them, and on PostgreSQL was never a HOT update (9.9 ms an UPDATE with them against
// ~2 ms without, bench/README.md). The users lists of the family (status, older/younger, lives_in,
// sorts, pages, cursors) are answered by the users index in memory once it is ready; these indexes
// serve the SQL path (USERS_INDEX=off, the warm-up, queries outside the family), which now checks
// status and age on the row. So no users index holds status or age any more:
//
// - dropped: the indexes that existed to sort or find by them (users_status_age_idx, users_age_*,
//   users_status_*) and users_country_idx (country_fold, status, id, age), which without them is
//   users_country_fold_asc's own prefix. A sort by age or status is read per value of it (by-value.ts:
//   that value's rows in id order, the table walked checking it) or sorted (top-N) by the planner;
// - rebuilt without status and age, same names, same order: the name and country order indexes, the
//   country's name indexes and users_country_fold_asc (what lives_in pages in id order through).
//
// The same on both backends. PostgreSQL also leaves room on each page of users (fillfactor 90) for
// the new version of an updated row, so that a HOT update finds it on the same page, and rewrites the
// table once (CLUSTER by the primary key: its rows in id order, as they were loaded) so that the
// pages written before this migration have that room too.

const FILLFACTOR = 90;

/** The users indexes after this migration: name, columns (none holds status or age). */
function newIndexes(): [name: string, columns: string][] {
  const out: [string, string][] = [['users_country_fold_asc', 'country_fold, id, country_key']];
  const order = {
    first_name: ['first_name_key', 'id, country_fold, last_name_key'],
    last_name: ['last_name_key', 'id, country_fold, first_name_key'],
    country: ['country_key', 'id, country_fold'],
  };
  for (const [field, [key, rest]] of Object.entries(order)) {
    out.push([`users_${field}_asc`, `${key}, ${rest}`], [`users_${field}_desc`, `${key} desc, ${rest}`]);
  }
  for (const field of ['first_name', 'last_name']) {
    for (const direction of ['asc', 'desc']) {
      out.push([`users_country_${field}_${direction}`, `country_fold, ${field}_key${direction === 'desc' ? ' desc' : ''}, id, country_key`]);
    }
  }
  return out;
}

/** The users indexes as migration 20261126T0100 made them: name, columns. */
function oldIndexes(): [name: string, columns: string][] {
  const out: [string, string][] = [
    ['users_status_age_idx', 'status, age desc, first_name_key, id'],
    ['users_country_idx', 'country_fold, status, id, age'],
    ['users_country_fold_asc', 'country_fold, id, status, age, country_key'],
  ];
  const order = {
    first_name: ['first_name_key', 'id, status, age, country_fold, last_name_key'],
    last_name: ['last_name_key', 'id, status, age, country_fold, first_name_key'],
    age: ['age', 'id, status, country_fold'],
    status: ['status collate "binary"', 'id, age, country_fold'],
    country: ['country_key', 'id, status, age, country_fold'],
  };
  for (const [field, [key, rest]] of Object.entries(order)) {
    out.push([`users_${field}_asc`, `${key}, ${rest}`], [`users_${field}_desc`, `${key} desc, ${rest}`]);
  }
  for (const field of ['first_name', 'last_name']) {
    for (const direction of ['asc', 'desc']) {
      out.push([`users_country_${field}_${direction}`, `country_fold, ${field}_key${direction === 'desc' ? ' desc' : ''}, id, status, age, country_key`]);
    }
  }
  return out;
}

/** Runs `body` atomically: PostgreSQL's migrations already run in one transaction; SQLite's do not. */
async function atomically(db: Kysely<unknown>, body: (db: Kysely<unknown>) => Promise<void>): Promise<void> {
  if (isPostgres(db)) return body(db);
  await db.transaction().execute((trx) => body(trx));
}

async function replace(db: Kysely<unknown>, drop: string[], create: [string, string][]): Promise<void> {
  for (const name of drop) await sql`drop index if exists ${sql.id(name)}`.execute(db);
  for (const [name, columns] of create) await sql`create index ${sql.id(name)} on users (${sql.raw(columns)})`.execute(db);
  // SQLite: a dropped index's statistics go with it; a database analyzed before (seed, import) gets
  // the new indexes' too, so that the planner's choices stay informed.
  if (isPostgres(db)) return;
  const { rows } = await sql<{ n: number }>`select count(*) as n from sqlite_master where name = 'sqlite_stat1'`.execute(db);
  if (!Number(rows[0]?.n)) return;
  const { rows: users } = await sql<{ n: number }>`select count(*) as n from sqlite_stat1 where tbl = 'users'`.execute(db);
  if (Number(users[0]?.n)) await sql`analyze users`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await atomically(db, async (db) => {
    let old = oldIndexes().map(([name]) => name);
    if (isPostgres(db)) {
      // The old indexes dropped first: the rewrite then rebuilds only the primary key and the email's.
      await replace(db, old, []);
      old = [];
      await sql`alter table users set (fillfactor = ${sql.lit(FILLFACTOR)})`.execute(db);
      const { rows } = await sql<{ index: string }>`
        select i.relname as index from pg_constraint c join pg_class i on i.oid = c.conindid
        where c.conrelid = 'users'::regclass and c.contype = 'p'`.execute(db);
      // VACUUM FULL cannot run in the migrations' transaction; CLUSTER can (the rows in id order).
      if (rows[0]) {
        await sql`cluster users using ${sql.id(rows[0].index)}`.execute(db);
        await sql`alter table users set without cluster`.execute(db);
      }
    }
    await replace(db, old, newIndexes());
  });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await atomically(db, async (db) => {
    await replace(
      db,
      newIndexes().map(([name]) => name),
      oldIndexes(),
    );
    if (isPostgres(db)) await sql`alter table users reset (fillfactor)`.execute(db);
  });
}
