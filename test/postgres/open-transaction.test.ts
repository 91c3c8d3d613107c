import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { buildTestApp, client, createAlbum, createArtist, type Client, type TestContext } from '../helpers.js';
import { collationKey } from '../../src/db/collation.js';

// Issue 32: on PostgreSQL a transaction left open after writing one user delays no other write. Each
// writing transaction used to update rows every writer of the same table (or of the same users'
// status, country and age) updates too: the table's version, the users summaries, the events
// counter, each locked until commit. Here a second connection holds such a transaction open (as an
// idle-in-transaction session or a slow client would), and through the service a PATCH of another
// user with the same status, country and age and a song POST must both complete meanwhile.
//
// Synchronised on the database itself: while the requests are in flight, this polls for any backend
// that waits on the holder (pg_blocking_pids); the first of the two to happen, the requests
// completing or a backend found waiting, settles it. No sleep, no time bound.

let ctx: TestContext;
let api: Client;
let holder: pg.Client;

const SAME = { status: 'active', country: 'Peru', age: 40 } as const;

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.admin);
  holder = new pg.Client({ connectionString: ctx.config.databaseUrl });
  await holder.connect();
});
afterAll(async () => {
  await holder.end();
  await ctx.close();
});

interface Waiter {
  pid: number;
  query: string;
  /** What it waits for and on which tables it holds or wants a lock (a tuple lock names the row's table). */
  locks: string[];
}

/** The backends that wait on `pid`, each with the locks it waits for and the rows' tables it has a tuple lock on. */
async function waitingOn(watcher: pg.Client, pid: number): Promise<Waiter[]> {
  const { rows } = await watcher.query<Waiter>(
    `select a.pid, a.query,
       array(select l.locktype || ' ' || l.mode || ' ' || coalesce(l.relation::regclass::text, '') || case when l.granted then '' else ' (waiting)' end
             from pg_locks l where l.pid = a.pid and (not l.granted or l.locktype = 'tuple') order by 1) as locks
     from pg_stat_activity a where $1 = any(pg_blocking_pids(a.pid))`,
    [pid],
  );
  return rows;
}

describe('a transaction holding one user open (PostgreSQL)', () => {
  it('delays neither a PATCH of another user with the same status, country and age nor a song POST', async () => {
    const users = [];
    for (const name of ['Held', 'Other']) {
      const res = await api.post('/users', { first_name: name, last_name: 'Same', email: `${name.toLowerCase()}@example.com`, ...SAME });
      expect(res.statusCode).toBe(201);
      users.push(res.json<{ id: number }>());
    }
    const [held, other] = users as [{ id: number }, { id: number }];
    const artist = await createArtist(api);
    const album = await createAlbum(api, artist.id);

    // The holder moves its user out of (active, Peru, 40) and into another first name, then stays open.
    const { rows } = await holder.query<{ pid: number }>('select pg_backend_pid() as pid');
    const holderPid = rows[0]!.pid;
    await holder.query('begin');
    await holder.query('update users set age = age + 1, first_name = $1, first_name_key = $2 where id = $3', ['Moved', collationKey('Moved'), held.id]);

    const watcher = new pg.Client({ connectionString: ctx.config.databaseUrl });
    await watcher.connect();
    let settled = false;
    let waiters: Waiter[] = [];
    try {
      // The other user makes the same move: the same summary rows, the same table.
      const requests = Promise.all([
        api.patch(`/users/${other.id}`, { age: SAME.age + 1, first_name: 'Moved' }),
        api.post(`/artists/${artist.id}/albums/${album.id}/songs`, { name: 'Unblocked', time: '03:00' }),
      ]).finally(() => (settled = true));
      const watching = (async () => {
        while (!settled) {
          const found = await waitingOn(watcher, holderPid);
          if (found.length > 0) return found;
        }
        return [];
      })();
      waiters = await Promise.race([watching, requests.then(() => [] as Waiter[])]);
      // Let whatever waits go on (and the requests end) before asserting.
      if (waiters.length > 0) await holder.query('rollback');
      const [patched, song] = await requests;
      expect(waiters, `writes waited on the open transaction:\n${waiters.map((w) => `${w.query}\n  ${w.locks.join('\n  ')}`).join('\n')}`).toEqual([]);

      expect(patched.statusCode).toBe(200);
      expect(patched.json()).toMatchObject({ id: other.id, first_name: 'Moved', age: SAME.age + 1 });
      expect(patched.headers.etag).toBeDefined();
      expect(song.statusCode).toBe(201);
      expect(song.json()).toMatchObject({ name: 'Unblocked', time: '03:00' });
      expect(song.headers.location).toBe(`/artists/${artist.id}/albums/${album.id}/songs/${song.json<{ id: number }>().id}`);

      // While the holder is still open: the totals are those of the committed rows.
      const sameKey = await api.get(`/users?status=active&lives_in=Peru&older_than=${SAME.age - 1}&younger_than=${SAME.age + 1}`);
      expect(sameKey.statusCode).toBe(200);
      expect(sameKey.headers['x-total-count']).toBe('1');
      const moved = await api.get('/users?first_name_starts_with=Mov');
      expect(moved.headers['x-total-count']).toBe('1');

      await holder.query('commit');
      const after = await api.get(`/users?status=active&lives_in=Peru&older_than=${SAME.age}&younger_than=${SAME.age + 2}`);
      expect(after.headers['x-total-count']).toBe('2');
      expect((await api.get('/users?first_name_starts_with=Mov')).headers['x-total-count']).toBe('2');
    } finally {
      await holder.query('rollback').catch(() => {});
      await watcher.end();
    }
  });
});
