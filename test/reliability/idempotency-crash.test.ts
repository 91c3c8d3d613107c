import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { backend, freshDatabase, postgresServerUrl, type TestDatabase } from '../database.js';
import { deferred } from '../helpers.js';
import { startServerProcess, type ServerProcess } from '../process.js';

// An Idempotency-Key reserved by a request that then dies with its process (SIGKILL) must not block
// the client's retry: on a restarted process the retry replays the stored answer or runs anew, and
// never ends in 409 "still being processed". Runs against the real server process on both backends.

const TOKEN = 'idem-crash-admin-token-0123456789';
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
let database: TestDatabase;
let env: Record<string, string>;

beforeAll(async () => {
  database = await freshDatabase();
  // A short lease, so a retry does not wait the default 45 s for the dead request's to lapse.
  env = { DATABASE_URL: database.url, CATALOGUE_ADMIN_TOKEN: TOKEN, RATE_LIMIT_PER_MINUTE: '0', IDEMPOTENCY_LEASE_SECONDS: '2' };
});
afterAll(() => database.drop());

interface Sent {
  key: string;
  body: string;
  answer?: { id: number };
}

const post = (srv: ServerProcess, sent: Sent) =>
  fetch(`${srv.url}/artists`, { method: 'POST', headers: { ...headers, 'idempotency-key': sent.key }, body: sent.body });

/** Sends keyed POSTs one after another until the server stops answering; `onAnswer` after each 201. */
async function writer(srv: ServerProcess, n: number, sent: Sent[], onAnswer: () => void): Promise<void> {
  for (let i = 0; ; i++) {
    const entry: Sent = { key: `w${n}-${i}`, body: JSON.stringify({ name: `writer ${n} #${i}`, image: 'https://img.example.com/w.jpg' }) };
    sent.push(entry);
    try {
      const res = await post(srv, entry);
      if (res.status !== 201) return;
      entry.answer = (await res.json()) as { id: number };
      onAnswer();
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

describe('Idempotency-Key across a SIGKILL', () => {
  it('lets every retry on the restarted process replay or run, never 409', async () => {
    const first = await startServerProcess(env);
    const sent: Sent[] = [];
    // The kill comes once 80 writes are answered; if the writers stop before that, the test says so.
    const enough = deferred();
    const writers = Array.from({ length: 8 }, (_, n) => writer(first, n, sent, () => sent.filter((s) => s.answer).length >= 80 && enough.resolve()));
    const stopped = Promise.all(writers).then(() => {
      throw new Error(`the writers stopped after ${sent.filter((s) => s.answer).length} answers: ${first.stdout().slice(-2000)}${first.stderr().slice(-2000)}`);
    });
    await Promise.race([enough.promise, stopped]);
    stopped.catch(() => {}); // they stop after the kill too: that is the point
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    await Promise.all(writers);

    const second = await startServerProcess(env);
    try {
      await expectRetriesSettle(second, sent);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  }, 60_000);

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
        const entry: Sent = { key: 'locked-1', body: JSON.stringify({ name: 'Locked out', image: 'https://img.example.com/l.jpg' }) };
        const pending = post(first, entry).then(
          (res) => res.status,
          () => 'connection lost',
        );
        // The event: the reservation is stored and the service's INSERT waits on our lock.
        for (;;) {
          const { rows } = await locker.query<{ n: number }>(
            `select (select count(*)::int from ${schema}.idempotency_keys where key = 'locked-1' and status is null)
                * (select count(*)::int from pg_locks l join pg_class c on c.oid = l.relation
                   where c.relname = 'artists' and c.relnamespace = '${schema}'::regnamespace and not l.granted) as n`,
          );
          if (rows[0]!.n > 0) break;
          await new Promise((r) => setTimeout(r, 10));
        }
        first.child.kill('SIGKILL');
        expect(await first.exited).toBe('SIGKILL');
        expect(await pending).toBe('connection lost');
        await locker.query('rollback');

        second = await startServerProcess(env);
        await expectRetriesSettle(second, [entry]);
      } finally {
        if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
        if (second) {
          second.child.kill('SIGTERM');
          await second.exited;
        }
        await locker.end();
      }
    },
    60_000,
  );
});
