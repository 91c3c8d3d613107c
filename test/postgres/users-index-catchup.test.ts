import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, watchPgStatements, type Client, type TestContext } from '../helpers.js';

// The users index catches up in one statement (index-feed.ts eventsWithRowsPg) that reads, in its own
// snapshot, the user events and the users table's version. A write that commits after a request read
// the version and before the catch-up's statement ran is applied by that catch-up: the next list,
// with no write since, must answer it without another catch-up (issue 32: under user PATCHes about one
// catch-up in three was such a second one, on every worker).

/** The catch-up's statement: the user events, committed and pending, with their rows. */
const isCatchUp = (text: string) => text.includes('events_pending') && /\busers\b/.test(text);

describe.runIf(process.env.TEST_BACKEND === 'postgres')('users index on PostgreSQL: what a catch-up applies', () => {
  let ctx: TestContext;
  let api: Client;
  let catchUps: string[] = [];
  /** Runs (once) before the next catch-up statement is sent: a commit by another connection in between. */
  let beforeNextCatchUp: (() => Promise<void>) | undefined;
  /** Called (once) when the next read of every table's version (db/arrivals.ts, for requests over HTTP) has its answer. */
  let afterNextVersions: (() => void) | undefined;
  let unwatch: (() => void) | undefined;

  beforeAll(async () => {
    unwatch = watchPgStatements((text, run) => {
      if (afterNextVersions && text.includes('sum(users) as users')) {
        const after = afterNextVersions;
        afterNextVersions = undefined;
        return (run() as Promise<unknown>).then((result) => (after(), result));
      }
      if (!isCatchUp(text)) return run();
      catchUps.push(text);
      const before = beforeNextCatchUp;
      beforeNextCatchUp = undefined;
      return before ? before().then(run) : run();
    });
    // No poll of the index's own while the test counts catch-ups: only requests start them.
    // Two connections: a second list reads the version while the first holds one at its catch-up.
    ctx = await buildTestApp({ eventsPollMs: 600_000, pgPoolSize: 2 });
    api = client(ctx.app, ctx.tokens.admin);
    for (let i = 0; i < 4; i++) {
      const res = await api.post('/users', {
        first_name: `C${i}`,
        last_name: 'Catch',
        email: `catch-${i}@example.com`,
        age: 30 + i,
        status: 'active',
        country: 'Peru',
      });
      expect(res.statusCode).toBe(201);
    }
    await ctx.app.usersIndex!.loaded;
  });
  afterAll(async () => {
    unwatch?.();
    await ctx.close();
  });

  it('applies a write committed after the request read the version, and the next list needs no catch-up', async () => {
    const ages = async (url: string) => {
      const res = await api.get(url);
      expect(res.statusCode).toBe(200);
      return res.json<{ first_name: string; age: number }[]>().map((u) => `${u.first_name}:${u.age}`);
    };
    expect(await ages('/users?sort=first_name:asc&size=10')).toEqual(['C0:30', 'C1:31', 'C2:32', 'C3:33']);
    expect(ctx.app.usersIndex!.state).toBe('ready');

    const other = new pg.Client({ connectionString: ctx.config.databaseUrl });
    await other.connect();
    try {
      // Another instance (or psql) writes; the next list reads the version that counts it, then catches up,
      // and a second write by the other connection commits between that version read and the catch-up.
      await other.query(`update users set age = 41 where first_name = 'C1'`);
      beforeNextCatchUp = async () => void (await other.query(`update users set age = 42 where first_name = 'C2'`));
      catchUps = [];
      expect(await ages('/users?sort=age:asc&size=10')).toEqual(['C0:30', 'C3:33', 'C1:41', 'C2:42']);
      expect(beforeNextCatchUp).toBeUndefined();
      expect(catchUps).toHaveLength(1);

      // Nothing written since that catch-up's statement: the index answers as it is.
      catchUps = [];
      expect(await ages('/users?sort=age:desc&size=10')).toEqual(['C2:42', 'C1:41', 'C3:33', 'C0:30']);
      expect(catchUps, catchUps.join('\n')).toHaveLength(0);

      // A later write is still caught up with (read-your-writes through another connection).
      await other.query(`update users set age = 20 where first_name = 'C3'`);
      expect(await ages('/users?sort=age:asc&size=2')).toEqual(['C3:20', 'C0:30']);
      expect(catchUps).toHaveLength(1);
    } finally {
      await other.end();
    }
  });

  it('a list that waited for a catch-up under way runs none of its own when that one applied its version', async () => {
    // Over HTTP: a request numbered on arrival has its users version read after it arrived (db/arrivals.ts),
    // and waits with it; one made in process (inject) has none and waits for a catch-up that reads one.
    const base = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    const ages = async (url: string) => {
      const res = await fetch(base + url, { headers: { authorization: `Bearer ${ctx.tokens.admin}` } });
      expect(res.status).toBe(200);
      return ((await res.json()) as { age: number }[]).map((u) => u.age);
    };
    const other = new pg.Client({ connectionString: ctx.config.databaseUrl });
    await other.connect();
    try {
      await other.query(`update users set age = 50 where first_name = 'C0'`);
      // The first list's catch-up is held until the second list has read the versions (the same users
      // version: nothing is written meanwhile) and, finding it not applied yet, waits for a catch-up.
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let reached!: () => void;
      const heldAtCatchUp = new Promise<void>((resolve) => (reached = resolve));
      beforeNextCatchUp = () => (reached(), released);
      catchUps = [];
      const first = ages('/users?sort=age:desc&size=1');
      await heldAtCatchUp;
      const secondReadVersions = new Promise<void>((resolve) => (afterNextVersions = resolve));
      const second = ages('/users?sort=age:desc&size=2');
      await secondReadVersions;
      // What follows the versions' answer (the token, the index's check, joining the queue) runs before the next turn.
      await new Promise((resolve) => setImmediate(resolve));
      release();
      // Both see the write (the oldest user is now 50), whatever the earlier test left.
      expect(await first).toEqual([50]);
      expect((await second)[0]).toBe(50);
      expect(catchUps, catchUps.join('\n')).toHaveLength(1);
    } finally {
      await other.end();
    }
  });
});
