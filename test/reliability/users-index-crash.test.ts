import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { makeConfig } from '../../src/config.js';
import { backend, freshDatabase, type TestDatabase } from '../database.js';
import { startServerProcess, type ServerProcess } from '../process.js';

// The users index across processes (issue 37): two instances of the built service on one database,
// each with its index, and an in-process app without it (SQL) as the reference. A write acknowledged
// by one instance is in the next list the other answers (the change feed, read before each list).
// Then one instance is killed (SIGKILL) while writers are being acknowledged; restarted, its index is
// loaded again and answers as SQL does, and so does the other one's, which saw the writes only through
// the feed.

const TOKEN = 'users-index-crash-admin-token-0123456789';
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const LISTS = [
  '/users?sort=first_name,age:desc&size=50',
  '/users?status=active&sort=age:desc&page=2&size=20',
  '/users?lives_in=[brazil,chile]&older_than=30&sort=country:desc,last_name',
  '/users?younger_than=40&sort=status,first_name:desc&offset=7&limit=13',
  '/users?sort=last_name:desc&pagesize=100&page=1',
  '/users?status=inactive&sort=id:desc&size=100',
];
const COUNTRIES = ['Brazil', 'brazil', 'Chile', 'México', 'Japan'];
const NAMES = ['Ana', 'ana', 'Ána', 'Bo', 'Zoë', 'Émile'];

let database: TestDatabase;
let reference: FastifyInstance;
const servers: ServerProcess[] = [];

/** Starts an instance with its index on, resolved once its index says it is ready (its log line). */
async function instance(): Promise<ServerProcess> {
  const srv = await startServerProcess({
    DATABASE_URL: database.url,
    CATALOGUE_ADMIN_TOKEN: TOKEN,
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'info',
    WORKERS: '1',
  });
  servers.push(srv);
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (srv.stdout().includes('users index ready')) resolve();
      else if (srv.stdout().includes('users index: load failed')) reject(new Error(srv.stdout()));
    };
    srv.child.stdout!.on('data', check);
    check();
  });
  return srv;
}

let n = 0;
const user = () => ({
  first_name: NAMES[n % NAMES.length]!,
  last_name: `L${n % 7}`,
  email: `u${n++}@example.com`,
  age: (n * 37) % 90,
  status: n % 3 === 0 ? 'inactive' : 'active',
  country: COUNTRIES[n % COUNTRIES.length]!,
});

async function send(srv: ServerProcess, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${srv.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

/** What a list answers: status, total, links and body. */
async function answer(srv: ServerProcess | FastifyInstance, url: string) {
  if ('inject' in srv) {
    const res = await srv.inject({ method: 'GET', url, headers });
    return { status: res.statusCode, total: res.headers['x-total-count'], link: res.headers.link, body: res.body };
  }
  const res = await fetch(`${srv.url}${url}`, { headers });
  return { status: res.status, total: res.headers.get('x-total-count') ?? undefined, link: res.headers.get('link') ?? undefined, body: await res.text() };
}

async function answeredByIndex(srv: ServerProcess): Promise<number> {
  const text = await (await fetch(`${srv.url}/metrics`, { headers })).text();
  return Number(/^users_index_lists_total\{by="index"\} (\d+)/m.exec(text)?.[1] ?? 0);
}

beforeAll(async () => {
  database = await freshDatabase();
  // The reference migrates the database first, and answers every list by SQL.
  reference = await buildApp(makeConfig({ databaseUrl: database.url, logLevel: 'silent', adminToken: TOKEN, rateLimitPerMinute: 0, usersIndex: false }));
  await reference.ready();
  const res = await reference.inject({ method: 'POST', url: '/users', headers, payload: Array.from({ length: 100 }, user) });
  expect(res.statusCode).toBe(201);
}, 120_000);
afterAll(async () => {
  for (const srv of servers) if (srv.child.exitCode === null && srv.child.signalCode === null) srv.child.kill('SIGKILL');
  await Promise.all(servers.map((s) => s.exited));
  await reference?.close();
  await database?.drop();
});

describe(`users index across instances and a SIGKILL (${backend})`, () => {
  it('a write acknowledged by one instance is in the next list the other answers, and after a SIGKILL and restart both answer as SQL', async () => {
    const a = await instance();
    const b = await instance();
    const indexedBefore = await answeredByIndex(b);

    // Read-your-writes across instances: write through one, list through the other at once.
    const ids: number[] = [];
    for (let i = 0; i < 30; i++) {
      const [writer, reader] = i % 2 === 0 ? [a, b] : [b, a];
      const kind = i % 3;
      let res: Response;
      if (kind === 0 || ids.length < 3) res = await send(writer, 'POST', '/users', user());
      else if (kind === 1)
        res = await send(writer, 'PATCH', `/users/${ids[i % ids.length]}`, { age: i, status: i % 2 ? 'active' : 'inactive', country: COUNTRIES[i % 5] });
      else res = await send(writer, 'DELETE', `/users/${ids.splice(i % ids.length, 1)[0]}`);
      expect(res.status).toBeLessThan(300);
      if (res.status === 201) ids.push(((await res.json()) as { id: number }).id);
      for (const url of LISTS) expect(await answer(reader, url), `${url} after write ${i}`).toEqual(await answer(reference, url));
    }
    expect(await answeredByIndex(b)).toBeGreaterThan(indexedBefore);

    // Writers acknowledged by `a` while it is killed.
    const acked: number[] = [];
    const writing = (async () => {
      for (;;) {
        try {
          const res = await send(a, 'POST', '/users', [user(), user()]);
          if (res.status !== 201) return;
          acked.push(...((await res.json()) as { id: number }[]).map((u) => u.id));
        } catch {
          return; // the kill
        }
      }
    })();
    // Kill once some writes have been acknowledged (the writer's own progress, not a clock).
    await new Promise<void>((resolve) => {
      const poll = () => (acked.length >= 20 ? resolve() : setImmediate(poll));
      poll();
    });
    a.child.kill('SIGKILL');
    await a.exited;
    await writing;

    const restarted = await instance();
    for (const srv of [restarted, b]) for (const url of LISTS) expect(await answer(srv, url), url).toEqual(await answer(reference, url));
    const all = await answer(b, '/users?sort=id:desc&size=100');
    const shown = (JSON.parse(all.body) as { id: number }[]).map((u) => u.id);
    for (const id of acked.slice(-10)) expect(shown).toContain(id);
  }, 180_000);
});
