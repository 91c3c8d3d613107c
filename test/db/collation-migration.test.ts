import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Migrator, sql, type Kysely } from 'kysely';
import { makeConfig } from '../../src/config.js';
import { connect, type Connection } from '../../src/db/connect.js';
import { migrations } from '../../src/db/migrations/index.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { isPostgres } from '../../src/db/dialect.js';
import { collationKey, fold } from '../../src/db/collation.js';
import { search } from '../../src/modules/search/search.repository.js';
import { backend, freshDatabase, type TestDatabase } from '../database.js';

// Migration 20261126T0100 on a catalogue written before it: every existing row gets its keys and its
// names in NFC, the summaries are counted again from them, the search index holds the folds, and none
// of it is an event (the same text). Down and up again leave the same data.

const BEFORE = '20261124T1200_users_indexes_include_columns';
const AFTER = '20261126T0100_collation_keys';

let database: TestDatabase;
let conn: Connection;
let db: Kysely<unknown>;

async function migrator(): Promise<Migrator> {
  const schema = isPostgres(db) ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]!.s : undefined;
  return new Migrator({ db, provider: { getMigrations: async () => migrations }, migrationTableSchema: schema });
}

const ARTISTS = ['Vini\u0301cius Cantua\u0301ria', 'Vinicius de Moraes', 'Barão Vermelho', 'Barry Wordsworth', 'Mo\u0308tley Cru\u0308e'];
const USERS = [
  ['João', 'Mu\u0308ller', 'México'],
  ['Joao', 'Muller', 'mexico'],
  ['ana', 'Silva', 'Brazil'],
];

beforeAll(async () => {
  database = await freshDatabase();
  conn = connect(makeConfig({ databaseUrl: database.url }));
  db = conn.db as unknown as Kysely<unknown>;
  const { error } = await (await migrator()).migrateTo(BEFORE);
  if (error) throw error instanceof Error ? error : new Error(`migrating to ${BEFORE} failed`, { cause: error });
  // Written before keys existed, some decomposed: as an older service (or a psql session) left them.
  for (const [i, name] of ARTISTS.entries()) {
    await sql`insert into artists (name, image) values (${name}, 'https://img.example.com/a.jpg')`.execute(db);
    await sql`insert into albums (artist_id, name, year, image) values (${i + 1}, ${name}, 2000, 'https://img.example.com/a.jpg')`.execute(db);
    await sql`insert into songs (album_id, name, time) values (${i + 1}, ${name}, '03:00')`.execute(db);
  }
  for (const [i, [first, last, country]] of USERS.entries()) {
    await sql`insert into users (first_name, last_name, email, age, status, country) values (${first}, ${last}, ${`m${i}@example.com`}, 30, 'active', ${country})`.execute(
      db,
    );
  }
});
afterAll(async () => {
  await conn.close();
  await database.drop();
});

async function events(): Promise<number> {
  return Number((await sql<{ n: number }>`select count(*) as n from events`.execute(db)).rows[0]!.n);
}

async function checkMigrated(): Promise<void> {
  for (const table of ['artists', 'albums', 'songs']) {
    const { rows } = await sql<{ name: string; name_key: string }>`select name, name_key from ${sql.table(table)} order by id`.execute(db);
    expect(rows.map((r) => r.name)).toEqual(ARTISTS.map((n) => n.normalize('NFC')));
    expect(rows.map((r) => r.name_key)).toEqual(ARTISTS.map((n) => collationKey(n.normalize('NFC'))));
  }
  const { rows: users } = await sql<Record<string, string>>`select * from users order by id`.execute(db);
  expect(users.map((u) => [u.first_name, u.last_name, u.country])).toEqual(USERS.map((u) => u.map((t) => t.normalize('NFC'))));
  for (const u of users) {
    expect([u.first_name_key, u.last_name_key, u.country_key, u.country_fold]).toEqual([
      collationKey(u.first_name!),
      collationKey(u.last_name!),
      collationKey(u.country!),
      fold(u.country!),
    ]);
  }
  const { rows: counts } = await sql<{ country_fold: string; country_key: string; n: number }>`
    select country_fold, country_key, n from users_counts order by country_key`.execute(db);
  expect(counts.map((c) => [c.country_fold, c.country_key, Number(c.n)])).toEqual([
    ['brazil', collationKey('Brazil'), 1],
    ['mexico', collationKey('México'), 1],
    ['mexico', collationKey('mexico'), 1],
  ]);
  const { rows: names } = await sql<{ name: string; n: number }>`select name, n from users_name_counts where field = 'last_name' order by name`.execute(db);
  expect(names.map((r) => [r.name, Number(r.n)])).toEqual([
    [collationKey('Muller'), 1],
    [collationKey('Müller'), 1],
    [collationKey('Silva'), 1],
  ]);
  // The search index holds the folds: typing without accents finds them, on both backends.
  const found = await search(conn.db, ['vinicius'], 20, 0);
  expect(found.total).toBe(6);
  expect((await search(conn.db, ['motley', 'crue'], 20, 0)).hits.map((h) => h.kind)).toEqual(['artist', 'album', 'song']);
}

describe(`migration ${AFTER} on ${backend}`, () => {
  it('fills every existing row’s keys and NFC names, recounts the summaries and the search index, and records no event', async () => {
    const before = await events();
    expect(before).toBeGreaterThan(0);
    await migrateToLatest(conn.db);
    await checkMigrated();
    expect(await events()).toBe(before);
  });

  it('goes down to the folded columns and up again to the same data', async () => {
    const m = await migrator();
    const down = await m.migrateTo(BEFORE);
    expect(down.error).toBeUndefined();
    const { rows } = await sql<Record<string, unknown>>`select * from artists order by id`.execute(db);
    expect(Object.keys(rows[0]!)).not.toContain('name_key');
    const { rows: counted } = await sql<{ country: string; n: number }>`select country, n from users_counts order by country`.execute(db);
    expect(counted.map((r) => [r.country, Number(r.n)])).toEqual([
      ['brazil', 1],
      ['mexico', 1],
      ['méxico', 1],
    ]);
    // The old triggers count a write again.
    await sql`insert into users (first_name, last_name, email, age, status, country) values ('Eva', 'Lima', 'eva@example.com', 31, 'active', 'BRAZIL')`.execute(
      db,
    );
    expect(Number((await sql<{ n: number }>`select sum(n) as n from users_counts where country = 'brazil'`.execute(db)).rows[0]!.n)).toBe(2);
    await sql`delete from users where email = 'eva@example.com'`.execute(db);
    const up = await m.migrateTo(AFTER);
    expect(up.error).toBeUndefined();
    await checkMigrated();
  });
});
