import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, buildTestApp, client, type TestContext } from '../helpers.js';
import { adminRows } from '../database.js';

// PG_IDLE_MS: how long the pool keeps a connection nobody uses (db/connect.ts). A new connection is a
// new server process that plans and describes its statements anew, so by default a pool past a burst
// keeps its connections for a minute (it used to close them after 5 s); a shorter setting gives the
// slots back sooner. The users index, the settle pass and the feed poll are off or slowed here; what still
// runs in the background (the summary folder, every second) takes one of the two connections the test opens.

const QUIET = { pgPoolSize: 2, usersIndex: false, pgSettleMs: 60_000, eventsPollMs: 60_000 };

let ctx: TestContext | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

/** Two statements at once, so the pool opens both its connections: their server processes. */
async function openBoth(c: TestContext): Promise<number[]> {
  const one = async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.2)`.execute(c.app.db)).rows[0]!.pid;
  const pids = await Promise.all([one(), one()]);
  expect(new Set(pids).size).toBe(2);
  return pids;
}

/** The pool's open connections, as GET /metrics reports them (the bootstrap token needs no statement). */
async function poolConnections(c: TestContext): Promise<number> {
  const res = await client(c.app, ADMIN_TOKEN).get('/metrics');
  expect(res.statusCode).toBe(200);
  const line = /^db_pool_connections (\d+)$/m.exec(res.body);
  expect(line).not.toBeNull();
  return Number(line![1]);
}

/** How many of these server processes still run (asked on a connection of the test's own). */
async function running(pids: number[]): Promise<number> {
  const rows = await adminRows(`select count(*)::int as n from pg_stat_activity where pid in (${pids.map(Number).join(', ')})`);
  return Number((rows[0] as { n: number }).n);
}

describe('idle pooled connections (PG_IDLE_MS)', () => {
  it('keeps them past the 5 s it used to, for as long as PG_IDLE_MS says', async () => {
    ctx = await buildTestApp({ ...QUIET, pgIdleMs: 60_000 });
    const pids = await openBoth(ctx);
    expect(await poolConnections(ctx)).toBe(2);
    // Past the old fixed 5 s: nothing is closed, and the same server processes answer.
    await sleep(6_000);
    expect(await poolConnections(ctx)).toBe(2);
    expect(await running(pids)).toBe(2);
    expect(new Set(await openBoth(ctx))).toEqual(new Set(pids));
  });

  it('gives them back once idle for PG_IDLE_MS', async () => {
    ctx = await buildTestApp({ ...QUIET, pgIdleMs: 200 });
    const pids = await openBoth(ctx);
    // Waits for the pool's own timer (the test's timeout bounds it), then for the server processes to end.
    while ((await poolConnections(ctx)) > 0) await sleep(50);
    while ((await running(pids)) > 0) await sleep(50);
    // The next statement opens a new connection, and is answered.
    const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(ctx.app.db);
    expect(pids).not.toContain(rows[0]!.pid);
  });
});
