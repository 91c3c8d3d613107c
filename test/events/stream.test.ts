import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { SECURITY_HEADERS } from '../../src/http/security-headers.js';
import { ADMIN_TOKEN, beforeInstant, buildTestApp, client, createArtist, type Client, type TestContext } from '../helpers.js';
import { openStream, type SseClient } from './sse.js';

// GET /events/stream over a real socket: a stream lives no longer than its token, whichever instance
// ends the token, and its 200 carries the headers every answer carries. The streams of the bootstrap
// admin token (CATALOGUE_ADMIN_TOKEN, which never ends) are the witnesses: when one has received an
// event, every stream of the same process has been handed it or been ended before it.

let ctx: TestContext;
let admin: Client;
let base: string;
/** A second instance on the same database. */
let other: FastifyInstance;
let otherAdmin: Client;

beforeAll(async () => {
  ctx = await buildTestApp({ eventsHeartbeatMs: 20, eventsPollMs: 20, rateLimitPerMinute: 100_000 });
  admin = client(ctx.app, ADMIN_TOKEN);
  base = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  other = await buildApp(ctx.config);
  await other.ready();
  otherAdmin = client(other, ADMIN_TOKEN);
});
afterAll(async () => {
  await other.close();
  await ctx.close();
});

async function newToken(body: Record<string, unknown> = {}): Promise<{ id: number; token: string; expires_at: string | null }> {
  const res = await admin.post('/tokens', { scopes: ['read'], ...body });
  expect(res.statusCode).toBe(201);
  return res.json();
}

/** A stream that has subscribed and caught up (its first heartbeat comes after both). */
async function subscribed(token: string): Promise<SseClient> {
  const stream = await openStream(`${base}/events/stream`, token);
  expect(stream.status).toBe(200);
  await stream.until((c) => c.heartbeats > 0);
  return stream;
}

const names = (stream: SseClient) => stream.events.map((e) => e.data.resource.name);

/** Resolves when the stream has ended or has received the event of the artist `id`, whichever comes first. */
async function endedOrReceived(stream: SseClient, id: number): Promise<void> {
  const received = stream.until((c) => c.events.some((e) => e.data.resource.id === id)).catch(() => undefined);
  await Promise.race([stream.ended, received]);
}

describe('GET /events/stream and its token', () => {
  it('ends when its token is revoked: nothing written after the revocation reaches it', async () => {
    const { id, token } = await newToken();
    const stream = await subscribed(token);
    const witness = await subscribed(ADMIN_TOKEN);
    await createArtist(admin, 'Before revocation');
    await stream.until((c) => c.events.length === 1);

    expect((await admin.delete(`/tokens/${id}`)).statusCode).toBe(204);
    const after = await createArtist(admin, 'After revocation');
    await witness.until((c) => c.events.some((e) => e.data.resource.id === after.id));
    await endedOrReceived(stream, after.id);
    expect(names(stream)).toEqual(['Before revocation']);
    await stream.ended;
    expect(names(stream)).toEqual(['Before revocation']);
    witness.close();
  });

  it('ends when its token is revoked through another instance, before the next event', async () => {
    const { id, token } = await newToken();
    const stream = await subscribed(token);
    const witness = await subscribed(ADMIN_TOKEN);
    await createArtist(otherAdmin, 'Before revocation elsewhere');
    await stream.until((c) => c.events.length === 1);

    // Both the revocation and the write go through the other instance: this one learns of them only
    // from the database.
    expect((await otherAdmin.delete(`/tokens/${id}`)).statusCode).toBe(204);
    const after = await createArtist(otherAdmin, 'After revocation elsewhere');
    await witness.until((c) => c.events.some((e) => e.data.resource.id === after.id));
    await endedOrReceived(stream, after.id);
    expect(names(stream)).toEqual(['Before revocation elsewhere']);
    await stream.ended;
    expect(names(stream)).toEqual(['Before revocation elsewhere']);
    // Reconnecting is refused: the client learns why.
    expect((await client(ctx.app, token).get('/events/stream')).statusCode).toBe(401);
    witness.close();
  });

  it('ends at its token’s expires_at, and nothing written after reaches it', async () => {
    const witness = await subscribed(ADMIN_TOKEN);
    // Subscribed and one event seen before the token expires: with an expiry further ahead again if
    // the machine took longer than that (under load it took 1.2 s of 3).
    const {
      value: { token, expiresAt, stream },
    } = await beforeInstant(3000, async (instant) => {
      const { token, expires_at } = await newToken({ expires_at: new Date(instant).toISOString() });
      const stream = await openStream(`${base}/events/stream`, token);
      try {
        expect(stream.status).toBe(200);
        await stream.until((c) => c.heartbeats > 0);
        await createArtist(admin, 'Before expiry');
        await stream.until((c) => c.events.length === 1);
        return { token, expiresAt: Date.parse(expires_at!), stream };
      } catch (err) {
        stream.close();
        throw err;
      }
    });

    // Nothing is written meanwhile: the stream ends by the clock alone, not before its time.
    await stream.ended;
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
    const after = await createArtist(admin, 'After expiry');
    await witness.until((c) => c.events.some((e) => e.data.resource.id === after.id));
    expect(names(stream)).toEqual(['Before expiry']);
    expect((await client(ctx.app, token).get('/events/stream')).statusCode).toBe(401);
    witness.close();
  });

  it('keeps the stream of CATALOGUE_ADMIN_TOKEN and of a token without expiry open', async () => {
    const { token } = await newToken();
    const lasting = await subscribed(token);
    const bootstrap = await subscribed(ADMIN_TOKEN);
    // Another token revoked meanwhile ends only its own stream.
    const { id: doomed } = await newToken();
    expect((await admin.delete(`/tokens/${doomed}`)).statusCode).toBe(204);
    const artist = await createArtist(admin, 'Still streamed');
    await lasting.until((c) => c.events.some((e) => e.data.resource.id === artist.id));
    await bootstrap.until((c) => c.events.some((e) => e.data.resource.id === artist.id));
    lasting.close();
    bootstrap.close();
  });
});

describe('GET /events/stream headers', () => {
  it('carries the security headers and RateLimit-* as every other answer does', async () => {
    const { token } = await newToken();
    const plain = await client(ctx.app, token).get('/events?after=0&size=1');
    expect(plain.statusCode).toBe(200);
    const stream = await openStream(`${base}/events/stream`, token);
    stream.close();
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
      expect(stream.headers.get(name), name).toBe(value);
      expect(plain.headers[name.toLowerCase()], name).toBe(value);
    }
    expect(stream.headers.get('ratelimit-limit')).toBe('100000');
    expect(stream.headers.get('ratelimit-limit')).toBe(plain.headers['ratelimit-limit']);
    // The same token's budget, one request later.
    expect(Number(stream.headers.get('ratelimit-remaining'))).toBe(Number(plain.headers['ratelimit-remaining']) - 1);
    expect(Number(stream.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    expect(stream.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
