import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECURITY_HEADERS } from '../../src/http/security-headers.js';
import { ADMIN_TOKEN, buildTestApp, client, type Client, type TestContext } from '../helpers.js';
import { openStream } from './sse.js';

// GET /events/stream over a real socket: its 200 carries the headers every answer carries.

let ctx: TestContext;
let admin: Client;
let base: string;

beforeAll(async () => {
  ctx = await buildTestApp({ eventsHeartbeatMs: 20, eventsPollMs: 20, rateLimitPerMinute: 100_000 });
  admin = client(ctx.app, ADMIN_TOKEN);
  base = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(() => ctx.close());

async function newToken(body: Record<string, unknown> = {}): Promise<{ id: number; token: string; expires_at: string | null }> {
  const res = await admin.post('/tokens', { scopes: ['read'], ...body });
  expect(res.statusCode).toBe(201);
  return res.json();
}

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
