import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, buildTestApp, client, createAlbum, createArtist, createSong, type TestContext } from '../helpers.js';
import * as arb from './arbitraries.js';

// FUZZ_RUNS raises the number of requests locally; CI runs the default.
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);

let ctx: TestContext;

beforeAll(async () => {
  ctx = await buildTestApp();
  const api = client(ctx.app, ctx.tokens.write);
  for (const name of ['Radiohead', 'Björk']) {
    const artist = await createArtist(api, name);
    const album = await createAlbum(api, artist.id);
    await createSong(api, artist.id, album.id);
  }
});
afterAll(() => ctx.close());

/** Every stored row of every application table, to prove a rejected request changed nothing (either backend). */
const TABLES = ['artists', 'albums', 'songs', 'users', 'aliases', 'tokens'] as const;
async function snapshot(): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of TABLES) out[table] = await ctx.app.db.selectFrom(table).selectAll().orderBy('id').execute();
  return out;
}

const LEAKS = /\n\s+at |node_modules|\/src\/|\.ts:\d|SQLITE|sqlite_|select .* from|insert into|syntax error|TypeError|ReferenceError/i;

function checkResponse(req: InjectOptions, res: { statusCode: number; headers: Record<string, unknown>; body: string }) {
  const where = `${req.method} ${JSON.stringify(req.url)} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
  expect(res.statusCode, where).toBeLessThan(500);
  expect(res.body, where).not.toMatch(LEAKS);
  if (res.statusCode < 400 || req.method === 'HEAD') return;
  expect(res.headers['content-type'], where).toBe('application/json; charset=utf-8');
  const body = JSON.parse(res.body) as Record<string, unknown>;
  expect(
    Object.keys(body).filter((k) => !['code', 'message', 'details'].includes(k)),
    where,
  ).toEqual([]);
  expect(body.code, where).toMatch(/^[A-Z_]+$/);
  expect(typeof body.message, where).toBe('string');
  if (body.details !== undefined) {
    expect(Array.isArray(body.details), where).toBe(true);
    for (const d of body.details as Record<string, unknown>[]) {
      expect(typeof d.field, where).toBe('string');
      expect(Object.keys(d).length, where).toBe(2);
    }
  }
}

describe('hostile input (property-based)', () => {
  it(`never answers 5xx, always the standard error body, and a rejected request changes nothing (${RUNS} requests)`, async () => {
    const tokens = [ADMIN_TOKEN, ctx.tokens.read, ctx.tokens.write, ctx.tokens.admin];
    const request = fc.record({ method: arb.method, path: arb.path, query: arb.query, headers: arb.headers(tokens), body: arb.body });
    await fc.assert(
      fc.asyncProperty(request, async ({ method, path, query, headers, body }) => {
        const req: InjectOptions = { method: method as InjectOptions['method'], url: `${path}${query}`, headers };
        if (body !== undefined) req.payload = body;
        const before = await snapshot();
        const res = await ctx.app.inject(req);
        checkResponse(req, res);
        if (res.statusCode >= 400) expect(await snapshot(), `${method} ${JSON.stringify(req.url)} changed data`).toEqual(before);
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
  }, 120_000);

  it('leaves the service healthy, the stored data consistent and the prototypes of plain objects clean', async () => {
    expect((await client(ctx.app).get('/health')).json()).toEqual({ status: 'ok' });
    expect((await client(ctx.app).get('/ready')).statusCode).toBe(200);
    expect(Object.getOwnPropertyNames(Object.prototype).filter((k) => /polluted|admin/.test(k))).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Fuzzed requests with a valid token may legitimately create, change or delete rows, so what is
    // checked is consistency: no album without its artist, no song without its album...
    const { artists, albums, songs } = await snapshot();
    const artistIds = new Set(artists!.map((a) => (a as { id: number }).id));
    const albumIds = new Set(albums!.map((a) => (a as { id: number }).id));
    expect(albums!.filter((a) => !artistIds.has((a as { artist_id: number }).artist_id))).toEqual([]);
    expect(songs!.filter((s) => !albumIds.has((s as { album_id: number }).album_id))).toEqual([]);
    // ...and the write and read paths still work end to end, with a token minted now: the fuzzed
    // requests carry the admin token and may have revoked the ones made before (DELETE /tokens/{id}).
    const minted = await client(ctx.app, ADMIN_TOKEN).post('/tokens', { scopes: ['write'], name: 'after fuzz' });
    expect(minted.statusCode).toBe(201);
    const api = client(ctx.app, minted.json<{ token: string }>().token);
    const artist = await createArtist(api, 'Portishead', 'https://img.example.com/portishead.jpg');
    const res = await api.get(`/artists/${artist.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ name: 'Portishead', image: 'https://img.example.com/portishead.jpg' });
  });
});
