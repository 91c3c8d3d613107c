import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { buildTestApp, client, type Client, type TestContext } from '../helpers.js';

// events_publish() reads events_pending through its primary key from a bound (migration
// 20261127T0200), not the table's heap whole. A queue table's heap keeps every row a publish deleted
// until vacuum clears it, and nothing clears it while a snapshot older than the deletes is open (a
// report, pg_dump): before, after a burst of writes (an import) every publish, even one that found
// nothing, read every page of that heap. Here a read-only snapshot stays open through a burst of
// 30,000 events, and a writer that wrote before the burst commits after it: its event is still
// published, in order, and once every transaction older than the burst's publish has ended, a publish
// of 3 events reads a few pages of events_pending and its index, however large the heap.

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

  it('publishes a writer in flight across the burst, then publishes a few events reading a bounded number of buffers', { timeout: 60_000 }, async () => {
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
    // Every transaction that began before this point ends (other tests' too: they share the server).
    const { rows } = await burst.query<{ x: string }>('select pg_current_xact_id()::text as x');
    const mark = BigInt(rows[0]!.x);
    for (;;) {
      const { rows: now } = await burst.query<{ xmin: string }>('select pg_snapshot_xmin(pg_current_snapshot())::text as xmin');
      if (BigInt(now[0]!.xmin) > mark) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }

    // The writer's event comes next, then what was written after it: nothing skipped, nothing twice.
    const after = await postArtists('after', 3);
    const next = await feed(head);
    expect(next.map((e) => [e.sequence, e.type, e.path])).toEqual([
      [head + 1, 'artist.updated', `/artists/${artist}`],
      ...after.map((id, i) => [head + 2 + i, 'artist.created', `/artists/${id}`]),
    ]);
    head += 4;

    // The heap still holds the burst's pages (the snapshot keeps vacuum from clearing them).
    const { rows: size } = await burst.query<{ pages: string }>(`select pg_relation_size('events_pending') / 8192 as pages`);
    expect(Number(size[0]!.pages)).toBeGreaterThan(500);

    const last = await postArtists('last', 3);
    // The pages of events_pending and of its primary key that one publish asks for (this transaction's own counters).
    await burst.query('begin isolation level read committed');
    await burst.query('select events_publish()');
    const { rows: read } = await burst.query<{ heap: string; index: string }>(
      `select pg_stat_get_xact_blocks_fetched('events_pending'::regclass) as heap, pg_stat_get_xact_blocks_fetched('events_pending_pkey'::regclass) as index`,
    );
    await burst.query('commit');
    // Before: every page of the heap (more than 600 here); now a few pages of the index and the rows found.
    expect(Number(read[0]!.heap) + Number(read[0]!.index)).toBeLessThan(50);
    expect((await feed(head)).map((e) => [e.sequence, e.path])).toEqual(last.map((id, i) => [head + 1 + i, `/artists/${id}`]));

    await holder.query('rollback');
  });
});
