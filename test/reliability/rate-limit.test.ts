import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, buildTestApp, client, errorBody, type TestContext } from '../helpers.js';
import { ConfigError, loadConfig } from '../../src/config.js';

let ctx: TestContext | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

const fromIp = (remoteAddress: string) => ({ remoteAddress });

describe('rate limiting per token (RATE_LIMIT_PER_MINUTE)', () => {
  it('answers 429 TOO_MANY_REQUESTS with Retry-After and RateLimit-* once a token used its budget', async () => {
    ctx = await buildTestApp({ rateLimitPerMinute: 5 });
    const api = client(ctx.app, ctx.tokens.read);
    for (let i = 1; i <= 5; i++) {
      const res = await api.get('/tokens');
      expect(res.statusCode).toBe(403); // read token on an admin route: still counted
      expect(res.headers['ratelimit-limit']).toBe('5');
      expect(res.headers['ratelimit-remaining']).toBe(String(5 - i));
      expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
    }
    const limited = await api.get('/artists/1');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(errorBody(limited)).toEqual({ code: 'TOO_MANY_REQUESTS', message: expect.stringMatching(/^Rate limit of 5 requests per minute exceeded/) });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.headers['ratelimit-limit']).toBe('5');
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(limited.headers['ratelimit-reset']).toBe(limited.headers['retry-after']);
    expect(limited.headers['x-request-id']).toBeDefined();
  });

  it('keeps a separate budget for each token, even from the same address', async () => {
    ctx = await buildTestApp({ rateLimitPerMinute: 3 });
    for (let i = 0; i < 3; i++) expect((await client(ctx.app, ctx.tokens.read).get('/artists/1')).statusCode).toBe(404);
    expect((await client(ctx.app, ctx.tokens.read).get('/artists/1')).statusCode).toBe(429);
    expect((await client(ctx.app, ctx.tokens.write).get('/artists/1')).statusCode).toBe(404);
  });

  it('limits one token wherever it comes from', async () => {
    ctx = await buildTestApp({ rateLimitPerMinute: 3 });
    const auth = { authorization: `Bearer ${ctx.tokens.read}` };
    const codes = [];
    for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4']) {
      codes.push((await ctx.app.inject({ method: 'GET', url: '/artists/1', headers: auth, ...fromIp(ip) })).statusCode);
    }
    expect(codes).toEqual([404, 404, 404, 429]);
  });

  it('is off with RATE_LIMIT_PER_MINUTE=0: no 429 and no RateLimit headers', async () => {
    ctx = await buildTestApp({ rateLimitPerMinute: 0 });
    const api = client(ctx.app, ctx.tokens.read);
    for (let i = 0; i < 50; i++) {
      const res = await api.get('/artists/1');
      expect(res.statusCode).toBe(404);
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
  });
});

describe('rate limiting per address without a token', () => {
  it('limits unauthenticated requests by client address', async () => {
    ctx = await buildTestApp({ rateLimitPerMinute: 3 });
    const get = (ip: string) => ctx!.app.inject({ method: 'GET', url: '/openapi.json', ...fromIp(ip) });
    for (let i = 0; i < 3; i++) expect((await get('10.1.1.1')).statusCode).toBe(200);
    const limited = await get('10.1.1.1');
    expect(limited.statusCode).toBe(429);
    expect(errorBody(limited).code).toBe('TOO_MANY_REQUESTS');
    expect((await get('10.1.1.2')).statusCode).toBe(200);
  });

  it('never throttles /health and /ready', async () => {
    ctx = await buildTestApp({ rateLimitPerMinute: 3 });
    for (let i = 0; i < 10; i++) {
      expect((await client(ctx.app).get('/health')).statusCode).toBe(200);
      expect((await client(ctx.app).get('/ready')).statusCode).toBe(200);
    }
  });
});

describe('failed authentication attempts', () => {
  it('are limited per address: guessing many tokens ends in 429 with Retry-After', async () => {
    ctx = await buildTestApp({ rateLimitPerMinute: 1000 });
    const guess = (i: number, ip = '10.2.2.2') =>
      ctx!.app.inject({ method: 'GET', url: '/artists/1', headers: { authorization: `Bearer guess-${i}` }, ...fromIp(ip) });
    for (let i = 0; i < 30; i++) expect((await guess(i)).statusCode).toBe(401);
    const blocked = await guess(30);
    expect(blocked.statusCode).toBe(429);
    expect(errorBody(blocked)).toEqual({ code: 'TOO_MANY_REQUESTS', message: expect.stringMatching(/failed authentication attempts/) });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // Its RateLimit-* describe the policy that refused it (30 failures a minute), not the request
    // budget, which has 968 of 1000 left and would tell the client to go on.
    expect(blocked.headers['ratelimit-limit']).toBe('30');
    expect(blocked.headers['ratelimit-remaining']).toBe('0');
    expect(blocked.headers['ratelimit-reset']).toBe(blocked.headers['retry-after']);
    const noToken = await ctx.app.inject({ method: 'GET', url: '/artists/1', ...fromIp('10.2.2.2') });
    expect(noToken.statusCode).toBe(429);
    expect(noToken.headers['ratelimit-remaining']).toBe('0');
    expect(noToken.headers['ratelimit-reset']).toBe(noToken.headers['retry-after']);
    // A valid token from that address is never refused: the lockout is for guessing, and a client
    // with a token shares the address with the guesser (a NAT, a proxy) through no fault of its own.
    for (const token of [ctx.tokens.read, ADMIN_TOKEN]) {
      const valid = await ctx.app.inject({ method: 'GET', url: '/artists/1', headers: { authorization: `Bearer ${token}` }, ...fromIp('10.2.2.2') });
      expect(valid.statusCode).toBe(404);
      expect(errorBody(valid).message).toBe('Artist not found.');
    }
    expect((await guess(32)).statusCode).toBe(429);
    // Other addresses are not affected.
    expect((await guess(31, '10.2.2.3')).statusCode).toBe(401);
  });

  it('does not count successful requests as failures', async () => {
    ctx = await buildTestApp({ rateLimitPerMinute: 1000 });
    const api = client(ctx.app, ctx.tokens.read);
    for (let i = 0; i < 40; i++) expect((await api.get('/artists/1')).statusCode).toBe(404);
  });
});

describe('behind a reverse proxy (TRUST_PROXY)', () => {
  const via = (peer: string, forwardedFor: string, headers: Record<string, string> = {}) =>
    ctx!.app.inject({ method: 'GET', url: '/openapi.json', headers: { 'x-forwarded-for': forwardedFor, ...headers }, ...fromIp(peer) });

  it('limits each client by the address the trusted proxy forwards, not by the proxy', async () => {
    ctx = await buildTestApp({ rateLimitPerMinute: 3, trustProxy: ['10.0.0.10'] });
    for (let i = 0; i < 3; i++) expect((await via('10.0.0.10', '203.0.113.1')).statusCode).toBe(200);
    const limited = await via('10.0.0.10', '203.0.113.1');
    expect(limited.statusCode).toBe(429);
    expect(errorBody(limited).code).toBe('TOO_MANY_REQUESTS');
    // Another client behind the same proxy has its own budget.
    expect((await via('10.0.0.10', '203.0.113.2')).statusCode).toBe(200);
  });

  it('ignores X-Forwarded-For from a peer it does not trust', async () => {
    ctx = await buildTestApp({ rateLimitPerMinute: 3, trustProxy: ['10.0.0.10'] });
    for (let i = 0; i < 3; i++) expect((await via('198.51.100.7', `192.0.2.${i}`)).statusCode).toBe(200);
    expect((await via('198.51.100.7', '192.0.2.99')).statusCode).toBe(429);
  });

  it('with a hop count, takes the address that many hops back', async () => {
    ctx = await buildTestApp({ rateLimitPerMinute: 4, trustProxy: 1 });
    for (let i = 0; i < 4; i++) expect((await via('10.0.0.10', `198.51.100.${i}, 203.0.113.5`)).statusCode).toBe(200);
    expect((await via('10.0.0.11', '203.0.113.5')).statusCode).toBe(429);
    expect((await via('10.0.0.10', '203.0.113.6')).statusCode).toBe(200);
  });

  it('locks out the guessing client behind the proxy, not the others', async () => {
    ctx = await buildTestApp({ rateLimitPerMinute: 1000, trustProxy: ['10.0.0.10'] });
    const guess = (i: number, client: string) =>
      ctx!.app.inject({ method: 'GET', url: '/artists/1', headers: { authorization: `Bearer guess-${i}`, 'x-forwarded-for': client }, ...fromIp('10.0.0.10') });
    for (let i = 0; i < 30; i++) expect((await guess(i, '203.0.113.9')).statusCode).toBe(401);
    expect((await guess(30, '203.0.113.9')).statusCode).toBe(429);
    expect((await guess(31, '203.0.113.10')).statusCode).toBe(401);
  });

  it('reads TRUST_PROXY as a hop count or a list of addresses and ranges, and refuses anything else', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.10, 10.1.0.0/16,::1,loopback' }).trustProxy).toEqual(['10.0.0.10', '10.1.0.0/16', '::1', 'loopback']);
    expect(() => loadConfig({ TRUST_PROXY: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUST_PROXY: 'proxy.example.com' })).toThrow(/^TRUST_PROXY must be a hop count or a comma-separated list/);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/33' })).toThrow(/TRUST_PROXY/);
  });
});
