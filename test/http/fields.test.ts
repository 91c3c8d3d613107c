import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, createSong, errorBody, type Client, type TestContext } from '../helpers.js';
import { links } from '../query/fixtures.js';

// fields= on lists, single resources and composites (their embedded items too): only the listed
// properties, unknown names 400, the ETag follows the representation.

let ctx: TestContext;
let api: Client;
let artist: { id: number; name: string; image: string };
let album: { id: number; name: string; year: number; image: string };
let song: { id: number; name: string; time: string };

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.admin);
  artist = await createArtist(api, 'Fields Band');
  album = await createAlbum(api, artist.id, 'Fields Album', 2001);
  song = await createSong(api, artist.id, album.id, 'Fields Song', '03:30');
  await api.post('/users', { first_name: 'Ana', last_name: 'Silva', email: 'ana@example.com', age: 30, status: 'active', country: 'Brazil' });
});
afterAll(() => ctx.close());

describe('fields=', () => {
  it('on a list keeps only the listed properties, in the route order, and Link keeps fields', async () => {
    const res = await api.get('/artists?fields=name,id&size=1');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([{ id: artist.id, name: 'Fields Band' }]);
    expect(Object.keys(res.json()[0])).toEqual(['id', 'name']);
    expect(links(res.headers.link).first).toBe('/artists?fields=name,id&page=1&size=1');
    const users = await api.get('/users?fields=email&status=active');
    expect(users.json()).toEqual([{ email: 'ana@example.com' }]);
  });

  it('on a composite, for its embedded items too', async () => {
    const res = await api.get(`/artists/${artist.id}/albums?fields=name,albums.id,albums.year`);
    expect(res.json()).toEqual({ name: 'Fields Band', albums: [{ id: album.id, year: 2001 }] });
    const whole = await api.get(`/artists/${artist.id}/albums?fields=albums`);
    expect(whole.json()).toEqual({ albums: [album] });
    const songs = await api.get(`/artists/${artist.id}/albums/${album.id}/songs?fields=songs.time`);
    expect(songs.json()).toEqual({ songs: [{ time: '03:30' }] });
    const embedded = await api.get(`/artists?embed=albums&fields=id,albums.name`);
    expect(embedded.json()).toEqual([{ id: artist.id, albums: [{ name: 'Fields Album' }] }]);
  });

  it('on single resources; the ETag follows the representation and revalidates', async () => {
    const full = await api.get(`/artists/${artist.id}`);
    const some = await api.get(`/artists/${artist.id}?fields=name`);
    expect(some.json()).toEqual({ name: 'Fields Band' });
    expect(some.headers.etag).not.toBe(full.headers.etag);
    expect((await api.get(`/artists/${artist.id}?fields=name`, { 'if-none-match': String(some.headers.etag) })).statusCode).toBe(304);
    expect((await api.get(`/artists/${artist.id}?fields=image`, { 'if-none-match': String(some.headers.etag) })).statusCode).toBe(200);
    const songOne = await api.get(`/artists/${artist.id}/albums/${album.id}/songs/${song.id}?fields=name`);
    expect(songOne.json()).toEqual({ name: 'Fields Song' });
    const userId = (await api.get('/users?fields=id')).json()[0].id as number;
    expect((await api.get(`/users/${userId}?fields=age,country`)).json()).toEqual({ age: 30, country: 'Brazil' });
    const list = await api.get('/artists?fields=id');
    const listFull = await api.get('/artists');
    expect(list.headers.etag).not.toBe(listFull.headers.etag);
  });

  it('a key percent-encoded is the same key (fields= is looked for in the decoded query, not in its text)', async () => {
    const res = await api.get(`/artists?f%69elds=name&size=1`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([{ name: 'Fields Band' }]);
    const bad = await api.get('/artists?%66ields=bio');
    expect(bad.statusCode).toBe(400);
    expect(errorBody(bad).details).toEqual([expect.objectContaining({ field: 'fields' })]);
  });

  it.each([
    ['/artists?fields=id,bio', 'Unknown field "bio". Fields: id, name, image, albums, albums.id, albums.name, albums.year, albums.image.'],
    ['/artists/ARTIST?fields=albums', 'Unknown field "albums". Fields: name, image.'],
    ['/search?q=fields&fields=kind,albums.id', 'Unknown field "albums.id". Fields: kind, id, name, path.'],
  ])('%s is 400 naming the unknown field', async (url, text) => {
    const res = await api.get(url.replace('ARTIST', String(artist.id)));
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([{ field: 'fields', enum: text }]);
  });

  it('an empty name or a repeated fields is 400', async () => {
    expect(errorBody(await api.get('/artists?fields=id,,name')).details).toEqual([
      { field: 'fields', invalid: 'Write fields as names separated by commas, with no empty name.' },
    ]);
    expect((await api.get('/artists?fields=id&fields=name')).statusCode).toBe(400);
  });

  it('works on /search, /tokens and /aliases', async () => {
    expect((await api.get('/search?q=fields&fields=kind,id&size=1')).json()).toEqual([{ kind: 'artist', id: artist.id }]);
    expect(Object.keys((await api.get('/tokens?fields=id')).json()[0])).toEqual(['id']);
    expect((await api.get('/aliases?fields=name')).json()).toEqual([{ name: 'young-brazilians' }]);
  });
});
