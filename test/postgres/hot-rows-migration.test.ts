import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Migrator, sql, type Kysely } from 'kysely';
import pg from 'pg';
import { makeConfig } from '../../src/config.js';
import { connect, type Connection } from '../../src/db/connect.js';
import { migrations } from '../../src/db/migrations/index.js';
import { collationKey, fold } from '../../src/db/collation.js';
import { foldSummaries } from '../../src/db/summary-folder.js';
import { tableVersions } from '../../src/db/table-stamps.js';
import { freshDatabase, type TestDatabase } from '../database.js';

// Migration 20261126T0300 (PostgreSQL only) on a catalogue written before it: the versions go on
// from where they were (as sums of slots), the summaries keep their counts (as folded rows and a
// delta), writes move both without a shared row, a fold changes no total, and down / up again keep
// the versions increasing and the counts exact, with the old triggers working again in between.

const BEFORE = '20261126T0200_events_without_counter';
const AFTER = '20261126T0300_versions_and_totals_without_hot_rows';

let database: TestDatabase;
let conn: Connection;
let db: Kysely<unknown>;

async function migrator(): Promise<Migrator> {
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]!.s;
  return new Migrator({ db, provider: { getMigrations: async () => migrations }, migrationTableSchema: schema });
}

async function migrateTo(name: string): Promise<void> {
  const { error } = await (await migrator()).migrateTo(name);
  if (error) throw error instanceof Error ? error : new Error(`migrating to ${name} failed`, { cause: error });
}

let written = 0;
async function addUser(first: string, age: number, country: string): Promise<void> {
  written++;
  await sql`insert into users (first_name, last_name, email, age, status, country, first_name_key, last_name_key, country_key, country_fold)
    values (${first}, 'Last', ${`u${written}@example.com`}, ${age}, 'active', ${country}, ${collationKey(first)}, ${collationKey('Last')},
      ${collationKey(country)}, ${fold(country)})`.execute(db);
}

/** users_counts and users_name_counts as one map each (key -> count, zeros left out), whatever they are made of. */
async function summaries(): Promise<{ counts: Record<string, number>; names: Record<string, number> }> {
  const { rows: c } = await sql<{ k: string; n: string }>`
    select concat_ws('|', status, country_fold, country_key, age) as k, sum(n) as n from users_counts group by 1 having sum(n) <> 0`.execute(db);
  const { rows: m } = await sql<{ k: string; n: string }>`
    select field || '|' || name as k, sum(n) as n from users_name_counts group by 1 having sum(n) <> 0`.execute(db);
  return { counts: Object.fromEntries(c.map((r) => [r.k, Number(r.n)])), names: Object.fromEntries(m.map((r) => [r.k, Number(r.n)])) };
}

/** The same, counted from the users themselves. */
async function counted(): Promise<{ counts: Record<string, number>; names: Record<string, number> }> {
  const { rows: c } = await sql<{ k: string; n: string }>`
    select concat_ws('|', status, country_fold, country_key, age) as k, count(*) as n from users group by 1`.execute(db);
  const { rows: m } = await sql<{ k: string; n: string }>`
    select 'first_name|' || first_name_key as k, count(*) as n from users group by 1
    union all select 'last_name|' || last_name_key, count(*) from users group by 1`.execute(db);
  return { counts: Object.fromEntries(c.map((r) => [r.k, Number(r.n)])), names: Object.fromEntries(m.map((r) => [r.k, Number(r.n)])) };
}

async function oldVersions(): Promise<Record<string, number>> {
  const { rows } = await sql<{ name: string; version: string }>`select name, version from table_versions`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.name, Number(r.version)]));
}

async function newVersions(): Promise<Record<string, number>> {
  return Object.fromEntries([...(await tableVersions(db))].map(([name, v]) => [name, Number(v)]));
}

async function relkind(name: string): Promise<string | undefined> {
  const { rows } = await sql<{
    k: string;
  }>`select relkind as k from pg_class where relname = ${name} and relnamespace = current_schema()::regnamespace`.execute(db);
  return rows[0]?.k;
}

beforeAll(async () => {
  database = await freshDatabase('postgres');
  conn = connect(makeConfig({ databaseUrl: database.url }));
  db = conn.db as unknown as Kysely<unknown>;
  await migrateTo(BEFORE);
  for (const [i, country] of ['Peru', 'peru', 'Brazil', 'Chile'].entries()) await addUser(`Name${i % 2}`, 30 + (i % 2), country);
  await sql`update users set age = 31 where first_name = 'Name0'`.execute(db);
  await sql`insert into artists (name, name_key, image) values ('A', ${collationKey('A')}, 'https://img.example.com/a.jpg')`.execute(db);
});
afterAll(async () => {
  await conn.close();
  await database.drop();
});

describe('migration 20261126T0300 on PostgreSQL', () => {
  it('keeps versions increasing and counts exact up, down and up again, with writes and folds in between', async () => {
    const before = await oldVersions();
    expect(before.users).toBeGreaterThan(1);
    expect(await summaries()).toEqual(await counted());

    await migrateTo(AFTER);
    expect(await relkind('table_versions')).toBeUndefined();
    expect([await relkind('users_counts'), await relkind('users_name_counts')]).toEqual(['v', 'v']);
    expect(Number((await sql<{ n: string }>`select count(*) as n from table_version_slots`.execute(db)).rows[0]!.n)).toBe(64);
    expect(await newVersions()).toEqual(before);
    expect(await summaries()).toEqual(await counted());

    // A write statement: its table's version one more, its summary rows appended to the deltas.
    await addUser('Name9', 44, 'Uruguay');
    await sql`update users set age = 45 where first_name = 'Name1'`.execute(db);
    expect(await newVersions()).toEqual({ ...before, users: before.users! + 2 });
    const deltas = await sql<{ n: string }>`select (select count(*) from users_counts_delta) + (select count(*) from users_name_counts_delta) as n`.execute(db);
    expect(Number(deltas.rows[0]!.n)).toBeGreaterThan(0);
    expect(await summaries()).toEqual(await counted());

    // One folder at a time: while another holds the lock, a fold does nothing.
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    try {
      await other.query('begin');
      await other.query('select pg_advisory_xact_lock(3200032, hashtext(current_schema()))');
      expect(await foldSummaries(db)).toBeUndefined();
      await other.query('rollback');
    } finally {
      await other.end();
    }
    expect(await foldSummaries(db)).toBeGreaterThan(0);
    const { rows: left } = await sql<{
      n: string;
    }>`select (select count(*) from users_counts_delta) + (select count(*) from users_name_counts_delta) as n`.execute(db);
    expect(Number(left[0]!.n)).toBe(0);
    expect(await newVersions()).toEqual({ ...before, users: before.users! + 2 }); // folding is no write
    expect(await summaries()).toEqual(await counted());

    // Down, with a delta not folded yet: the old tables, their sums, their triggers.
    await sql`delete from users where first_name = 'Name9'`.execute(db);
    const atDown = await newVersions();
    await migrateTo(BEFORE);
    expect(await relkind('table_version_slots')).toBeUndefined();
    expect([await relkind('users_counts'), await relkind('users_name_counts'), await relkind('users_counts_delta')]).toEqual(['r', 'r', undefined]);
    expect(await oldVersions()).toEqual(atDown);
    expect(await summaries()).toEqual(await counted());
    await addUser('Name7', 50, 'Peru');
    expect(await oldVersions()).toEqual({ ...atDown, users: atDown.users! + 1 });
    expect(await summaries()).toEqual(await counted());

    // And up again.
    const atUp = await oldVersions();
    await migrateTo(AFTER);
    expect(await newVersions()).toEqual(atUp);
    await sql`update users set country = 'Chile', country_key = ${collationKey('Chile')}, country_fold = ${fold('Chile')} where first_name = 'Name7'`.execute(
      db,
    );
    await sql`insert into songs (album_id, name, name_key, time) select 1, 'S', ${collationKey('S')}, '03:00' where false`.execute(db);
    expect(await newVersions()).toEqual({ ...atUp, users: atUp.users! + 1, songs: atUp.songs! + 1 });
    expect(await summaries()).toEqual(await counted());
  });
});
