import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import SQLite from 'better-sqlite3';
import { ADMIN_TOKEN, buildTestApp, type TestContext } from '../helpers.js';
import { backend } from '../database.js';
import type { CheckpointRun } from '../../src/db/wal-checkpoint.js';

// SQLite's WAL checkpoint runs off the request path (src/db/wal-checkpoint.ts): a connection that
// serves no request checkpoints the WAL, and the serving connection's own autocheckpoint is only a
// far-off safety net, so no request's commit copies the WAL into the database file. Through a real
// SQLite file and HTTP writes; synchronised on the checkpointer's runs, never on time.

// Under the serving connections' own bound (10,000 pages) with room: a PATCH of the age commits about
// five pages since migration 20261127T0340 (users_country_status_age holds the age), and 2,000 of them
// passed it.
const WRITES = 1_200;

describe.skipIf(backend !== 'sqlite')('the WAL is checkpointed by a connection that serves no request (sqlite)', () => {
  let ctx: TestContext;
  const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
  let id: number;
  let age = 20;

  const patch = async () => {
    age = age >= 90 ? 20 : age + 1;
    const res = await ctx.app.inject({ method: 'PATCH', url: `/users/${id}`, headers: auth, payload: { age } });
    expect(res.statusCode, res.body).toBe(200);
  };

  beforeAll(async () => {
    ctx = await buildTestApp();
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/users',
      headers: auth,
      payload: [{ first_name: 'Wal', last_name: 'Checkpoint', country: 'Norway', status: 'active', age, email: 'wal@example.com' }],
    });
    expect(res.statusCode, res.body).toBe(201);
    id = res.json<{ id: number }[]>()[0]!.id;
  });
  afterAll(() => ctx?.close());

  it('leaves durability as configured: synchronous is untouched on the serving connection', () => {
    expect(ctx.config.sqliteSynchronous).toBe('normal');
    expect(ctx.app.connection.sqlite!.pragma('synchronous', { simple: true })).toBe(1);
    expect(ctx.app.connection.sqlite!.pragma('journal_mode', { simple: true })).toBe('wal');
  });

  it('the checkpointer copies the writes into the database file on its own', async () => {
    const checkpointer = ctx.app.walCheckpointer;
    expect(checkpointer).toBeDefined();
    // Resolved by the first run after these writes that copied every frame of the WAL.
    const copied = new Promise<CheckpointRun>((resolve) => {
      const off = checkpointer!.onRun((run) => {
        if (run.busy === 0 && run.log > 0 && run.checkpointed === run.log) {
          off();
          resolve(run);
        }
      });
    });
    for (let i = 0; i < 20; i++) await patch();
    const run = await copied;
    expect(run.checkpointed).toBe(run.log);
  });

  it('a serving connection never checkpoints inside a request: the WAL grows past SQLite default threshold untouched', async () => {
    // With the checkpointer stopped, only the serving connection could checkpoint. At SQLite's default
    // (1000 pages) its commit would copy the WAL and the next one start it over, so the WAL would never
    // hold much more than 1000 frames.
    ctx.app.walCheckpointer?.stop();
    const file = ctx.config.databaseUrl.slice('sqlite:'.length);
    const observer = new SQLite(file);
    try {
      // Writes enough for 1,500 frames and more (a PATCH commits one page or more).
      for (let i = 0; i < WRITES; i++) await patch();
      // The WAL holds every frame those writes committed, never started over: the serving connection
      // ran no checkpoint. A PASSIVE checkpoint now (no other connection reads or writes) copies them all.
      const run = observer.pragma('wal_checkpoint(PASSIVE)') as CheckpointRun[];
      expect(run[0]!.log).toBeGreaterThan(1_500);
      expect(run[0]!.checkpointed).toBe(run[0]!.log);
    } finally {
      observer.close();
    }
  });
});
