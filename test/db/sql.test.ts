import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { makeConfig } from '../../src/config.js';
import { connect, type Connection } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { storedName } from '../../src/db/collation.js';
import { binaryOrder } from '../../src/db/sql.js';
import { countTokens } from '../../src/modules/tokens/tokens.repository.js';
import { backend, freshDatabase, type TestDatabase } from '../database.js';

// Runs on both backends with the same expectations: names are ordered by their collation keys
// (src/db/collation.ts), compared by code point on both (collation "binary" on PostgreSQL).

let database: TestDatabase;
let conn: Connection;

// Inserted in this order (ids 1..n), with their keys as every writer stores them.
const NAMES = ['beta', 'Alpha', 'alpha', 'Émile', 'zoe', 'ALPHA', 'Zed', 'bravo', '10cc', 'a b', 'a-b', 'éclair', '_under', 'Emile', 'E\u0301mile'];

beforeAll(async () => {
  database = await freshDatabase();
  conn = connect(makeConfig({ databaseUrl: database.url }));
  await migrateToLatest(conn.db);
  for (const name of NAMES)
    await conn.db
      .insertInto('artists')
      .values({ ...storedName(name), image: 'https://img.example.com/x.jpg' })
      .execute();
});
afterAll(async () => {
  await conn.close();
  await database.drop();
});

describe(`collation keys on ${backend}`, () => {
  it('sort names as people read them: accents and case ignored first, then the exact text, then id', async () => {
    const rows = await conn.db.selectFrom('artists').select(['id', 'name']).orderBy('name_key').orderBy('id').execute();
    // Spaces and symbols before digits before letters; Émile stored twice (composed, decomposed: one text), ties by id.
    expect(rows.map((r) => r.name)).toEqual([
      '_under',
      '10cc',
      'a b',
      'a-b',
      'ALPHA',
      'Alpha',
      'alpha',
      'beta',
      'bravo',
      'éclair',
      'Emile',
      'Émile',
      'Émile',
      'Zed',
      'zoe',
    ]);
    const emile = rows.filter((r) => r.name === 'Émile').map((r) => r.id);
    expect(emile).toEqual([4, 15]);
  });

  it('sort descending as the exact reverse key order', async () => {
    const rows = await conn.db.selectFrom('artists').select('name').orderBy('name_key', 'desc').orderBy('id').execute();
    expect(rows.map((r) => r.name).slice(0, 4)).toEqual(['zoe', 'Zed', 'Émile', 'Émile']);
  });

  it('compare keys by code point in SQL as in JavaScript', async () => {
    const rows = await conn.db.selectFrom('artists').select('name_key').orderBy('name_key').execute();
    const keys = rows.map((r) => r.name_key);
    expect(keys).toEqual([...keys].sort(binaryOrder));
  });

  it('refuse a name written without its key, or renamed without it (the service is the writer of keys)', async () => {
    await expect(sql`insert into artists (name, image) values ('Hand Written', 'https://img.example.com/x.jpg')`.execute(conn.db)).rejects.toThrow();
    await expect(sql`update artists set name = 'Renamed By Hand' where id = 1`.execute(conn.db)).rejects.toThrow();
    // A key that is another name's.
    const other = storedName('Other');
    await expect(conn.db.updateTable('artists').set({ name: 'Renamed', name_key: other.name_key }).where('id', '=', 1).execute()).rejects.toThrow();
    expect((await conn.db.selectFrom('artists').select('name').where('id', '=', 1).executeTakeFirstOrThrow()).name).toBe('beta');
    // With its key, a hand-written rename is taken.
    await conn.db.updateTable('artists').set(storedName('Beta')).where('id', '=', 1).execute();
    expect((await conn.db.selectFrom('artists').select('name').where('id', '=', 1).executeTakeFirstOrThrow()).name).toBe('Beta');
  });
});

describe(`numbers from ${backend}`, () => {
  it('returns counts and ids as JS numbers, not strings', async () => {
    expect(await countTokens(conn.db)).toBe(0);
    const count = await conn.db
      .selectFrom('artists')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(count.n).toBe(NAMES.length);
    const inserted = await conn.db
      .insertInto('artists')
      .values({ ...storedName('n'), image: 'https://img.example.com/n.jpg' })
      .returning('id')
      .executeTakeFirstOrThrow();
    // (A PostgreSQL identity moves for the refused inserts above too.)
    expect(typeof inserted.id).toBe('number');
    expect(inserted.id).toBeGreaterThan(NAMES.length);
  });
});
