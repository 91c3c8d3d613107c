import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, client, createAlbum, createArtist, deferred, errorBody, type Client, type LogEntry, type TestContext } from '../helpers.js';
import { startReceiver, type Delivery, type Receiver } from './receiver.js';
import { deleteEventsBefore } from '../../src/modules/events/events.repository.js';

let ctx: TestContext;
let admin: Client;
let receiver: Receiver;
const SECRET = 'a-shared-secret-of-some-length';

const logWatchers = new Set<(entry: LogEntry) => void>();

beforeAll(async () => {
  // Tests below hold a POST unanswered while they write or read (the batches' 120 writes, the log's
  // pages) and answer it when they are done: the receiver timeout is the most there is (120 s), so the
  // POST ends only when the test answers it. With 2 s, the hold of the batches test outlasted it under
  // load (1.1-2.2 s on PostgreSQL beside two busy cores): the POST timed out and was sent again.
  ctx = await buildTestApp(
    { eventsPollMs: 20, webhookAllowPrivate: true, webhookRetryBaseMs: 10, webhookMaxAttempts: 3, webhookTimeoutMs: 120_000 },
    undefined,
    (entry) => logWatchers.forEach((w) => w(entry)),
  );
  admin = client(ctx.app, ctx.tokens.admin);
  receiver = await startReceiver({ secret: SECRET });
});
afterAll(async () => {
  await ctx.close();
  await receiver.close();
});

interface Hook {
  id: number;
  url: string;
  types: string[];
  batch_size: number;
  status: string;
  last_sequence: number;
  attempts: number;
  last_error: string | null;
}

interface LogRow {
  id: number;
  sequence: number;
  last_sequence: number;
  events: number;
  outcome: string;
  status_code: number | null;
  attempt: number;
  error: string | null;
}

async function createHook(types: string[], url = receiver.url, extra: Record<string, unknown> = {}, api = admin): Promise<Hook> {
  const res = await api.post('/webhooks', { url, types, secret: SECRET, ...extra });
  expect(res.statusCode).toBe(201);
  const hook = res.json<Hook>();
  expect(res.headers.location).toBe(`/webhooks/${hook.id}`);
  return hook;
}

/** Resolves when the app logs that this webhook was marked failing. */
function markedFailing(id: number): Promise<void> {
  const { promise, resolve } = deferred();
  const watch = (entry: LogEntry) => {
    if (entry.msg === 'webhook marked failing' && entry.webhook === id) {
      logWatchers.delete(watch);
      resolve();
    }
  };
  logWatchers.add(watch);
  return promise;
}

/** Every receiver check a delivery must pass: signed with the secret, headers agreeing with the body. */
function expectSigned(d: Delivery) {
  expect(d.verified).toBe(true);
  expect(d.headers['content-type']).toBe('application/json');
  if (d.batch) {
    expect(d.headers['x-catalogue-batch']).toBe(String(d.events.length));
    expect(d.headers['x-catalogue-first-sequence']).toBe(String(d.events[0]!.sequence));
    expect(d.headers['x-catalogue-last-sequence']).toBe(String(d.events.at(-1)!.sequence));
  } else {
    expect(d.headers['x-catalogue-sequence']).toBe(String(d.event.sequence));
    expect(d.headers['x-catalogue-event']).toBe(d.event.type);
    expect(d.headers['x-catalogue-event-id']).toBe(d.event.id);
  }
}

/** The newest event's sequence, read through the feed as a client would. */
async function newestSequence(api = admin): Promise<number> {
  let after = 0;
  for (;;) {
    const page = (await api.get(`/events?after=${after}&size=1000`)).json<{ sequence: number }[]>();
    if (page.length === 0) return after;
    after = page.at(-1)!.sequence;
  }
}

const linkOf = (res: LightMyRequestResponse, rel: string) => new RegExp(`<([^>]+)>; rel="${rel}"`).exec(String(res.headers.link))?.[1];

describe('POST /webhooks', () => {
  it('delivers events of its types, signed, in order, and logs each delivery', async () => {
    receiver.deliveries.length = 0;
    const hook = await createHook(['artist.created', 'album.created']);
    expect(hook).toMatchObject({
      url: receiver.url,
      types: ['artist.created', 'album.created'],
      batch_size: 1,
      status: 'active',
      attempts: 0,
      last_error: null,
    });
    expect(JSON.stringify(hook)).not.toContain(SECRET);
    const artist = await createArtist(admin, 'Hooked');
    await admin.patch(`/artists/${artist.id}`, { name: 'Hooked again' }); // not one of its types
    const album = await createAlbum(admin, artist.id, 'Hooked album');
    await receiver.until((r) => r.deliveries.length >= 2);
    const [first, second] = receiver.deliveries;
    expect(first!.event).toMatchObject({ type: 'artist.created', path: `/artists/${artist.id}`, resource: artist });
    expect(second!.event).toMatchObject({ type: 'album.created', resource: album });
    expect(second!.event.sequence).toBeGreaterThan(first!.event.sequence);
    for (const d of receiver.deliveries) {
      expect(d.batch).toBe(false);
      expectSigned(d);
    }
    // An attempt is logged just after the receiver answered; deliveries go in order, so once a later
    // event has arrived every earlier attempt is in the log.
    await createArtist(admin, 'Sentinel');
    await receiver.until((r) => r.deliveries.length >= 3);
    const sentinel = receiver.deliveries[2]!.event.sequence;
    const log = (await admin.get(`/webhooks/${hook.id}/deliveries`)).json<LogRow[]>().filter((l) => l.sequence < sentinel);
    expect(log.map((l) => [l.sequence, l.last_sequence, l.events, l.outcome, l.status_code, l.attempt])).toEqual([
      [second!.event.sequence, second!.event.sequence, 1, 'delivered', 204, 1],
      [first!.event.sequence, first!.event.sequence, 1, 'delivered', 204, 1],
    ]);
    expect((await admin.delete(`/webhooks/${hook.id}`)).statusCode).toBe(204);
    expect((await admin.get(`/webhooks/${hook.id}`)).statusCode).toBe(404);
  });

  it('retries a failed delivery with backoff and goes on in order once it succeeds', async () => {
    receiver.deliveries.length = 0;
    let failures = 2;
    receiver.answer = (_d, res) => res.writeHead(failures-- > 0 ? 503 : 200).end('ok');
    const hook = await createHook(['artist.created']);
    const a = await createArtist(admin, 'Retry A');
    const b = await createArtist(admin, 'Retry B');
    const sentinel = await createArtist(admin, 'Sentinel');
    await receiver.until((r) => r.deliveries.some((d) => d.event.resource.id === sentinel.id));
    expect(receiver.deliveries.map((d) => d.event.resource.id)).toEqual([a.id, a.id, a.id, b.id, sentinel.id]);
    const log = (await admin.get(`/webhooks/${hook.id}/deliveries`)).json<LogRow[]>().filter((l) => l.sequence !== receiver.deliveries[4]!.event.sequence);
    expect(log.map((l) => [l.outcome, l.attempt, l.status_code])).toEqual([
      ['delivered', 1, 200],
      ['delivered', 3, 200],
      ['failed', 2, 503],
      ['failed', 1, 503],
    ]);
    expect(log[3]!.error).toBe('The receiver answered 503.');
    await admin.delete(`/webhooks/${hook.id}`);
    receiver.answer = (_d, res) => res.writeHead(204).end();
  });

  it('marks a webhook failing after the last attempt and stops', async () => {
    receiver.deliveries.length = 0;
    receiver.answer = (_d, res) => res.writeHead(500).end();
    const hook = await createHook(['artist.created']);
    const failing = markedFailing(hook.id);
    await createArtist(admin, 'Never acknowledged');
    await failing;
    const state = (await admin.get(`/webhooks/${hook.id}`)).json<Hook>();
    expect(state).toMatchObject({ status: 'failing', attempts: 3, last_error: 'The receiver answered 500.', last_sequence: hook.last_sequence });
    expect(receiver.deliveries).toHaveLength(3);
    receiver.answer = (_d, res) => res.writeHead(204).end();
    await admin.delete(`/webhooks/${hook.id}`);
  });

  it('is admin only, validates the body and lists webhooks without their secrets', async () => {
    const write = client(ctx.app, ctx.tokens.write);
    expect((await write.post('/webhooks', { url: receiver.url, types: ['song.created'], secret: SECRET })).statusCode).toBe(403);
    expect((await write.get('/webhooks')).statusCode).toBe(403);
    const bad = await admin.post('/webhooks', { url: 'ftp://example.com/x', types: ['song.renamed'], secret: 'short', batch_size: 0 });
    expect(bad.statusCode).toBe(400);
    expect(
      errorBody(bad)
        .details?.map((d) => d.field)
        .sort(),
    ).toEqual(['batch_size', 'secret', 'types.0', 'url']);
    for (const batch of [1001, 1.5, '10', '0x10', null, -1]) {
      const res = await admin.post('/webhooks', { url: receiver.url, types: ['song.created'], secret: SECRET, batch_size: batch });
      expect([batch, res.statusCode]).toEqual([batch, 400]);
      expect([...new Set(errorBody(res).details?.map((d) => d.field))]).toEqual(['batch_size']);
    }
    const hook = await createHook(['song.created']);
    const list = (await admin.get('/webhooks')).json<Hook[]>();
    expect(list.map((h) => h.id)).toContain(hook.id);
    expect(JSON.stringify(list)).not.toContain(SECRET);
    expect((await admin.delete(`/webhooks/${hook.id}`)).statusCode).toBe(204);
    expect((await admin.delete(`/webhooks/${hook.id}`)).statusCode).toBe(404);
    expect((await admin.get(`/webhooks/${hook.id}/deliveries`)).statusCode).toBe(404);
  });
});

describe('isolation', () => {
  it('a receiver that never answers holds up its own webhook only: others, older and newer, receive every event meanwhile', async () => {
    // A timeout far longer than the test: a sender that waited for the held POST would never deliver.
    const own = await buildTestApp({ eventsPollMs: 20, webhookAllowPrivate: true, webhookTimeoutMs: 120_000 });
    const hanging = await startReceiver({ secret: SECRET });
    const older = await startReceiver({ secret: SECRET });
    const newer = await startReceiver({ secret: SECRET });
    try {
      hanging.answer = () => {}; // held open
      const api = client(own.app, own.tokens.admin);
      await createHook(['artist.created'], hanging.url, {}, api);
      await createHook(['artist.created'], older.url, {}, api);
      const a1 = await createArtist(api, 'Isolated 1');
      await hanging.until((r) => r.deliveries.length === 1);
      await older.until((r) => r.deliveries.length === 1);
      // Created while the POST to `hanging` is held: its sender can only start after that POST was sent.
      await createHook(['artist.created'], newer.url, {}, api);
      const a2 = await createArtist(api, 'Isolated 2');
      const a3 = await createArtist(api, 'Isolated 3');
      await older.until((r) => r.deliveries.length === 3);
      await newer.until((r) => r.deliveries.length === 2);
      // Every event reached the others while the first POST to `hanging` is still held open.
      const held = hanging.deliveries[0]!;
      expect(held.res.writableEnded).toBe(false);
      expect(held.res.socket?.destroyed).toBe(false);
      expect(hanging.deliveries).toHaveLength(1);
      expect(older.deliveries.map((d) => d.event.resource.id)).toEqual([a1.id, a2.id, a3.id]);
      expect(newer.deliveries.map((d) => d.event.resource.id)).toEqual([a2.id, a3.id]);
      // Answered at last, the held webhook goes on in order from where it was.
      hanging.answer = (_d, res) => res.writeHead(204).end();
      held.res.writeHead(204).end();
      await hanging.until((r) => r.deliveries.length === 3);
      expect(hanging.deliveries.map((d) => d.event.resource.id)).toEqual([a1.id, a2.id, a3.id]);
      for (const d of [...hanging.deliveries, ...older.deliveries, ...newer.deliveries]) expectSigned(d);
    } finally {
      await own.close();
      await Promise.all([hanging.close(), older.close(), newer.close()]);
    }
  });
});

describe('PATCH /webhooks/{id}', () => {
  it('resumes a failing webhook from the last delivered event: the backlog arrives in order, nothing skipped', async () => {
    receiver.deliveries.length = 0;
    receiver.answer = (_d, res) => res.writeHead(500).end();
    const hook = await createHook(['artist.created']);
    const failing = markedFailing(hook.id);
    const a1 = await createArtist(admin, 'Backlog 1');
    await failing;
    // Written while it is failing: nothing is sent, and nothing is lost.
    const a2 = await createArtist(admin, 'Backlog 2');
    const a3 = await createArtist(admin, 'Backlog 3');
    expect(receiver.deliveries.map((d) => d.event.resource.id)).toEqual([a1.id, a1.id, a1.id]);
    receiver.answer = (_d, res) => res.writeHead(204).end();

    const res = await admin.patch(`/webhooks/${hook.id}`, { status: 'active' });
    expect(res.statusCode).toBe(200);
    expect(res.json<Hook>()).toMatchObject({ id: hook.id, status: 'active', attempts: 0, last_sequence: hook.last_sequence });
    await receiver.until((r) => r.deliveries.some((d) => d.event.resource.id === a3.id));
    expect(receiver.deliveries.map((d) => d.event.resource.id)).toEqual([a1.id, a1.id, a1.id, a1.id, a2.id, a3.id]);
    for (const d of receiver.deliveries) expectSigned(d);
    // The resumed attempt counts from 1 again; the log shows the three failures before it.
    const sentinel = await createArtist(admin, 'Backlog sentinel');
    await receiver.until((r) => r.deliveries.some((d) => d.event.resource.id === sentinel.id));
    const log = (await admin.get(`/webhooks/${hook.id}/deliveries?sort=id:asc`)).json<LogRow[]>().slice(0, 6);
    expect(log.map((l) => [l.outcome, l.attempt])).toEqual([
      ['failed', 1],
      ['failed', 2],
      ['failed', 3],
      ['delivered', 1],
      ['delivered', 1],
      ['delivered', 1],
    ]);
    expect((await admin.get(`/webhooks/${hook.id}`)).json<Hook>()).toMatchObject({ status: 'active', attempts: 0, last_error: null });
    await admin.delete(`/webhooks/${hook.id}`);
  });

  it('`from` sends events again from a sequence, or skips to one', async () => {
    receiver.deliveries.length = 0;
    const hook = await createHook(['artist.created']);
    const a1 = await createArtist(admin, 'From 1');
    const a2 = await createArtist(admin, 'From 2');
    await receiver.until((r) => r.deliveries.length === 2);
    const [s1, s2] = receiver.deliveries.map((d) => d.event.sequence);

    // Back to the first: both again, in order.
    const rewound = await admin.patch(`/webhooks/${hook.id}`, { from: s1 });
    expect(rewound.statusCode).toBe(200);
    expect(rewound.json<Hook>()).toMatchObject({ last_sequence: s1! - 1, status: 'active' });
    await receiver.until((r) => r.deliveries.length === 4);
    expect(receiver.deliveries.map((d) => d.event.resource.id)).toEqual([a1.id, a2.id, a1.id, a2.id]);

    // Failing with a backlog of two: resumed from the second, the first of them is skipped.
    receiver.answer = (_d, res) => res.writeHead(500).end();
    const failing = markedFailing(hook.id);
    const a3 = await createArtist(admin, 'From 3');
    await failing;
    const a4 = await createArtist(admin, 'From 4');
    receiver.answer = (_d, res) => res.writeHead(204).end();
    receiver.deliveries.length = 0;
    const a4Sequence = (await admin.get(`/events?after=${s2}&types=artist.created`)).json<{ sequence: number; resource: { id: number } }[]>()[1]!;
    expect(a4Sequence.resource.id).toBe(a4.id);
    const res = await admin.patch(`/webhooks/${hook.id}`, { status: 'active', from: a4Sequence.sequence });
    expect(res.json<Hook>()).toMatchObject({ status: 'active', last_sequence: a4Sequence.sequence - 1 });
    await receiver.until((r) => r.deliveries.length === 1);
    expect(receiver.deliveries[0]!.event.resource.id).toBe(a4.id);
    expect(receiver.deliveries.some((d) => d.event.resource.id === a3.id)).toBe(false);

    // `from` one past the newest event: nothing waiting is sent; the next event is.
    const head = await newestSequence();
    expect((await admin.patch(`/webhooks/${hook.id}`, { from: head + 1 })).json<Hook>().last_sequence).toBe(head);
    await admin.delete(`/webhooks/${hook.id}`);
  });

  it('refuses what it cannot do with a clear 400, and is admin only', async () => {
    const hook = await createHook(['song.created']);
    const url = `/webhooks/${hook.id}`;
    const head = await newestSequence();
    const cases: [unknown, string][] = [
      [{}, ''],
      [{ status: 'failing' }, 'status'],
      [{ status: 'paused' }, 'status'],
      [{ from: 0 }, 'from'],
      [{ from: -1 }, 'from'],
      [{ from: 1.5 }, 'from'],
      [{ from: '5' }, 'from'],
      [{ from: '0x10' }, 'from'],
      [{ from: 2 ** 60 }, 'from'],
      [{ from: head + 2 }, 'from'],
      [{ from: null }, 'from'],
      [{ batch_size: 0 }, 'batch_size'],
      [{ batch_size: 1001 }, 'batch_size'],
      [{ constructor: 1 }, 'constructor'],
      [{ toString: 'x' }, 'toString'],
      [{ url: 'https://elsewhere.example.com/' }, 'url'],
      [[{ status: 'active' }], ''],
    ];
    for (const [body, field] of cases) {
      const res = await admin.patch(url, body);
      expect([body, res.statusCode]).toEqual([body, 400]);
      const details = errorBody(res).details ?? [];
      if (field) expect([body, [...new Set(details.map((d) => d.field))]]).toEqual([body, [field]]);
    }
    const proto = await admin.send('PATCH', url, '{"__proto__": {"status": "active"}}', { 'content-type': 'application/json' });
    expect(proto.statusCode).toBe(400);
    expect((await admin.patch('/webhooks/999999', { status: 'active' })).statusCode).toBe(404);
    expect((await admin.patch('/webhooks/abc', { status: 'active' })).statusCode).toBe(400);
    expect((await client(ctx.app, ctx.tokens.write).patch(url, { status: 'active' })).statusCode).toBe(403);
    expect((await admin.patch(url, { status: 'active' }, { 'content-type': 'text/plain' })).statusCode).toBe(415);
    // Nothing above changed it.
    expect((await admin.get(url)).json<Hook>()).toMatchObject({ status: 'active', batch_size: 1, last_sequence: hook.last_sequence });
    await admin.delete(url);
  });

  it('refuses a `from` before the oldest event retention kept', async () => {
    const own = await buildTestApp({ webhookAllowPrivate: true });
    const its = await startReceiver({ secret: SECRET });
    try {
      const api = client(own.app, own.tokens.admin);
      const hook = await createHook(['artist.created'], its.url, {}, api);
      for (const name of ['Old 1', 'Old 2', 'Old 3']) await createArtist(api, name);
      // Retention with a cutoff in the future: everything but the newest event goes.
      expect(await deleteEventsBefore(own.app.db, new Date(Date.now() + 3600_000).toISOString())).toBe(2);
      const [kept] = (await api.get('/events?after=0')).json<{ sequence: number }[]>();
      const res = await api.patch(`/webhooks/${hook.id}`, { from: kept!.sequence - 1 });
      expect(res.statusCode).toBe(400);
      expect(errorBody(res).details).toEqual([{ field: 'from', minimum: expect.stringContaining(`at least ${kept!.sequence}`) as string }]);
      expect((await api.patch(`/webhooks/${hook.id}`, { from: kept!.sequence })).statusCode).toBe(200);
      await api.delete(`/webhooks/${hook.id}`);
    } finally {
      await own.close();
      await its.close();
    }
  });
});

describe('batches', () => {
  it('a webhook PATCHed to batch_size 50 sends what waits in POSTs of up to 50 events, signed, in order, each once', async () => {
    receiver.deliveries.length = 0;
    const created = await createHook(['artist.created']);
    expect(created.batch_size).toBe(1);
    const patched = await admin.patch(`/webhooks/${created.id}`, { batch_size: 50 });
    expect(patched.json<Hook>()).toMatchObject({ batch_size: 50, status: 'active', last_sequence: created.last_sequence });
    // The first POST is held until 120 events wait behind it: the next POSTs carry them 50 at a time.
    const release = deferred();
    receiver.answer = (d, res) => {
      if (receiver.deliveries.length === 1) void release.promise.then(() => res.writeHead(204).end());
      else res.writeHead(204).end();
    };
    const ids: number[] = [];
    for (let i = 0; i < 120; i++) ids.push((await createArtist(admin, `Batched ${i}`)).id);
    await receiver.until((r) => r.deliveries.length >= 1);
    release.resolve();
    await receiver.until((r) => r.deliveries.flatMap((d) => d.events).some((e) => e.resource.id === ids.at(-1)));
    const posts = [...receiver.deliveries];
    expect(posts.every((d) => d.batch && d.events.length >= 1 && d.events.length <= 50)).toBe(true);
    expect(posts[1]!.events).toHaveLength(50);
    expect(posts.flatMap((d) => d.events.map((e) => e.resource.id))).toEqual(ids);
    const sequences = posts.flatMap((d) => d.events.map((e) => e.sequence));
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    for (const d of posts) expectSigned(d);
    // One log row per POST, saying what it carried.
    const sentinel = await createArtist(admin, 'Batched sentinel');
    await receiver.until((r) => r.deliveries.some((d) => d.events.some((e) => e.resource.id === sentinel.id)));
    const log = (await admin.get(`/webhooks/${created.id}/deliveries?sort=id:asc&size=100`)).json<LogRow[]>().slice(0, posts.length);
    expect(log.map((l) => [l.sequence, l.last_sequence, l.events, l.outcome])).toEqual(
      posts.map((d) => [d.events[0]!.sequence, d.events.at(-1)!.sequence, d.events.length, 'delivered']),
    );
    receiver.answer = (_d, res) => res.writeHead(204).end();
    await admin.delete(`/webhooks/${created.id}`);
  });
});

describe('GET /webhooks/{id}/deliveries', () => {
  it('pages like every list: X-Total-Count, Link, page+size, offset+limit, cursors, sort', async () => {
    receiver.deliveries.length = 0;
    const hook = await createHook(['artist.created']);
    // The eighth POST is held: the seven before it are all in the log, and nothing after them.
    const held = deferred();
    receiver.answer = (_d, res) => {
      if (receiver.deliveries.length === 8) void held.promise.then(() => res.writeHead(204).end());
      else res.writeHead(204).end();
    };
    for (let i = 1; i <= 8; i++) await createArtist(admin, `Logged ${i}`);
    await receiver.until((r) => r.deliveries.length === 8);
    const sequences = receiver.deliveries.slice(0, 7).map((d) => d.event.sequence);
    const base = `/webhooks/${hook.id}/deliveries`;

    const first = await admin.get(`${base}?size=3`);
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-total-count']).toBe('7');
    expect(first.headers.link).toBe(
      [`<${base}?page=1&size=3>; rel="first"`, `<${base}?page=2&size=3>; rel="next"`, `<${base}?page=3&size=3>; rel="last"`].join(', '),
    );
    // Following next to the end: every attempt once, newest first.
    const walked: LogRow[] = [];
    for (let res = first; ;) {
      walked.push(...res.json<LogRow[]>());
      const next = linkOf(res, 'next');
      if (!next) break;
      res = await admin.get(next);
      expect(res.headers['x-total-count']).toBe('7');
    }
    expect(walked.map((l) => l.sequence)).toEqual([...sequences].reverse());
    const ids = walked.map((l) => l.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));

    const cursorWalk: number[] = [];
    for (let res = await admin.get(`${base}?after=&size=2`); ;) {
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-total-count']).toBe('7');
      cursorWalk.push(...res.json<LogRow[]>().map((l) => l.id));
      const next = linkOf(res, 'next');
      if (!next) break;
      res = await admin.get(next);
    }
    expect(cursorWalk).toEqual(ids);

    const tail = await admin.get(`${base}?offset=5&limit=3`);
    expect(tail.json<LogRow[]>().map((l) => l.id)).toEqual(ids.slice(5));
    expect(tail.headers['x-total-count']).toBe('7');
    const ascending = await admin.get(`${base}?sort=id:asc&page=2&pagesize=4`);
    expect(ascending.json<LogRow[]>().map((l) => l.id)).toEqual([...ids].reverse().slice(4));
    const past = await admin.get(`${base}?page=9&size=3`);
    expect([past.json(), past.headers['x-total-count']]).toEqual([[], '7']);

    for (const query of ['size=0', 'size=101', 'page=0x10', 'size=1e1', 'limit=+10', 'after=garbage', 'sort=at', 'status=failed', 'page=1&offset=2']) {
      const res = await admin.get(`${base}?${query}`);
      expect([query, res.statusCode]).toEqual([query, 400]);
      errorBody(res);
    }
    expect((await admin.get('/webhooks/999999/deliveries?size=3')).statusCode).toBe(404);
    expect((await admin.get('/webhooks/999999/deliveries?size=0')).statusCode).toBe(400);
    held.resolve();
    receiver.answer = (_d, res) => res.writeHead(204).end();
    await admin.delete(`/webhooks/${hook.id}`);
  });
});

describe('retention (EVENTS_RETENTION_DAYS)', () => {
  it('is one job: the delivery log goes with the events it names, and each part says how many rows went', async () => {
    const own = await buildTestApp({ eventsPollMs: 20, webhookAllowPrivate: true, eventsRetentionDays: 1 });
    const its = await startReceiver({ secret: SECRET });
    const held = deferred();
    // The second POST is held: the first is then in the log, and nothing after it.
    its.answer = (_d, res) => {
      if (its.deliveries.length === 2) void held.promise.then(() => res.writeHead(204).end());
      else res.writeHead(204).end();
    };
    try {
      const api = client(own.app, own.tokens.admin);
      const hook = await createHook(['artist.created'], its.url, {}, api);
      for (const name of ['Aged 1', 'Aged 2', 'Aged 3']) await createArtist(api, name);
      await its.until((r) => r.deliveries.length === 2);
      const log = `/webhooks/${hook.id}/deliveries`;
      expect((await api.get(log)).json<LogRow[]>().map((l) => l.sequence)).toEqual([its.deliveries[0]!.event.sequence]);
      // Written three days ago, as far as the tables know.
      const old = new Date(Date.now() - 3 * 24 * 3600_000).toISOString();
      const tables = own.app.db.withTables<{ events: { at: string }; webhook_deliveries: { at: string } }>();
      await tables.updateTable('events').set({ at: old }).execute();
      await tables.updateTable('webhook_deliveries').set({ at: old }).execute();
      // Every event but the newest, and the one delivery logged.
      expect(await own.app.events.prune()).toEqual({ events: 2, 'webhook deliveries': 1 });
      expect((await api.get(log)).json<LogRow[]>()).toEqual([]);
      held.resolve();
      await api.delete(`/webhooks/${hook.id}`);
    } finally {
      held.resolve();
      await own.close();
      await its.close();
    }
  });
});
