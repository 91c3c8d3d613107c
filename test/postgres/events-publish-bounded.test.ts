import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { buildTestApp, client, type Client, type TestContext } from '../helpers.js';

// events_publish() reads events_pending through its primary key from a bound (migration
// 20261127T0200), not the table's heap whole. A queue table's heap keeps every row a publish deleted
// until vacuum clears it, and nothing clears it while a snapshot older than the deletes is open (a
// report, pg_dump): before, after a burst of writes (an import) every publish, even one that found
// nothing, read every page of that heap. Here a read-only snapshot stays open through a burst of
// 30,000 events, and a writer that wrote before the burst commits after it: its event is still
// published, in order, and once the transactions older than the publishes since have ended, a publish
// of 3 events reads a few pages of events_pending and its index, however large the heap; so does the
// users index's read of the pending user events (events_pending_rows()).

const BURST = 30_000;

interface Ev {
  sequence: number;
  type: string;
  path: string;
}

describe('publishing after a burst reads what is pending, not the heap (PostgreSQL)', () => {
  let ctx: TestContext;
  let api: Client;
  const sessions: pg.Client[] = [];

  beforeAll(async () => {
    ctx = await buildTestApp();
    api = client(ctx.app, ctx.tokens.admin);
  });
  afterAll(async () => {
    await Promise.all(sessions.map((s) => s.end()));
    await ctx?.close();
  });

  /** A session of its own on the app's schema (as psql or an import would be). */
  async function session(): Promise<pg.Client> {
    const s = new pg.Client({ connectionString: ctx.config.databaseUrl });
    await s.connect();
    sessions.push(s);
    return s;
  }
  /** Returns once every transaction that began before the call has ended (other tests' too: they share the server). */
  async function ended(s: pg.Client): Promise<void> {
    const { rows } = await s.query<{ x: string }>('select pg_current_xact_id()::text as x');
    const before = BigInt(rows[0]!.x);
    for (;;) {
      const { rows: now } = await s.query<{ xmin: string }>('select pg_snapshot_xmin(pg_current_snapshot())::text as xmin');
      if (BigInt(now[0]!.xmin) > before) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  /**
   * The pages of events_pending and of its primary key that `statement` asks for, by the counters of a
   * session that did nothing else (a session's counters hold what it did since it last reported them).
   */
  async function pagesRead(statement: string): Promise<number> {
    const s = await session();
    await s.query('begin isolation level read committed');
    await s.query(statement);
    const { rows } = await s.query<{ pages: string }>(
      `select pg_stat_get_xact_blocks_fetched('events_pending'::regclass) + pg_stat_get_xact_blocks_fetched('events_pending_pkey'::regclass) as pages`,
    );
    await s.query('commit');
    return Number(rows[0]!.pages);
  }
  async function feed(after: number): Promise<Ev[]> {
    const res = await api.get(`/events?after=${after}&size=1000`);
    expect(res.statusCode).toBe(200);
    return res.json<Ev[]>();
  }
  async function postArtists(tag: string, n: number): Promise<number[]> {
    const ids: number[] = [];
    for (let i = 0; i < n; i++) {
      const res = await api.post('/artists', { name: `${tag} ${i}`, image: 'https://img.example.com/a.jpg' });
      expect(res.statusCode).toBe(201);
      ids.push(res.json<{ id: number }>().id);
    }
    return ids;
  }

  it('publishes a writer in flight across the burst, then publishes a few events reading a bounded number of buffers', async () => {
    const [artist] = await postArtists('held', 1);
    const start = (await feed(0)).at(-1)!.sequence;

    // A read-only snapshot (no transaction id): vacuum can clear nothing deleted after it.
    const holder = await session();
    await holder.query('begin isolation level repeatable read');
    await holder.query('select 1');
    // A writer whose event is pending, uncommitted, before the burst.
    const writer = await session();
    await writer.query('begin');
    await writer.query(`update artists set image = 'https://img.example.com/held.jpg' where id = $1`, [artist]);

    const burst = await session();
    await burst.query(`insert into artists (name, image, name_key) select 'burst ' || g, '', chr(1) || 'burst ' || g from generate_series(1, ${BURST}) g`);
    // The burst is published by this read (or the background pass): the writer's event is not among them.
    const published = await feed(start);
    expect(published).toHaveLength(1000);
    expect(published.every((e) => e.type === 'artist.created')).toBe(true);
    let head = start;
    for (let page = published; page.length > 0; page = await feed(head)) head = page.at(-1)!.sequence;
    expect(head).toBe(start + BURST);

    await writer.query('commit');
    await ended(burst);
    // The writer's event comes next, then what was written after it: nothing skipped, nothing twice.
    const after = await postArtists('after', 3);
    const next = await feed(head);
    expect(next.map((e) => [e.sequence, e.type, e.path])).toEqual([
      [head + 1, 'artist.updated', `/artists/${artist}`],
      ...after.map((id, i) => [head + 2 + i, 'artist.created', `/artists/${id}`]),
    ]);
    head += 4;
    // A publish raises the bound once every transaction older than the one before it has ended: one
    // more round, and the bound is past the burst whatever was running when it was published.
    await ended(burst);
    const [round] = await postArtists('round', 1);
    expect((await feed(head)).map((e) => e.path)).toEqual([`/artists/${round}`]);
    head += 1;

    // The heap still holds the burst's pages (the snapshot keeps vacuum from clearing them).
    const { rows: size } = await burst.query<{ pages: string }>(`select pg_relation_size('events_pending') / 8192 as pages`);
    expect(Number(size[0]!.pages)).toBeGreaterThan(500);

    const last = await postArtists('last', 3);
    // Before: every page of the heap (more than 600 here); now a few pages of the index and the rows found.
    expect(await pagesRead('select events_publish()')).toBeLessThan(50);
    expect((await feed(head)).map((e) => [e.sequence, e.path])).toEqual(last.map((id, i) => [head + 1 + i, `/artists/${id}`]));

    // The users index's catch-up reads the pending user events (index-feed.ts): the same bound.
    const user = await api.post('/users', { first_name: 'Ana', last_name: 'Lima', email: 'ana@example.com', age: 33, status: 'active', country: 'Chile' });
    expect(user.statusCode).toBe(201);
    const users = await api.get('/users?size=5');
    expect(users.statusCode).toBe(200);
    expect(await pagesRead(`select type, resource from events_pending_rows() where type in ('user.created', 'user.updated', 'user.deleted')`)).toBeLessThan(50);

    await holder.query('rollback');
  });
});
