import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, buildTestApp, client, type TestContext } from '../helpers.js';

let ctx: TestContext;

beforeAll(async () => {
  ctx = await buildTestApp();
});
afterAll(() => ctx.close());

describe('security headers', () => {
  it('are sent on API responses, errors included', async () => {
    for (const res of [await client(ctx.app, ctx.tokens.read).get('/artists/999'), await client(ctx.app).get('/artists/1')]) {
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
      expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
      expect(res.headers['content-security-policy']).toContain("object-src 'none'");
      expect(res.headers['x-powered-by']).toBeUndefined();
    }
  });

  it('let /docs render: its CSP allows every script and stylesheet the page loads, all from this origin', async () => {
    const page = await client(ctx.app).get('/docs/');
    expect(page.statusCode).toBe(200);
    const csp = String(page.headers['content-security-policy']);
    const directive = (name: string) => new RegExp(`(?:^|;)\\s*${name} ([^;]*)`).exec(csp)?.[1]?.split(/\s+/) ?? [];
    expect(directive('script-src')).toContain("'self'");
    expect(directive('style-src')).toContain("'self'");
    expect(directive('img-src')).toEqual(expect.arrayContaining(["'self'", 'data:']));
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>\s*\S/); // no inline script the CSP would block
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(4);
    for (const asset of assets) {
      expect(asset).not.toMatch(/^(https?:)?\/\//);
      const res = await client(ctx.app).get(new URL(asset, 'http://x/docs/').pathname);
      expect(res.statusCode, asset).toBe(200);
    }
  });
});

describe('CORS', () => {
  it('is closed by default: no Access-Control-Allow-Origin, preflight not answered', async () => {
    const res = await client(ctx.app, ctx.tokens.read).get('/artists/1', { origin: 'https://evil.example' });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await ctx.app.inject({
      method: 'OPTIONS',
      url: '/artists',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.statusCode).toBeGreaterThanOrEqual(400);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('allows exactly the origins in CORS_ORIGINS', async () => {
    const open = await buildTestApp({ corsOrigins: ['https://app.example'] });
    try {
      const preflight = await open.app.inject({
        method: 'OPTIONS',
        url: '/artists',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
      });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example');
      expect(String(preflight.headers['access-control-allow-headers'])).toContain('Authorization');
      const res = await client(open.app, open.tokens.write).post('/artists', { name: 'A', image: 'https://a.example/a' }, { origin: 'https://app.example' });
      expect(res.statusCode).toBe(201);
      expect(res.headers['access-control-allow-origin']).toBe('https://app.example');
      expect(String(res.headers['access-control-expose-headers'])).toContain('Location');
      const other = await client(open.app, open.tokens.read).get('/artists/1', { origin: 'https://evil.example' });
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await open.close();
    }
  });
});

describe('token storage', () => {
  it('keeps only hashes: no token secret appears anywhere in the tokens table', async () => {
    const created = await client(ctx.app, ADMIN_TOKEN).post('/tokens', { scopes: ['read'], name: 'stored' });
    expect(created.statusCode).toBe(201);
    const secrets = [created.json().token as string, ctx.tokens.read, ctx.tokens.write, ctx.tokens.admin, ADMIN_TOKEN];
    const rows = await ctx.app.db.selectFrom('tokens').selectAll().execute();
    expect(rows.length).toBeGreaterThanOrEqual(4);
    const dump = JSON.stringify(rows);
    for (const secret of secrets) {
      expect(dump).not.toContain(secret);
      expect(dump).not.toContain(secret.slice(3, 20)); // nor a recognisable part of it
    }
  });

  it('never returns a secret from GET /tokens', async () => {
    const res = await client(ctx.app, ADMIN_TOKEN).get('/tokens');
    for (const secret of [ctx.tokens.read, ctx.tokens.write, ctx.tokens.admin]) expect(res.body).not.toContain(secret);
  });
});
