import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, type Client, type TestContext } from '../helpers.js';
import { seedUsers } from './fixtures.js';

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
      const insert = other.prepare('insert into users (first_name, last_name, email, age, status, country) values (?, ?, ?, ?, ?, ?)');
      insert.run('P', 'Q', 'p1@example.com', 20, 'active', 'Peru');
      insert.run('R', 'S', 'p2@example.com', 21, 'active', 'peru');
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
      const insert = 'insert into users (first_name, last_name, email, age, status, country) values ($1, $2, $3, $4, $5, $6)';
      await other.query(insert, ['P', 'Q', 'other-instance-1@example.com', 20, 'active', 'Uruguay']);
      await other.query(insert, ['R', 'S', 'other-instance-2@example.com', 21, 'active', 'URUGUAY']);
    } finally {
      await other.end();
    }
    expect(await total(url)).toBe('2');
  });
});
