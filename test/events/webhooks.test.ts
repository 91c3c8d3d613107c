import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, errorBody, type Client, type LogEntry, type TestContext } from '../helpers.js';
import { startReceiver, verifySignature, type Receiver } from './receiver.js';

let ctx: TestContext;
let admin: Client;
let receiver: Receiver;
const SECRET = 'a-shared-secret-of-some-length';

const logWatchers = new Set<(entry: LogEntry) => void>();

beforeAll(async () => {
  ctx = await buildTestApp(
    { eventsPollMs: 20, webhookAllowPrivate: true, webhookRetryBaseMs: 10, webhookMaxAttempts: 3, webhookTimeoutMs: 2000 },
    undefined,
    (entry) => logWatchers.forEach((w) => w(entry)),
  );
  admin = client(ctx.app, ctx.tokens.admin);
  receiver = await startReceiver();
});
afterAll(async () => {
  await ctx.close();
  await receiver.close();
});

interface Hook {
  id: number;
  url: string;
  types: string[];
  status: string;
  last_sequence: number;
  attempts: number;
  last_error: string | null;
}

async function createHook(types: string[], url = receiver.url): Promise<Hook> {
  const res = await admin.post('/webhooks', { url, types, secret: SECRET });
  expect(res.statusCode).toBe(201);
  const hook = res.json<Hook>();
  expect(res.headers.location).toBe(`/webhooks/${hook.id}`);
  return hook;
}

describe('POST /webhooks', () => {
  it('delivers events of its types, signed, in order, and logs each delivery', async () => {
    receiver.deliveries.length = 0;
    const hook = await createHook(['artist.created', 'album.created']);
    expect(hook).toMatchObject({ url: receiver.url, types: ['artist.created', 'album.created'], status: 'active', attempts: 0, last_error: null });
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
      expect(d.headers['content-type']).toBe('application/json');
      expect(verifySignature(SECRET, d.headers['x-catalogue-signature'] as string, d.body)).toBe(true);
      expect(verifySignature('another-secret-entirely', d.headers['x-catalogue-signature'] as string, d.body)).toBe(false);
      expect(d.headers['x-catalogue-sequence']).toBe(String(d.event.sequence));
      expect(d.headers['x-catalogue-event']).toBe(d.event.type);
      expect(d.headers['x-catalogue-event-id']).toBe(d.event.id);
    }
    // An attempt is logged just after the receiver answered; deliveries go in order, so once a later
    // event has arrived every earlier attempt is in the log.
    await createArtist(admin, 'Sentinel');
    await receiver.until((r) => r.deliveries.length >= 3);
    const sentinel = receiver.deliveries[2]!.event.sequence;
    const log = (await admin.get(`/webhooks/${hook.id}/deliveries`))
      .json<{ sequence: number; outcome: string; status_code: number; attempt: number }[]>()
      .filter((l) => l.sequence < sentinel);
    expect(log.map((l) => [l.sequence, l.outcome, l.status_code, l.attempt])).toEqual([
      [second!.event.sequence, 'delivered', 204, 1],
      [first!.event.sequence, 'delivered', 204, 1],
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
    const log = (await admin.get(`/webhooks/${hook.id}/deliveries`))
      .json<
        {
          sequence: number;
          outcome: string;
          status_code: number;
          attempt: number;
          error: string | null;
        }[]
      >()
      .filter((l) => l.sequence !== receiver.deliveries[4]!.event.sequence);
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
    let marked!: () => void;
    const failing = new Promise<void>((resolve) => (marked = resolve));
    const watch = (entry: LogEntry) => entry.msg === 'webhook marked failing' && entry.webhook === hook.id && marked();
    logWatchers.add(watch);
    await createArtist(admin, 'Never acknowledged');
    await failing;
    logWatchers.delete(watch);
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
    const bad = await admin.post('/webhooks', { url: 'ftp://example.com/x', types: ['song.renamed'], secret: 'short' });
    expect(bad.statusCode).toBe(400);
    expect(
      errorBody(bad)
        .details?.map((d) => d.field)
        .sort(),
    ).toEqual(['secret', 'types.0', 'url']);
    const hook = await createHook(['song.created']);
    const list = (await admin.get('/webhooks')).json<Hook[]>();
    expect(list.map((h) => h.id)).toContain(hook.id);
    expect(JSON.stringify(list)).not.toContain(SECRET);
    expect((await admin.delete(`/webhooks/${hook.id}`)).statusCode).toBe(204);
    expect((await admin.delete(`/webhooks/${hook.id}`)).statusCode).toBe(404);
    expect((await admin.get(`/webhooks/${hook.id}/deliveries`)).statusCode).toBe(404);
  });
});

describe('webhook targets (SSRF policy)', () => {
  it('refuses loopback, private and link-local targets unless WEBHOOK_ALLOW_PRIVATE is on', async () => {
    const strict = await buildTestApp({ webhookAllowPrivate: false });
    try {
      const api = client(strict.app, strict.tokens.admin);
      for (const url of [
        'http://127.0.0.1:9/x',
        'http://localhost/x',
        'http://10.1.2.3/',
        'http://169.254.169.254/latest',
        'http://[::1]/x',
        'http://192.168.0.1/',
      ]) {
        const res = await api.post('/webhooks', { url, types: ['artist.created'], secret: SECRET });
        expect(res.statusCode, url).toBe(400);
        expect(errorBody(res).details).toEqual([{ field: 'url', target: expect.stringContaining('public address') as string }]);
      }
      expect((await api.post('/webhooks', { url: 'https://hooks.example.com/catalogue', types: ['artist.created'], secret: SECRET })).statusCode).toBe(201);
    } finally {
      await strict.close();
    }
  });
});
