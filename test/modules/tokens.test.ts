import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, errorBody, type Client, type TestContext } from '../helpers.js';

let ctx: TestContext;
let admin: Client;

beforeAll(async () => {
  ctx = await buildTestApp();
  admin = client(ctx.app, ctx.tokens.admin);
});
afterAll(() => ctx.close());

describe('POST /tokens', () => {
  it('creates a token shown once: 201, Location, {id, token, scopes, name}', async () => {
    const res = await admin.post('/tokens', { scopes: ['read', 'write'], name: 'ci bot' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      id: expect.any(Number),
      token: expect.stringMatching(/^mc_[A-Za-z0-9_-]{43}$/),
      scopes: ['read', 'write'],
      name: 'ci bot',
      expires_at: null,
    });
    expect(res.headers.location).toBe(`/tokens/${body.id}`);
    const use = await client(ctx.app, body.token).post('/artists', { name: 'Via new token', image: 'https://a.example/x' });
    expect(use.statusCode).toBe(201);
  });

  it('stores only a hash: the secret appears nowhere in the database', async () => {
    const res = await admin.post('/tokens', { scopes: ['read'] });
    const { token } = res.json();
    const rows = await ctx.app.db.selectFrom('tokens').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.token_hash))).toBe(true);
  });

  it.each([
    ['no scopes', {}, { field: 'scopes', required: 'Missing data for required field.' }],
    ['empty scopes', { scopes: [] }, { field: 'scopes', minimum: 'Must have at least 1 item.' }],
    ['an unknown scope', { scopes: ['root'] }, { field: 'scopes.0', enum: 'Must be one of: read, write, admin, metrics.' }],
    ['an expiry that is not a date-time', { scopes: ['read'], expires_at: 'tomorrow' }, { field: 'expires_at', format: 'Must be a valid date-time.' }],
    ['an expiry without a time zone', { scopes: ['read'], expires_at: '2099-01-01T00:00:00' }, { field: 'expires_at', format: 'Must be a valid date-time.' }],
    ['an expiry in the past', { scopes: ['read'], expires_at: '2020-01-01T00:00:00Z' }, { field: 'expires_at', minimum: 'Must be in the future.' }],
    ['an unknown field', { scopes: ['read'], owner: 'x' }, { field: 'owner', unknown: 'Unknown field.' }],
  ])('rejects %s', async (_label, body, detail) => {
    const res = await admin.post('/tokens', body);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toContainEqual(detail);
  });
});

describe('GET /tokens', () => {
  it('lists active tokens without secrets', async () => {
    const res = await admin.get('/tokens');
    expect(res.statusCode).toBe(200);
    const list = res.json<Record<string, unknown>[]>();
    expect(list.length).toBeGreaterThanOrEqual(3);
    for (const t of list) {
      expect(Object.keys(t).sort()).toEqual(['created_at', 'expires_at', 'id', 'name', 'scopes']);
    }
  });
});

describe('DELETE /tokens/{token_id}', () => {
  it('revokes at once: the token is refused on its next request', async () => {
    const created = (await admin.post('/tokens', { scopes: ['read'], name: 'to revoke' })).json();
    const user = client(ctx.app, created.token);
    expect((await user.get('/health')).statusCode).toBe(200);
    const del = await admin.delete(`/tokens/${created.id}`);
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    const after = await user.post('/artists', { name: 'x', image: 'https://a.example/x' });
    expect(after.statusCode).toBe(401);
    const listed = (await admin.get('/tokens')).json<{ id: number }[]>();
    expect(listed.map((t) => t.id)).not.toContain(created.id);
  });

  it('answers 404 for an unknown or already revoked token', async () => {
    const res = await admin.delete('/tokens/987654');
    expect(res.statusCode).toBe(404);
    expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Token not found.' });
  });
});

describe('tokens that expire', () => {
  it('works until expires_at, then is refused with 401 and drops out of the list', async () => {
    const res = await admin.post('/tokens', { scopes: ['write'], name: 'temporary', expires_at: '2099-06-30T12:00:00+02:00' });
    expect(res.statusCode).toBe(201);
    const created = res.json<{ id: number; token: string; expires_at: string }>();
    expect(created.expires_at).toBe('2099-06-30T10:00:00.000Z');
    const user = client(ctx.app, created.token);
    expect((await user.post('/artists', { name: 'Before expiry', image: 'https://a.example/x' })).statusCode).toBe(201);
    let listed = (await admin.get('/tokens')).json<{ id: number; expires_at: string | null }[]>();
    expect(listed.find((t) => t.id === created.id)?.expires_at).toBe('2099-06-30T10:00:00.000Z');

    // Its time comes (moved, rather than waited for).
    await ctx.app.db
      .updateTable('tokens')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', created.id)
      .execute();
    const after = await user.post('/artists', { name: 'After expiry', image: 'https://a.example/x' });
    expect(after.statusCode).toBe(401);
    expect(errorBody(after)).toEqual({ code: 'UNAUTHORIZED', message: 'The token has expired.' });
    expect(after.headers['www-authenticate']).toBe('Bearer realm="music-catalogue", error="invalid_token"');
    listed = (await admin.get('/tokens')).json<{ id: number; expires_at: string | null }[]>();
    expect(listed.map((t) => t.id)).not.toContain(created.id);
    const stored = await ctx.app.db.selectFrom('artists').select('name').where('name', '=', 'After expiry').execute();
    expect(stored).toEqual([]);
  });
});

describe('expires_at as RFC 3339 writes it', () => {
  // What each spelling is stored as (UTC, to the millisecond).
  const accepted: [string, string][] = [
    ['2030-06-30T23:59:59Z', '2030-06-30T23:59:59.000Z'],
    ['2030-06-30T23:59:59+05:30', '2030-06-30T18:29:59.000Z'],
    ['2030-06-30T23:59:59-00:00', '2030-06-30T23:59:59.000Z'],
    ['2030-06-30t23:59:59z', '2030-06-30T23:59:59.000Z'],
    ['2030-06-30 23:59:59Z', '2030-06-30T23:59:59.000Z'],
    ['2030-06-30T23:59:59.123456789Z', '2030-06-30T23:59:59.123Z'],
    ['2030-06-30T23:59:59.5-23:59', '2030-07-01T23:58:59.500Z'],
    // Leap seconds, where one can fall: read as the second before, with the fraction.
    ['2030-06-30T23:59:60Z', '2030-06-30T23:59:59.000Z'],
    ['2030-12-31T23:59:60.25Z', '2030-12-31T23:59:59.250Z'],
    ['2030-07-01T05:29:60+05:30', '2030-06-30T23:59:59.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ];

  it.each(accepted)('takes %s as %s, and the token works', async (sent, stored) => {
    const res = await admin.post('/tokens', { scopes: ['read'], expires_at: sent });
    expect(res.statusCode).toBe(201);
    const created = res.json<{ id: number; token: string; expires_at: string }>();
    expect(created.expires_at).toBe(stored);
    expect((await admin.get(`/tokens/${created.id}`)).json<{ expires_at: string }>().expires_at).toBe(stored);
    expect((await client(ctx.app, created.token).get('/artists')).statusCode).toBe(200);
  });

  const refused: [string, string, string][] = [
    ['2001-01-01T00:00:00Z', 'minimum', 'Must be in the future.'],
    ['0000-01-01T00:00:00Z', 'minimum', 'Must be in the future.'],
    ['0099-06-30T12:00:00Z', 'minimum', 'Must be in the future.'],
    ['9999-12-31T23:59:59-00:01', 'maximum', 'Must be at most 9999-12-31T23:59:59Z in UTC.'],
    // Not RFC 3339, though ISO 8601 or Ajv's date-time takes them.
    ['2030-06-30T23:59:59+05', 'format', 'Must be an RFC 3339 date-time with a time zone (Z or ±hh:mm), e.g. 2027-01-31T00:00:00Z.'],
    ['2030-06-30T23:59:59+0530', 'format', 'Must be an RFC 3339 date-time with a time zone (Z or ±hh:mm), e.g. 2027-01-31T00:00:00Z.'],
    ['2030-06-30\t23:59:59Z', 'format', 'Must be an RFC 3339 date-time with a time zone (Z or ±hh:mm), e.g. 2027-01-31T00:00:00Z.'],
    // Not a date-time at all: a leap second is 23:59:60 in UTC, 2030 is no leap year, a time zone is required.
    ['2030-06-30T23:59:60+05:30', 'format', 'Must be a valid date-time.'],
    ['2030-02-29T00:00:00Z', 'format', 'Must be a valid date-time.'],
    ['2030-06-30T23:59:59', 'format', 'Must be a valid date-time.'],
  ];

  it.each(refused)('answers 400 for %s (%s), creating nothing', async (sent, rule, message) => {
    const before = (await admin.get('/tokens')).headers['x-total-count'];
    const res = await admin.post('/tokens', { scopes: ['read'], expires_at: sent });
    expect(res.statusCode).toBe(400);
    expect(errorBody(res)).toEqual({ code: 'BAD_REQUEST', message: 'Request validation failed.', details: [{ field: 'expires_at', [rule]: message }] });
    expect((await admin.get('/tokens')).headers['x-total-count']).toBe(before);
  });
});

describe('the metrics scope', () => {
  it('reads GET /metrics and nothing else', async () => {
    const created = (await admin.post('/tokens', { scopes: ['metrics'], name: 'prometheus' })).json<{ token: string; scopes: string[] }>();
    expect(created.scopes).toEqual(['metrics']);
    const scraper = client(ctx.app, created.token);
    const metrics = await scraper.get('/metrics');
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toContain('http_requests_total');
    for (const res of [
      await scraper.get('/artists'),
      await scraper.get('/tokens'),
      await scraper.post('/artists', { name: 'x', image: 'https://a.example/x' }),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(errorBody(res).code).toBe('FORBIDDEN');
    }
    expect((await client(ctx.app, ctx.tokens.admin).get('/metrics')).statusCode).toBe(200);
    expect((await client(ctx.app, ctx.tokens.write).get('/metrics')).statusCode).toBe(403);
  });
});
