import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, createSong, errorBody, type Client, type TestContext } from '../helpers.js';
import { ids, links } from './fixtures.js';

let ctx: TestContext;
let api: Client;
let artists: { id: number; name: string; image: string }[];

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.write);
  artists = [];
  for (const name of ['radiohead', 'Björk', 'Air', 'portishead', 'Air']) artists.push(await createArtist(api, name));
});
afterAll(() => ctx.close());

describe('GET /artists', () => {
  it('lists artists {id, name, image} by id, with X-Total-Count and Link', async () => {
    const res = await client(ctx.app, ctx.tokens.read).get('/artists');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(artists);
    expect(res.headers['x-total-count']).toBe('5');
    expect(links(res.headers.link)).toEqual({ first: '/artists?page=1&size=20', last: '/artists?page=1&size=20' });
  });

  it('filters by exact name', async () => {
    const res = await api.get('/artists?name=Air');
    expect(ids(res.json())).toEqual([artists[2]!.id, artists[4]!.id]);
  });

  it('sorts by name case-insensitively, ties by id, and pages', async () => {
    const res = await api.get('/artists?sort=name:asc&page=1&size=3');
    expect(ids(res.json())).toEqual([artists[2]!.id, artists[4]!.id, artists[1]!.id]);
    expect(links(res.headers.link).next).toBe('/artists?sort=name:asc&page=2&size=3');
    const desc = await api.get('/artists?sort_by=name&order=desc');
    expect(desc.json().map((a: { name: string }) => a.name)).toEqual(['radiohead', 'portishead', 'Björk', 'Air', 'Air']);
  });

  it.each([
    ['sort=image:asc', { field: 'sort', enum: 'Sort field "image" is not sortable. Must be one of: id, name.' }],
    ['image=x', { field: 'image', unknown: 'Unknown query parameter.' }],
    ['limit=0', { field: 'limit', minimum: 'Must be at least 1.' }],
  ])('rejects %s', async (query, detail) => {
    const res = await api.get(`/artists?${query}`);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([detail]);
  });

  it('needs a token', async () => {
    expect((await client(ctx.app).get('/artists')).statusCode).toBe(401);
  });
});

describe('GET /artists/{artist_id}/albums (embedded albums)', () => {
  let artistId: number;
  let albums: { id: number; name: string; year: number }[];
  beforeAll(async () => {
    artistId = (await createArtist(api, 'Many Albums')).id;
    albums = [];
    for (const [name, year] of [
      ['b-sides', 1999],
      ['Amnesiac', 2001],
      ['Kid A', 2000],
      ['Airbag EP', 1998],
      ['Hail', 2003],
    ] as const) {
      albums.push(await createAlbum(api, artistId, name, year));
    }
  });

  it('keeps the artist shape and paginates the albums with headers', async () => {
    const res = await api.get(`/artists/${artistId}/albums?sort=year:desc&size=2&page=2`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['name', 'image', 'albums']);
    expect(body.name).toBe('Many Albums');
    expect(ids(body.albums)).toEqual([albums[2]!.id, albums[0]!.id]);
    expect(res.headers['x-total-count']).toBe('5');
    expect(links(res.headers.link)).toEqual({
      first: `/artists/${artistId}/albums?sort=year:desc&page=1&size=2`,
      prev: `/artists/${artistId}/albums?sort=year:desc&page=1&size=2`,
      next: `/artists/${artistId}/albums?sort=year:desc&page=3&size=2`,
      last: `/artists/${artistId}/albums?sort=year:desc&page=3&size=2`,
    });
  });

  it('filters by year and by name', async () => {
    expect(ids((await api.get(`/artists/${artistId}/albums?year=2000`)).json().albums)).toEqual([albums[2]!.id]);
    expect(ids((await api.get(`/artists/${artistId}/albums?name=Hail`)).json().albums)).toEqual([albums[4]!.id]);
  });

  it('sorts by name case-insensitively', async () => {
    const res = await api.get(`/artists/${artistId}/albums?sort_by=name`);
    expect(res.json().albums.map((a: { name: string }) => a.name)).toEqual(['Airbag EP', 'Amnesiac', 'b-sides', 'Hail', 'Kid A']);
  });

  it('a page past the end has an empty albums array', async () => {
    const res = await api.get(`/artists/${artistId}/albums?offset=50&limit=10`);
    expect(res.json().albums).toEqual([]);
    expect(res.headers['x-total-count']).toBe('5');
  });

  it.each([
    ['year=soon', { field: 'year', type: 'Must be integer.' }],
    ['sort=time:asc', { field: 'sort', enum: 'Sort field "time" is not sortable. Must be one of: id, name, year.' }],
    ['page=1&offset=2', { field: 'offset', invalid: 'Cannot be combined with page; use one style: page+size, offset+limit, page+pagesize or after+size.' }],
  ])('rejects %s', async (query, detail) => {
    const res = await api.get(`/artists/${artistId}/albums?${query}`);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([detail]);
  });

  it('still answers 404 for an unknown artist', async () => {
    expect((await api.get('/artists/987654/albums?size=5')).statusCode).toBe(404);
  });
});

describe('GET /artists/{artist_id}/albums/{album_id}/songs (embedded songs)', () => {
  let artistId: number;
  let albumId: number;
  let songs: { id: number; name: string; time: string }[];
  beforeAll(async () => {
    artistId = (await createArtist(api, 'Songs Artist')).id;
    albumId = (await createAlbum(api, artistId, 'Songs Album', 2001)).id;
    songs = [];
    for (const [name, time] of [
      ['airbag', '04:44'],
      ['Paranoid Android', '06:23'],
      ['Lucky', '04:19'],
      ['Airbag', '01:00'],
    ] as const) {
      songs.push(await createSong(api, artistId, albumId, name, time));
    }
  });

  it('keeps the album shape and sorts songs by time', async () => {
    const res = await api.get(`/artists/${artistId}/albums/${albumId}/songs?sort=time:desc`);
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json())).toEqual(['name', 'year', 'image', 'songs']);
    expect(ids(res.json().songs)).toEqual([songs[1]!.id, songs[0]!.id, songs[2]!.id, songs[3]!.id]);
    expect(res.headers['x-total-count']).toBe('4');
  });

  it('sorts names as people read them, the exact text breaking ties (Airbag before airbag), and filters by exact name', async () => {
    const sorted = await api.get(`/artists/${artistId}/albums/${albumId}/songs?sort_by=name&order=asc`);
    expect(ids(sorted.json().songs)).toEqual([songs[3]!.id, songs[0]!.id, songs[2]!.id, songs[1]!.id]);
    const named = await api.get(`/artists/${artistId}/albums/${albumId}/songs?name=Lucky`);
    expect(ids(named.json().songs)).toEqual([songs[2]!.id]);
  });

  it('paginates with page + pagesize and Link', async () => {
    const res = await api.get(`/artists/${artistId}/albums/${albumId}/songs?page=2&pagesize=3`);
    expect(ids(res.json().songs)).toEqual([songs[3]!.id]);
    expect(links(res.headers.link)).toEqual({
      first: `/artists/${artistId}/albums/${albumId}/songs?page=1&pagesize=3`,
      prev: `/artists/${artistId}/albums/${albumId}/songs?page=1&pagesize=3`,
      last: `/artists/${artistId}/albums/${albumId}/songs?page=2&pagesize=3`,
    });
  });

  it('rejects an unknown parameter', async () => {
    const res = await api.get(`/artists/${artistId}/albums/${albumId}/songs?year=2001`);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([{ field: 'year', unknown: 'Unknown query parameter.' }]);
  });
});

describe('OpenAPI', () => {
  it('documents the query parameters and the list headers of every list', async () => {
    const doc = (await api.get('/openapi.json')).json();
    for (const path of ['/users', '/artists', '/artists/{artist_id}/albums', '/artists/{artist_id}/albums/{album_id}/songs', '/users/{id}']) {
      const op = doc.paths[path].get;
      const names = op.parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name);
      expect(names).toEqual(expect.arrayContaining(['sort', 'sort_by', 'order', 'page', 'size', 'offset', 'limit', 'pagesize']));
      expect(Object.keys(op.responses['200'].headers)).toEqual(expect.arrayContaining(['X-Total-Count', 'Link']));
    }
    expect(doc.paths['/aliases/{collection}/{name}'].put).toBeDefined();
    expect(doc.components.schemas.User).toBeDefined();
  });
});
