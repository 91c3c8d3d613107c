import { sql, type Kysely } from 'kysely';
import { isPostgres } from './util.js';

// PostgreSQL only (issue 32): the table versions and the users summaries no longer have a row that
// every writer updates. Each such row was locked by a writing transaction until its commit, so the
// writers of one table (of one users (status, country, age)) queued behind each other, and one
// session idle in a transaction that touched a user stopped every other user write. SQLite has one
// writer at a time anyway and keeps migrations 20261124T0100 / 20261126T0100 as they are.
//
// - table_version_slots replaces table_versions: SLOTS rows, one column per versioned table. A write
//   statement adds 1 to its table's column in one slot row, the one of its backend
//   (pg_backend_pid() % SLOTS) or, when another transaction holds that slot, the next one nobody
//   holds (a slot is claimed with a transaction-level advisory lock, tried, never waited for: no WAL,
//   unlike a row lock): a writer never waits on another for its version, unless SLOTS transactions
//   are writing at once (then it waits on its own slot's row, as every writer did before).
//   A table's version is the sum of its column: one more with every committed write statement, so
//   equal versions still mean equal rows (db/table-stamps.ts reads it; one pass over SLOTS short rows).
// - users_counts and users_name_counts become views over two tables each: `_folded` (the old table,
//   renamed) and `_delta`, where the triggers append the statement's +n/-n rows (no key, no conflict,
//   no lock anyone else wants). The view is their UNION ALL: a key's count is the sum of its rows
//   (every reader sums: query/summary.ts, held-summary.ts). A folder (db/summary-folder.ts) moves the
//   delta into the folded rows, in one transaction, one folder at a time: totals are exact at every
//   instant, before, during and after a fold.

/** Rows of table_version_slots: how many transactions may write one table at once without waiting. */
export const SLOTS = 64;

// Frozen with this migration (the runtime list is db/versioned-tables.ts).
const VERSIONED_TABLES = ['artists', 'albums', 'songs', 'users', 'aliases', 'tokens'] as const;

const COUNT_COLUMNS = 'status, country_fold, country_key, age';
const SUMMARIES = [
  { name: 'users_counts', columns: COUNT_COLUMNS, key: 'status, country_key, age', order: '1, 3, 4' },
  { name: 'users_name_counts', columns: 'field, name', key: 'field, name', order: '1, 2' },
] as const;

/** The rows a statement moved, per summary, as migration 20261126T0100 selects them from a transition table. */
function movedRows(summary: string, table: string, sign: number): string {
  if (summary === 'users_counts') return `select ${COUNT_COLUMNS}, ${sign} as n from ${table}`;
  return ['first_name', 'last_name'].map((f) => `select '${f}'::text as field, ${f}_key as name, ${sign} as n from ${table}`).join(' union all ');
}

function moved(summary: string, step: 'added' | 'removed' | 'moved'): string {
  if (step === 'added') return movedRows(summary, 'new_rows', 1);
  if (step === 'removed') return movedRows(summary, 'old_rows', -1);
  return `${movedRows(summary, 'old_rows', -1)} union all ${movedRows(summary, 'new_rows', 1)}`;
}

async function replaceFunction(db: Kysely<unknown>, name: string, body: string): Promise<void> {
  await sql`create or replace function ${sql.id(name)}() returns trigger language plpgsql as ${sql.raw(`$$ begin ${body}; return null; end $$`)}`.execute(db);
}

async function slotsUp(db: Kysely<unknown>): Promise<void> {
  const columns = VERSIONED_TABLES.map((t) => sql`${sql.id(t)} bigint not null default 0`);
  // Updated by writers all the time: room on each page for new row versions (HOT updates).
  await sql`create table table_version_slots (slot integer primary key, ${sql.join(columns)}) with (fillfactor = 50)`.execute(db);
  await sql`insert into table_version_slots (slot) select generate_series(0, ${sql.lit(SLOTS - 1)})`.execute(db);
  // The versions go on from where they were (slot 0 holds them): a stamp read before is never met again.
  for (const table of VERSIONED_TABLES) {
    await sql`update table_version_slots set ${sql.id(table)} = coalesce((select version from table_versions where name = ${table}), 1) where slot = 0`.execute(
      db,
    );
  }
  const branches = VERSIONED_TABLES.map(
    (t, i) => `${i === 0 ? 'if' : 'elsif'} tg_table_name = '${t}' then update table_version_slots set ${t} = ${t} + 1 where slot = s;`,
  ).join('\n      ');
  // The same trigger (one per table, migration 20261124T0100) calls the new body.
  await sql`create or replace function bump_table_version() returns trigger language plpgsql as ${sql.raw(`$$
    declare
      mine constant integer := pg_backend_pid() % ${SLOTS};
      claim constant integer := hashtext('table_version_slots ' || current_schema());
      s integer := mine;
    begin
      -- A slot is claimed by a transaction-level advisory lock (re-entrant: a transaction keeps its
      -- slot; no WAL, unlike a row lock): this backend's, else the next one nobody holds.
      if not pg_try_advisory_xact_lock(claim, s) then
        s := null;
        for i in 1..${SLOTS - 1} loop
          if pg_try_advisory_xact_lock(claim, (mine + i) % ${SLOTS}) then
            s := (mine + i) % ${SLOTS};
            exit;
          end if;
        end loop;
        -- Every slot held by another writer: wait for this backend's own row.
        s := coalesce(s, mine);
      end if;
      ${branches}
      end if;
      return null;
    end $$`)}`.execute(db);
  await sql`drop table table_versions`.execute(db);
}

async function slotsDown(db: Kysely<unknown>): Promise<void> {
  await sql`create table table_versions (name text primary key, version bigint not null default 1) with (fillfactor = 10)`.execute(db);
  for (const table of VERSIONED_TABLES) {
    await sql`insert into table_versions (name, version) select ${table}, sum(${sql.id(table)}) from table_version_slots`.execute(db);
  }
  await sql`create or replace function bump_table_version() returns trigger language plpgsql as $$
    begin update table_versions set version = version + 1 where name = tg_table_name; return null; end $$`.execute(db);
  await sql`drop table table_version_slots`.execute(db);
}

async function summariesUp(db: Kysely<unknown>): Promise<void> {
  for (const { name, columns } of SUMMARIES) {
    const folded = `${name}_folded`;
    const delta = `${name}_delta`;
    await sql`alter table ${sql.table(name)} rename to ${sql.id(folded)}`.execute(db);
    // Its fillfactor stays (50): the folder updates its rows every second under writes (HOT updates).
    // The same columns (and collations), no key: appended to, never updated.
    await sql`create table ${sql.table(delta)} (like ${sql.table(folded)})`.execute(db);
    await sql`create view ${sql.table(name)} as
      select ${sql.raw(columns)}, n from ${sql.table(folded)} union all select ${sql.raw(columns)}, n from ${sql.table(delta)}`.execute(db);
    for (const step of ['added', 'removed', 'moved'] as const) {
      await replaceFunction(
        db,
        `${name}_${step}`,
        `insert into ${delta} (${columns}, n) select ${columns}, sum(n) from (${moved(name, step)}) as moved group by ${columns} having sum(n) <> 0`,
      );
    }
  }
}

/** The delta moved into the folded rows (as db/summary-folder.ts does at run time), in this transaction. */
function foldStatement(summary: 'users_counts' | 'users_name_counts') {
  const { columns, key, order } = SUMMARIES.find((s) => s.name === summary)!;
  return sql.raw(`with moved as (delete from ${summary}_delta returning ${columns}, n)
    insert into ${summary}_folded as c (${columns}, n)
    select ${columns}, sum(n) from moved group by ${columns} having sum(n) <> 0 order by ${order}
    on conflict (${key}) do update set n = c.n + excluded.n`);
}

async function summariesDown(db: Kysely<unknown>): Promise<void> {
  for (const { name, columns, key, order } of SUMMARIES) {
    const folded = `${name}_folded`;
    const delta = `${name}_delta`;
    await foldStatement(name).execute(db);
    await sql`drop view ${sql.table(name)}`.execute(db);
    await sql`drop table ${sql.table(delta)}`.execute(db);
    await sql`alter table ${sql.table(folded)} rename to ${sql.id(name)}`.execute(db);
    // As migration 20261126T0100 made them.
    for (const step of ['added', 'removed', 'moved'] as const) {
      await replaceFunction(
        db,
        `${name}_${step}`,
        `insert into ${name} as c (${columns}, n)
        select ${columns}, sum(n) from (${moved(name, step)}) as moved group by ${columns} having sum(n) <> 0 order by ${order}
        on conflict (${key}) do update set n = c.n + excluded.n`,
      );
    }
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await slotsUp(db);
  await summariesUp(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await summariesDown(db);
  await slotsDown(db);
}
