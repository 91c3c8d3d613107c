import { afterAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { seed } from '../../src/cli/seed.js';
import { exportCommand } from '../../src/cli/export.js';
import { buildApp } from '../../src/app.js';
import { makeConfig } from '../../src/config.js';
import { indexDefinitions } from '../../src/db/indexes.js';
import { collationKey, fold } from '../../src/db/collation.js';
import { freshDatabase, type TestDatabase } from '../database.js';
import { ADMIN_TOKEN } from '../helpers.js';
import { cliIo } from './io.js';

// `music-catalogue seed --users N` on the backend under test, checked through the API.

const opened: { app: FastifyInstance; database: TestDatabase }[] = [];
afterAll(async () => {
  for (const { app, database } of opened) {
    await app.close();
    await database.drop();
  }
});

async function seeded(args: string[]) {
  const database = await freshDatabase();
  const io = cliIo({ databaseUrl: database.url });
  expect(await seed.run(args, io.ctx)).toBe(0);
  expect(io.stdout()).toBe('');
  expect(io.stderr()).toMatch(/\nseeded \d+ rows in \d+\.\d+s\n$/); // progress lines, then the summary
  const app = await buildApp(makeConfig({ databaseUrl: database.url, logLevel: 'silent', adminToken: ADMIN_TOKEN, rateLimitPerMinute: 0 }));
  opened.push({ app, database });
  const get = (url: string): Promise<LightMyRequestResponse> => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return { app, database, get };
}

interface User {
  id: number;
  first_name: string;
  last_name: string;
  email: string;
  age: number;
  status: string;
  country: string;
}

async function allUsers(get: (url: string) => Promise<LightMyRequestResponse>, total: number): Promise<User[]> {
  const users: User[] = [];
  for (let page = 1; users.length < total; page++) {
    const res = await get(`/users?page=${page}&size=100`);
    expect(res.statusCode).toBe(200);
    users.push(...res.json<User[]>());
  }
  return users;
}

describe('music-catalogue seed --users', () => {
  it('creates the chosen number of users, valid by the API rules, with unique emails and the indexes in place', async () => {
    const { app, get } = await seeded(['--users', '250', '--artists', '0']);
    const res = await get('/users?size=1');
    expect(res.headers['x-total-count']).toBe('250');
    const users = await allUsers(get, 250);
    expect(users.map((u) => u.id)).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
    expect(new Set(users.map((u) => u.email.toLowerCase())).size).toBe(250);
    for (const u of users) {
      expect(u.email).toMatch(/^[a-z.]+\.\d+@example\.com$/);
      expect(u.first_name.length).toBeGreaterThan(0);
      expect(u.last_name.length).toBeGreaterThan(0);
      expect(u.age).toBeGreaterThanOrEqual(0);
      expect(u.age).toBeLessThanOrEqual(150);
      expect(['active', 'inactive']).toContain(u.status);
      expect(u.country.length).toBeGreaterThan(0);
    }
    // Names as people write them (pt-BR, es, fr, de, with accents), in NFC, each row with its own keys.
    expect(users.filter((u) => /\P{ASCII}/u.test(u.first_name + u.last_name)).length).toBeGreaterThan(100);
    expect(users.filter((u) => [u.first_name, u.last_name, u.country].some((t) => t !== t.normalize('NFC')))).toEqual([]);
    const stored = await app.db
      .selectFrom('users')
      .select(['first_name', 'last_name', 'country', 'first_name_key', 'last_name_key', 'country_key', 'country_fold'])
      .execute();
    const own = (r: (typeof stored)[number]) =>
      r.first_name_key === collationKey(r.first_name) &&
      r.last_name_key === collationKey(r.last_name) &&
      r.country_key === collationKey(r.country) &&
      r.country_fold === fold(r.country);
    expect(stored.filter((r) => !own(r))).toEqual([]);
    // Enough variety for the alias and the filters to select something, and not everything.
    const young = await get('/users/young-brazilians?size=100');
    expect(young.statusCode).toBe(200);
    const total = Number(young.headers['x-total-count']);
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThan(250);
    // The bulk load dropped and rebuilt the secondary indexes: they are all back, as migrated.
    const fresh = await freshDatabase();
    const reference = await buildApp(makeConfig({ databaseUrl: fresh.url, logLevel: 'silent', adminToken: ADMIN_TOKEN }));
    opened.push({ app: reference, database: fresh });
    const names = async (a: FastifyInstance) => (await indexDefinitions(a.db, 'users')).map((i) => i.name);
    expect(await names(app)).toEqual(await names(reference));
    expect((await names(app)).length).toBeGreaterThanOrEqual(6);
  });

  it('is deterministic, and adding users does not change the catalogue', async () => {
    const args = ['--users', '60', '--artists', '3', '--albums-per-artist', '2', '--songs-per-album', '2', '--seed', '7'];
    const a = await seeded(args);
    const b = await seeded(args);
    expect(await allUsers(b.get, 60)).toEqual(await allUsers(a.get, 60));
    const other = await seeded([...args.slice(0, -1), '8']);
    expect(await allUsers(other.get, 60)).not.toEqual(await allUsers(a.get, 60));
    const exported = async (url: string) => {
      const io = cliIo({ databaseUrl: url });
      expect(await exportCommand.run([], io.ctx)).toBe(0);
      return io.stdout();
    };
    const withoutUsers = await seeded(['--users', '0', ...args.slice(2)]);
    expect(await exported(withoutUsers.database.url)).toBe(await exported(a.database.url));
    expect((await withoutUsers.get('/users')).headers['x-total-count']).toBe('0');
  });

  it('with --force adds users after the existing ones, emails still unique', async () => {
    const { database, get } = await seeded(['--users', '40', '--artists', '0']);
    const io = cliIo({ databaseUrl: database.url });
    expect(await seed.run(['--users', '30', '--artists', '0'], io.ctx)).toBe(1);
    expect(io.stderr()).toContain('already has data (users); use --force');
    expect(await seed.run(['--users', '30', '--artists', '0', '--force'], cliIo({ databaseUrl: database.url }).ctx)).toBe(0);
    const users = await allUsers(get, 70);
    expect(users).toHaveLength(70);
    expect(new Set(users.map((u) => u.email)).size).toBe(70);
  });
});
