import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConfig } from '../../src/config.js';
import { connect, type Connection } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { asciiLower, ciEquals, ciIn, ciKey } from '../../src/db/sql.js';
import { countTokens } from '../../src/modules/tokens/tokens.repository.js';
import { backend, freshDatabase, type TestDatabase } from '../database.js';

// Runs on both backends with the same expectations: that is the point of these helpers.

let database: TestDatabase;
let conn: Connection;

// Inserted in this order (ids 1..n); the expected orders below are the definition in src/db/sql.ts.
const NAMES = ['beta', 'Alpha', 'alpha', 'Émile', 'zoe', 'ALPHA', 'Zed', 'bravo', '10cc', 'a b', 'a-b', 'éclair', '_under'];

beforeAll(async () => {
  database = await freshDatabase();
  conn = connect(makeConfig({ databaseUrl: database.url }));
  await migrateToLatest(conn.db);
  for (const name of NAMES) await conn.db.insertInto('artists').values({ name, image: 'https://img.example.com/x.jpg' }).execute();
});
afterAll(async () => {
  await conn.close();
  await database.drop();
});

describe(`ciKey on ${backend}`, () => {
  it('sorts a to z ignoring ASCII case, then by code point, ties broken by id', async () => {
    const rows = await conn.db.selectFrom('artists').select(['id', 'name']).orderBy(ciKey('name')).orderBy('id').execute();
    expect(rows.map((r) => r.name)).toEqual(['10cc', '_under', 'a b', 'a-b', 'Alpha', 'alpha', 'ALPHA', 'beta', 'bravo', 'Zed', 'zoe', 'Émile', 'éclair']);
  });

  it('sorts descending as the exact reverse key order', async () => {
    const rows = await conn.db.selectFrom('artists').select('name').orderBy(ciKey('name'), 'desc').orderBy('id').execute();
    expect(rows.map((r) => r.name).slice(0, 4)).toEqual(['éclair', 'Émile', 'zoe', 'Zed']);
  });
});

describe(`ciEquals / ciIn on ${backend}`, () => {
  it('matches ASCII case variants and nothing else', async () => {
    const rows = await conn.db.selectFrom('artists').select('name').where(ciEquals('name', 'aLpHa')).orderBy('id').execute();
    expect(rows.map((r) => r.name)).toEqual(['Alpha', 'alpha', 'ALPHA']);
  });

  it('does not fold non-ASCII letters, on either backend', async () => {
    const rows = await conn.db.selectFrom('artists').select('name').where(ciEquals('name', 'émile')).execute();
    expect(rows).toEqual([]);
  });

  it('matches any of a list, and an empty list matches nothing', async () => {
    const rows = await conn.db
      .selectFrom('artists')
      .select('name')
      .where(ciIn('name', ['ZOE', 'Bravo']))
      .orderBy('id')
      .execute();
    expect(rows.map((r) => r.name)).toEqual(['zoe', 'bravo']);
    expect(await conn.db.selectFrom('artists').select('name').where(ciIn('name', [])).execute()).toEqual([]);
  });

  it('treats the value as a parameter, not SQL', async () => {
    const rows = await conn.db.selectFrom('artists').select('name').where(ciEquals('name', "x' or '1'='1")).execute();
    expect(rows).toEqual([]);
  });
});

describe('asciiLower', () => {
  it('folds A-Z only', () => {
    expect(asciiLower('ÉMILE Zoë ABC')).toBe('Émile zoë abc');
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
      .values({ name: 'n', image: 'https://img.example.com/n.jpg' })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(inserted.id).toBe(NAMES.length + 1);
  });
});
