import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { buildTestApp, client, createAlbum, createArtist, createSong, type Client, type TestContext } from '../helpers.js';

let ctx: TestContext;
let api: Client;
let baseUrl: string;
let pageTotal = 10;

beforeAll(async () => {
  ctx = await buildTestApp({}, (app) => {
    // A list whose body stays the same while its paging header changes.
    app.get('/__paged', { config: { scope: 'read' }, schema: {} }, async (_request, reply) => {
      reply.header('X-Total-Count', String(pageTotal));
      return [{ id: 1 }];
    });
  });
  api = client(ctx.app, ctx.tokens.write);
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
});
afterAll(() => ctx.close());

describe('ETags of composite representations and lists', () => {
  it('GET /artists/{id}/albums: 304 while nothing changed, a new ETag when an embedded album changes', async () => {
    const artist = await createArtist(api);
    const album = await createAlbum(api, artist.id);
    const url = `/artists/${artist.id}/albums`;
    const first = await api.get(url);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    expect((await api.get(url, { 'if-none-match': etag })).statusCode).toBe(304);

    await api.patch(`/artists/${artist.id}/albums/${album.id}`, { year: 2011 });
    const afterEdit = await api.get(url, { 'if-none-match': etag });
    expect(afterEdit.statusCode).toBe(200);
    expect(afterEdit.headers.etag).not.toBe(etag);

    await createAlbum(api, artist.id, 'Another');
    const afterAdd = await api.get(url, { 'if-none-match': afterEdit.headers.etag as string });
    expect(afterAdd.statusCode).toBe(200);
    expect(afterAdd.json().albums).toHaveLength(2);
  });

  it('GET .../albums/{id}/songs: a new ETag when a song is deleted', async () => {
    const artist = await createArtist(api);
    const album = await createAlbum(api, artist.id);
    const song = await createSong(api, artist.id, album.id);
    const url = `/artists/${artist.id}/albums/${album.id}/songs`;
    const etag = (await api.get(url)).headers.etag as string;
    expect((await api.get(url, { 'if-none-match': etag })).statusCode).toBe(304);
    await api.delete(`/artists/${artist.id}/albums/${album.id}/songs/${song.id}`);
    const res = await api.get(url, { 'if-none-match': etag });
    expect(res.statusCode).toBe(200);
    expect(res.json().songs).toEqual([]);
  });

  it('lists send an ETag that also covers their paging headers', async () => {
    const tokens = client(ctx.app, ctx.tokens.admin);
    const list = await tokens.get('/tokens');
    expect(list.headers.etag).toMatch(/^"[^"]+"$/);
    expect((await tokens.get('/tokens', { 'if-none-match': list.headers.etag as string })).statusCode).toBe(304);

    const paged = await api.get('/__paged');
    expect((await api.get('/__paged', { 'if-none-match': paged.headers.etag as string })).statusCode).toBe(304);
    pageTotal = 11;
    const changed = await api.get('/__paged', { 'if-none-match': paged.headers.etag as string });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers['x-total-count']).toBe('11');
  });

  it('errors carry no ETag and are never turned into 304', async () => {
    const res = await api.get('/artists/999999', { 'if-none-match': '*' });
    expect(res.statusCode).toBe(404);
    expect(res.headers.etag).toBeUndefined();
  });
});

describe('concurrent PATCHes with the same If-Match (real server)', () => {
  async function patchOverHttp(url: string, etag: string, body: Record<string, unknown>, token = ctx.tokens.write) {
    const res = await fetch(`${baseUrl}${url}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'if-match': etag },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { name?: string; code?: string } & Record<string, unknown> };
  }

  it('exactly one of several racing editors wins; the others get 412 and their change is not applied', async () => {
    for (let round = 0; round < 3; round++) {
      const artist = await createArtist(api, `Race ${round}`);
      const url = `/artists/${artist.id}`;
      const etag = (await api.get(url)).headers.etag as string;
      const names = ['Editor A', 'Editor B', 'Editor C', 'Editor D'];
      const results = await Promise.all(names.map((name) => patchOverHttp(url, etag, { name })));
      const winners = results.filter((r) => r.status === 200);
      const losers = results.filter((r) => r.status === 412);
      expect(winners).toHaveLength(1);
      expect(losers).toHaveLength(names.length - 1);
      for (const loser of losers) expect(loser.body.code).toBe('PRECONDITION_FAILED');
      expect((await api.get(url)).json().name).toBe(winners[0]!.body.name);
    }
  });

  it('two editors of the same song: one 200, one 412', async () => {
    const artist = await createArtist(api);
    const album = await createAlbum(api, artist.id);
    const song = await createSong(api, artist.id, album.id);
    const url = `/artists/${artist.id}/albums/${album.id}/songs/${song.id}`;
    const etag = (await api.get(url)).headers.etag as string;
    const statuses = (await Promise.all([patchOverHttp(url, etag, { name: 'One' }), patchOverHttp(url, etag, { name: 'Two' })])).map((r) => r.status);
    expect(statuses.sort()).toEqual([200, 412]);
  });

  it('two admins editing the same user: one 200, one 412, and only the winner is stored', async () => {
    const admin = client(ctx.app, ctx.tokens.admin);
    const person = { first_name: 'Rae', last_name: 'Cruz', email: 'rae@example.com', age: 30, status: 'active', country: 'Peru' };
    const created = (await admin.post('/users', person)).json<{ id: number }>();
    const url = `/users/${created.id}`;
    const etag = (await admin.get(url)).headers.etag as string;
    const results = await Promise.all([patchOverHttp(url, etag, { age: 31 }, ctx.tokens.admin), patchOverHttp(url, etag, { age: 32 }, ctx.tokens.admin)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 412]);
    const winner = results.find((r) => r.status === 200)!;
    expect((await admin.get(url)).json()).toEqual({ ...person, id: created.id, age: winner.body.age });
  });
});
