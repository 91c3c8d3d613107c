import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { makeConfig } from '../../src/config.js';
import { connect, type Connection } from '../../src/db/connect.js';
import type { Database } from '../../src/db/database.js';
import { backend, freshDatabase, postgresServerUrl, type TestDatabase } from '../database.js';
import { startServerProcess, type ServerProcess } from '../process.js';

// A key makes its effect happen once, whatever kills the process. Against the real server process on
// both backends: a request killed at any point (SIGKILL) leaves either its write together with its
// answer, or neither; on a restarted process the retry replays the one or runs once, never 409, and
// never writes a second time. Each test counts the rows every key made, in the database itself.

const TOKEN = 'idem-crash-admin-token-0123456789';
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
let database: TestDatabase;
let env: Record<string, string>;
/** The test's own connection to the service's database, to count rows (opened once the schema exists). */
let store: Connection | undefined;

beforeAll(async () => {
  database = await freshDatabase();
  // A short lease, so a retry does not wait the default 45 s for the dead request's to lapse.
  env = { DATABASE_URL: database.url, CATALOGUE_ADMIN_TOKEN: TOKEN, RATE_LIMIT_PER_MINUTE: '0', IDEMPOTENCY_LEASE_SECONDS: '2' };
});
afterAll(async () => {
  await store?.close();
  await database.drop();
});

const db = () =>
  (store ??= connect({
    databaseUrl: database.url,
    sqliteSynchronous: 'normal',
    pgPoolSize: 2,
    pgConnectTimeoutMs: 5000,
    pgPreparedStatements: false,
    pgIdleMs: 60_000,
  })).db;

async function stop(srv: ServerProcess) {
  srv.child.kill('SIGTERM');
  await srv.exited;
}

interface Sent {
  key: string;
  /** Unique to the key: the rows it made are counted by it. */
  name: string;
  body: string;
  answer?: { id: number };
}

const post = (srv: ServerProcess, sent: Sent) =>
  fetch(`${srv.url}/artists`, { method: 'POST', headers: { ...headers, 'idempotency-key': sent.key }, body: sent.body });

/** Sends keyed POSTs one after another until the server stops answering. */
async function writer(srv: ServerProcess, tag: string, sent: Sent[]): Promise<void> {
  for (let i = 0; ; i++) {
    const key = `${tag}-${i}`;
    const entry: Sent = { key, name: `crash ${key}`, body: JSON.stringify({ name: `crash ${key}`, image: 'https://img.example.com/w.jpg' }) };
    sent.push(entry);
    try {
      const res = await post(srv, entry);
      if (res.status !== 201) return;
      entry.answer = (await res.json()) as { id: number };
    } catch {
      return;
    }
  }
}

/** Retries every request with its key on `srv`: each must end in 201 and a second retry must replay it. */
async function expectRetriesSettle(srv: ServerProcess, sent: Sent[]) {
  await Promise.all(
    sent.map(async (entry) => {
      const retry = await post(srv, entry);
      expect(retry.status, `${entry.key}: ${retry.status}`).toBe(201);
      const answer = (await retry.json()) as { id: number; name: string };
      if (entry.answer) {
        expect(answer).toEqual(entry.answer);
        expect(retry.headers.get('idempotent-replayed')).toBe('true');
      }
      const again = await post(srv, entry);
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await again.json()).toEqual(answer);
    }),
  );
}

/** The keys that did not make exactly one artist, with how many they made. */
async function keysWithoutOneRow(sent: Sent[]): Promise<string[]> {
  const rows = await db()
    .selectFrom('artists')
    .select(['name', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('name', 'like', 'crash %')
    .groupBy('name')
    .execute();
  const made = new Map(rows.map((r) => [r.name, Number(r.n)]));
  return sent.filter((s) => made.get(s.name) !== 1).map((s) => `${s.key}: ${made.get(s.name) ?? 0} rows`);
}

async function artistCount(): Promise<number> {
  const { count } = await db()
    .selectFrom('artists')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** Resolves once the database holds `n` artists (or the writers stopped): a kill then comes right after a write committed. */
async function artistsReach(n: number, stopped: Promise<unknown>): Promise<void> {
  let over = false;
  void stopped.finally(() => (over = true));
  while (!over && (await artistCount()) < n) await nextTurn(); // the writers' answers come in meanwhile
}

describe('Idempotency-Key across a SIGKILL', () => {
  it('SIGKILLed at random points mid-stream, every key ends with exactly one row, and every retry replays or runs, never 409', async () => {
    const sent: Sent[] = [];
    let srv = await startServerProcess(env);
    try {
      // Rounds of eight writers; each round's kill is timed by the rows the writers have committed,
      // so it comes while writes are committing, not at a quiet moment.
      for (const [round, more] of [40, 70, 100].entries()) {
        const before = sent.length;
        const writers = Array.from({ length: 8 }, (_, n) => writer(srv, `r${round}w${n}`, sent));
        const stopped = Promise.all(writers);
        await artistsReach((await artistCount()) + more, stopped);
        if (sent.slice(before).filter((s) => s.answer).length === 0) {
          throw new Error(`round ${round}: the writers stopped before any answer: ${srv.stdout().slice(-2000)}${srv.stderr().slice(-2000)}`);
        }
        srv.child.kill('SIGKILL');
        expect(await srv.exited).toBe('SIGKILL');
        await stopped; // they stop after the kill: that is the point
        srv = await startServerProcess(env);
      }
      await expectRetriesSettle(srv, sent);
      expect(await keysWithoutOneRow(sent)).toEqual([]);
    } finally {
      await stop(srv);
    }
  });

  it.runIf(backend === 'postgres')(
    'after a SIGKILL while the write waited on a lock, the retry runs once the process is gone',
    async () => {
      const schema = database.schema!;
      const locker = new pg.Client({ connectionString: postgresServerUrl() });
      await locker.connect();
      const first = await startServerProcess(env);
      let second: ServerProcess | undefined;
      try {
        // The write will wait on this lock; the reservation (another table) goes through.
        await locker.query('begin');
        await locker.query(`lock table ${schema}.artists in share row exclusive mode`);
        const entry: Sent = {
          key: 'locked-1',
          name: 'crash locked-1',
          body: JSON.stringify({ name: 'crash locked-1', image: 'https://img.example.com/l.jpg' }),
        };
        const pending = post(first, entry).then(
          (res) => res.status,
          () => 'connection lost',
        );
        // The event: the reservation is stored and the service's INSERT waits on our lock (in the backend `waiting`).
        let waiting: number | undefined;
        while (waiting === undefined) {
          const { rows } = await locker.query<{ pid: number }>(
            `select l.pid from pg_locks l join pg_class c on c.oid = l.relation
             where c.relname = 'artists' and c.relnamespace = '${schema}'::regnamespace and not l.granted
               and exists (select 1 from ${schema}.idempotency_keys where key = 'locked-1' and status is null)`,
          );
          waiting = rows[0]?.pid;
          if (waiting === undefined) await new Promise((r) => setTimeout(r, 10));
        }
        first.child.kill('SIGKILL');
        expect(await first.exited).toBe('SIGKILL');
        expect(await pending).toBe('connection lost');
        await locker.query('rollback');
        // The event: the dead process's backend has ended, the INSERT it was waiting to run committed
        // or rolled back for good (it ran in the keyed write's transaction: rolled back).
        while ((await locker.query('select 1 from pg_stat_activity where pid = $1', [waiting])).rowCount! > 0) await new Promise((r) => setTimeout(r, 10));

        second = await startServerProcess(env);
        await expectRetriesSettle(second, [entry]);
        expect(await keysWithoutOneRow([entry])).toEqual([]);
      } finally {
        if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
        if (second) await stop(second);
        await locker.end();
      }
    },
    60_000,
  );
});

// The old gap, made certain: TEST_ONLY_KILL_AFTER_KEYED_WRITES=1 has the process SIGKILL itself right
// after its first keyed write committed, before the answer is sent. The write's answer must be stored
// in that same commit, so the retry on the restarted process replays it and writes nothing.

const image = 'https://img.example.com/k.jpg';

async function created(srv: ServerProcess, path: string, body: unknown): Promise<{ id: number }> {
  const res = await fetch(`${srv.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: number };
}

/** The ids of the rows of `table` whose `column` is `value`, in order. */
async function idsWhere(table: 'artists' | 'albums' | 'songs' | 'users', column: 'name' | 'last_name', value: string): Promise<number[]> {
  const rows = await db()
    .selectFrom(table as keyof Database)
    .select('id' as never)
    .where(column as never, '=', value as never)
    .orderBy('id' as never)
    .execute();
  return (rows as unknown as { id: number }[]).map((r) => Number(r.id));
}

interface KeyedRoute {
  /** Makes what the write needs (without a key, so it is not the write killed) and answers the URL to POST to. */
  prepare(srv: ServerProcess, tag: string): Promise<string>;
  /** The keyed request's body, its rows named by `tag`. */
  body(tag: string): unknown;
  /** The ids of the rows named by `tag`, counted in the database. */
  rows(tag: string): Promise<number[]>;
}

/** Every POST that takes an Idempotency-Key, by its OpenAPI path (checked against the document below). */
const KEYED_ROUTES: Record<string, KeyedRoute> = {
  '/artists': {
    prepare: async () => '/artists',
    body: (tag) => ({ name: tag, image }),
    rows: (tag) => idsWhere('artists', 'name', tag),
  },
  // An array: several rows in one INSERT, and one answer for all of them.
  '/artists/{artist_id}/albums': {
    prepare: async (srv, tag) => `/artists/${(await created(srv, '/artists', { name: `${tag} artist`, image })).id}/albums`,
    body: (tag) => [
      { name: tag, year: 2001, image },
      { name: tag, year: 2002, image },
    ],
    rows: (tag) => idsWhere('albums', 'name', tag),
  },
  // Unkeyed, this write shares its commit with concurrent ones (db/group-commit.ts, db/pg-batch.ts).
  '/artists/{artist_id}/albums/{album_id}/songs': {
    prepare: async (srv, tag) => {
      const artist = await created(srv, '/artists', { name: `${tag} artist`, image });
      const album = await created(srv, `/artists/${artist.id}/albums`, { name: `${tag} album`, year: 2000, image });
      return `/artists/${artist.id}/albums/${album.id}/songs`;
    },
    body: (tag) => ({ name: tag, time: '03:00' }),
    rows: (tag) => idsWhere('songs', 'name', tag),
  },
  // A second run of the write would not make a second row but meet the unique email (409).
  '/users': {
    prepare: async () => '/users',
    body: (tag) => ({ first_name: 'Keyed', last_name: tag, email: `${tag}@example.com`, age: 30, status: 'active', country: 'Chile' }),
    rows: (tag) => idsWhere('users', 'last_name', tag),
  },
};

describe('Idempotency-Key when the process dies right after the write committed', () => {
  it('the table below covers every POST that takes an Idempotency-Key', async () => {
    const app = await buildApp(makeConfig({ databaseUrl: 'sqlite::memory:', logLevel: 'silent' }));
    try {
      await app.ready();
      const doc = app.swagger() as { paths: Record<string, { post?: { parameters?: { name: string }[] } }> };
      const keyed = Object.entries(doc.paths)
        .filter(([, ops]) => ops.post?.parameters?.some((p) => p.name === 'idempotency-key'))
        .map(([path]) => path);
      expect(keyed.sort()).toEqual(Object.keys(KEYED_ROUTES).sort());
    } finally {
      await app.close();
    }
  });

  it.each(Object.keys(KEYED_ROUTES).map((path, i) => [path, i] as const))(
    'POST %s: the retry replays the answer stored with the write, and writes nothing more',
    async (path, i) => {
      const route = KEYED_ROUTES[path]!;
      const tag = `killed-${i}`;
      const first = await startServerProcess({ ...env, TEST_ONLY_KILL_AFTER_KEYED_WRITES: '1' });
      let second: ServerProcess | undefined;
      try {
        const url = await route.prepare(first, tag);
        const send = (srv: ServerProcess) =>
          fetch(`${srv.url}${url}`, { method: 'POST', headers: { ...headers, 'idempotency-key': tag }, body: JSON.stringify(route.body(tag)) });
        await expect(send(first)).rejects.toThrow(); // no answer: the process died first
        expect(await first.exited).toBe('SIGKILL');
        const written = await route.rows(tag);
        expect(written.length).toBeGreaterThan(0); // the write had committed

        second = await startServerProcess(env);
        const retry = await send(second);
        const answer = await retry.text();
        expect(retry.status, answer).toBe(201);
        expect(await route.rows(tag)).toEqual(written); // nothing written again
        expect(retry.headers.get('idempotent-replayed')).toBe('true');
        const items = JSON.parse(answer) as { id: number } | { id: number }[];
        expect((Array.isArray(items) ? items : [items]).map((r) => r.id)).toEqual(written);
        if (!Array.isArray(items)) expect(retry.headers.get('location')).toBe(`${url}/${items.id}`);
        const again = await send(second);
        expect(again.status).toBe(201);
        expect(await again.text()).toBe(answer);
        expect(again.headers.get('location')).toBe(retry.headers.get('location'));
      } finally {
        if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
        if (second) await stop(second);
      }
    },
    60_000,
  );
});
