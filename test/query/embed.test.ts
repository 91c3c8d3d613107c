import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, createSong, errorBody, type Client, type TestContext } from '../helpers.js';
import { links } from './fixtures.js';

// embed=albums on GET /artists and embed=songs on GET /artists/{id}/albums: each row carries its
// first 10 children by id, against what was created.

let ctx: TestContext;
let api: Client;
const made: { id: number; albums: { id: number; name: string; year: number; image: string }[] }[] = [];
let songs: { id: number; name: string; time: string }[];

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.write);
  for (const [i, count] of [12, 0, 3].entries()) {
    const artist = await createArtist(api, `Embed ${i}`);
    const albums = [];
    for (let k = 0; k < count; k++) albums.push(await createAlbum(api, artist.id, `Album ${i}.${k}`, 1990 + k));
    made.push({ id: artist.id, albums });
  }
  songs = [];
  for (let k = 0; k < 11; k++) songs.push(await createSong(api, made[0]!.id, made[0]!.albums[1]!.id, `Song ${k}`, `0${k % 10}:30`));
});
afterAll(() => ctx.close());

describe('embed', () => {
  it('GET /artists?embed=albums: each artist with its first 10 albums by id; Link keeps embed', async () => {
    const res = await api.get('/artists?embed=albums&sort=name:desc&size=2');
    expect(res.statusCode).toBe(200);
    const body = res.json<{ id: number; albums: unknown[] }[]>();
    expect(body.map((a) => a.id)).toEqual([made[2]!.id, made[1]!.id]);
    expect(body[0]!.albums).toEqual(made[2]!.albums);
    expect(body[1]!.albums).toEqual([]);
    expect(links(res.headers.link).next).toBe('/artists?embed=albums&sort=name:desc&page=2&size=2');
    const next = (await api.get(links(res.headers.link).next!)).json<{ id: number; albums: unknown[] }[]>();
    expect(next[0]!.albums).toEqual(made[0]!.albums.slice(0, 10));
    // Without embed the items are as before.
    expect(Object.keys((await api.get('/artists?size=1')).json()[0])).toEqual(['id', 'name', 'image']);
  });

  it('GET /artists/{id}/albums?embed=songs: each album with its first 10 songs by id', async () => {
    const res = await api.get(`/artists/${made[0]!.id}/albums?embed=songs&size=3`);
    expect(res.statusCode).toBe(200);
    const albums = res.json().albums as { id: number; songs: unknown[] }[];
    expect(albums.map((a) => a.id)).toEqual(made[0]!.albums.slice(0, 3).map((a) => a.id));
    expect(albums.map((a) => a.songs)).toEqual([[], songs.slice(0, 10), []]);
  });

  it('the ETag follows the representation', async () => {
    const plain = await api.get('/artists?size=3');
    const embedded = await api.get('/artists?size=3&embed=albums');
    expect(plain.headers.etag).not.toBe(embedded.headers.etag);
    const again = await api.get('/artists?size=3&embed=albums', { 'if-none-match': String(embedded.headers.etag) });
    expect(again.statusCode).toBe(304);
  });

  it.each([
    ['/artists?embed=songs', { field: 'embed', enum: 'Must be one of: albums.' }],
    ['/artists?embed=albums&embed=albums', { field: 'embed', invalid: 'Given more than once; takes a single value.' }],
    ['/users?embed=albums', { field: 'embed', unknown: 'Unknown query parameter.' }],
  ])('rejects %s', async (url, detail) => {
    const res = await client(ctx.app, ctx.tokens.admin).get(url);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([detail]);
  });
});
