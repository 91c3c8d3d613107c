import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, watchPgStatements, type Client, type TestContext } from '../helpers.js';
import { collationKey, fold } from '../../src/db/collation.js';
import { seedUsers } from './fixtures.js';

/** The keys a users row carries beside its first name, last name and country. */
const keysOf = (first: string, last: string, country: string) => [collationKey(first), collationKey(last), collationKey(country), fold(country)];

// Totals are cached between writes; every write, through the API or by another connection, must
// show at once in X-Total-Count.

let ctx: TestContext;
let api: Client;

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.admin);
  await seedUsers(api);
});
afterAll(() => ctx.close());

const total = async (url: string) => (await api.get(url)).headers['x-total-count'];

describe('GET /users: X-Total-Count stays exact', () => {
  it('after a create, an update and a delete through the API', async () => {
    const url = '/users?status=active&size=1';
    expect(await total(url)).toBe('7');
    expect(await total(url)).toBe('7');
    const created = await api.post('/users', { first_name: 'Z', last_name: 'Z', email: 'z@example.com', age: 50, status: 'active', country: 'Peru' });
    expect(await total(url)).toBe('8');
    await api.patch(`/users/${created.json().id}`, { status: 'inactive' });
    expect(await total(url)).toBe('7');
    await api.delete(`/users/${created.json().id}`);
    expect(await total('/users?size=1')).toBe('9');
  });

  // SQLite: the other writer opens the file.
  it.runIf(process.env.TEST_BACKEND !== 'postgres')('after a commit by another connection (another process)', async () => {
    const url = '/users?lives_in=peru&size=1';
    expect(await total(url)).toBe('0');
    const other = new SQLite(ctx.config.databaseUrl.slice('sqlite:'.length));
    try {
      // A writer outside the service stores the names' keys too (src/db/collation.ts).
      const insert = other.prepare(
        'insert into users (first_name, last_name, email, age, status, country, first_name_key, last_name_key, country_key, country_fold) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      );
      insert.run('P', 'Q', 'p1@example.com', 20, 'active', 'Peru', ...keysOf('P', 'Q', 'Peru'));
      insert.run('R', 'S', 'p2@example.com', 21, 'active', 'peru', ...keysOf('R', 'S', 'peru'));
    } finally {
      other.close();
    }
    expect(await total(url)).toBe('2');
  });

  // PostgreSQL: another instance's commit moves the snapshot the cached totals are stamped with.
  it.runIf(process.env.TEST_BACKEND === 'postgres')('after a commit by another connection (another instance)', async () => {
    const url = '/users?lives_in=uruguay&size=1';
    expect(await total(url)).toBe('0');
    expect(await total(url)).toBe('0'); // now cached
    const other = new pg.Client({ connectionString: ctx.config.databaseUrl });
    await other.connect();
    try {
      const insert =
        'insert into users (first_name, last_name, email, age, status, country, first_name_key, last_name_key, country_key, country_fold) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)';
      await other.query(insert, ['P', 'Q', 'other-instance-1@example.com', 20, 'active', 'Uruguay', ...keysOf('P', 'Q', 'Uruguay')]);
      await other.query(insert, ['R', 'S', 'other-instance-2@example.com', 21, 'active', 'URUGUAY', ...keysOf('R', 'S', 'URUGUAY')]);
    } finally {
      await other.end();
    }
    expect(await total(url)).toBe('2');
  });
});

// PostgreSQL: a users list reads its page first, which says the version it read, and takes the total
// from the summary held at that version: one statement that reads the data, not a version check and then
// the page. After a write the summary is read again (the version moved).
describe.runIf(process.env.TEST_BACKEND === 'postgres')('GET /users on PostgreSQL: round trips', () => {
  // What the app's connections send (watchPgStatements), while `recording` is set.
  let own: TestContext;
  let ownApi: Client;
  let recording: string[] | undefined;
  let unwatch: (() => void) | undefined;

  beforeAll(async () => {
    unwatch = watchPgStatements((text, run) => {
      if (recording && /table_version|\busers\b|\busers_counts\b/.test(text)) recording.push(text);
      return run();
    });
    own = await buildTestApp();
    ownApi = client(own.app, own.tokens.admin);
    await seedUsers(ownApi);
  });
  afterAll(async () => {
    unwatch?.();
    await own.close();
  });

  /** The statements that read users' data (the page, the summary, a version) during `run`. */
  async function statementsDuring(run: () => Promise<void>): Promise<string[]> {
    recording = [];
    try {
      await run();
      return recording;
    } finally {
      recording = undefined;
    }
  }
  const count = async (url: string) => String((await ownApi.get(url)).json<unknown[]>().length);

  it('reads a list in one statement while the held summary is at the version the page read', async () => {
    expect((await ownApi.get('/users?status=active&size=2')).statusCode).toBe(200); // the summary is held from here
    let res = await ownApi.get('/users?status=inactive&older_than=20&sort=last_name:desc&page=2&size=2');
    const steady = await statementsDuring(async () => {
      res = await ownApi.get('/users?status=active&younger_than=90&sort=first_name:asc&page=1&size=3');
    });
    expect(res.statusCode).toBe(200);
    expect(steady, steady.join('\n')).toHaveLength(1);
    expect(res.headers['x-total-count']).toBe(await count('/users?status=active&younger_than=90&size=100'));

    const created = await ownApi.post('/users', { first_name: 'Y', last_name: 'Y', email: 'y-round@example.com', age: 30, status: 'active', country: 'Peru' });
    expect(created.statusCode).toBe(201);
    const after = await statementsDuring(async () => {
      res = await ownApi.get('/users?status=active&younger_than=90&sort=first_name:asc&page=1&size=3');
    });
    expect(after.length).toBeGreaterThan(1); // more than the version: the write is read (by SQL, or by the users index catching up)
    expect(res.headers['x-total-count']).toBe(await count('/users?status=active&younger_than=90&size=100'));
  });
});
