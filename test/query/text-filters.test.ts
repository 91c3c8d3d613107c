import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { backend } from '../database.js';
import { buildTestApp, client, createAlbum, createArtist, createSong, errorBody, type Client, type TestContext } from '../helpers.js';
import { ids } from './fixtures.js';
import { directSqlite } from '../../src/db/precompiled.js';

// Typeahead, full text and ranges: what a bad value is told, and that a prefix is an index range
// on both backends (the oracle tests, property*.test.ts, check the answers).

const PREFIX_INVALID = 'Must contain a letter, digit, space or symbol: not only accents, control characters or U+10FFFF.';

let ctx: TestContext;
let api: Client;
let artistId: number;
let albumId: number;

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.write);
  artistId = (await createArtist(api, 'Radiohead')).id;
  await createArtist(api, 'radio birdman');
  await createArtist(api, 'Rage');
  albumId = (await createAlbum(api, artistId, 'OK Computer', 1997)).id;
  await createAlbum(api, artistId, 'Kid A', 2000);
  await createSong(api, artistId, albumId, 'Airbag', '04:44');
  await createSong(api, artistId, albumId, 'Lucky', '04:19');
});
afterAll(() => ctx.close());

describe('text and range filters', () => {
  it('name_starts_with ignores case (and accents); q matches word prefixes; both keep X-Total-Count and Link', async () => {
    const res = await api.get('/artists?name_starts_with=RADIO&sort=name:asc&size=1');
    expect(res.statusCode).toBe(200);
    expect(res.json().map((a: { name: string }) => a.name)).toEqual(['radio birdman']);
    expect(res.headers['x-total-count']).toBe('2');
    expect(res.headers.link).toContain('</artists?name_starts_with=RADIO&sort=name:asc&page=2&size=1>; rel="next"');
    const q = await api.get('/artists?q=bird');
    expect(q.json().map((a: { name: string }) => a.name)).toEqual(['radio birdman']);
    expect(q.headers['x-total-count']).toBe('1');
  });

  it('ranges on album years and song durations are strict', async () => {
    const albums = await api.get(`/artists/${artistId}/albums?released_after=1997&released_before=2001`);
    expect(albums.json().albums.map((a: { name: string }) => a.name)).toEqual(['Kid A']);
    const songs = await api.get(`/artists/${artistId}/albums/${albumId}/songs?longer_than=04:19`);
    expect(songs.json().songs.map((s: { name: string }) => s.name)).toEqual(['Airbag']);
    expect(ids((await api.get(`/artists/${artistId}/albums/${albumId}/songs?shorter_than=04:19`)).json().songs)).toEqual([]);
  });

  it.each([
    ['/artists?q=%20-*', { field: 'q', invalid: 'Must contain at least one letter or digit.' }],
    ['/artists?name_starts_with=', { field: 'name_starts_with', minLength: 'Must not be empty.' }],
    ['/artists?name_starts_with=%F4%8F%BF%BF', { field: 'name_starts_with', invalid: PREFIX_INVALID }],
    // Only an accent (a combining mark), or only control and format characters: nothing to start with.
    ['/artists?name_starts_with=%CC%81', { field: 'name_starts_with', invalid: PREFIX_INVALID }],
    ['/artists?name_starts_with=%E2%80%8D%01', { field: 'name_starts_with', invalid: PREFIX_INVALID }],
    ['/SONGS?longer_than=4:19', { field: 'longer_than', pattern: 'Must be mm:ss: two digits, a colon, two digits (seconds 00-59).' }],
    ['/ALBUMS?released_after=late', { field: 'released_after', type: 'Must be integer.' }],
    ['/users?first_name_starts_with=a&first_name_starts_with=b', { field: 'first_name_starts_with', invalid: 'Given more than once; takes a single value.' }],
  ])('rejects %s', async (url, detail) => {
    const path = url.replace('/SONGS', `/artists/${artistId}/albums/${albumId}/songs`).replace('/ALBUMS', `/artists/${artistId}/albums`);
    const res = await client(ctx.app, ctx.tokens.admin).get(path);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([detail]);
  });

  it('an alias may hold a prefix filter', async () => {
    const admin = client(ctx.app, ctx.tokens.admin);
    await admin.post('/users', { first_name: 'Ana', last_name: 'Silva', email: 'ana@example.com', age: 30, status: 'active', country: 'Brazil' });
    await admin.post('/users', { first_name: 'Bruno', last_name: 'Lima', email: 'bruno@example.com', age: 30, status: 'active', country: 'Brazil' });
    expect((await admin.put('/aliases/users/an-people', { query: 'first_name_starts_with=AN' })).statusCode).toBeLessThan(300);
    const res = await admin.get('/users/an-people');
    expect(res.statusCode).toBe(200);
    expect(res.json().map((u: { first_name: string }) => u.first_name)).toEqual(['Ana']);
  });
});

describe('a prefix is an index range', () => {
  const KEY = '"name_key"';
  const statement = `select "id" from "artists" where ${KEY} >= $1 and ${KEY} < $2 order by ${KEY} asc, "id" asc limit 20`;

  it.runIf(backend === 'sqlite')('SQLite searches artists_name_idx by range', () => {
    const handle = directSqlite(ctx.app.db)!;
    const plan = handle.prepare(`explain query plan ${statement.replace(/\$\d/g, '?')}`).all('ra', 'rb') as { detail: string }[];
    expect(plan.map((r) => r.detail).join(' | ')).toMatch(/SEARCH artists USING (COVERING )?INDEX artists_name_idx \(name_key>\? AND name_key<\?\)/);
  });

  it.runIf(backend === 'postgres')('PostgreSQL can read it through a name index', async () => {
    // A handful of rows: the planner would scan the table; forbid that to see whether the index serves the range.
    const plan = await ctx.app.db.transaction().execute(async (tx) => {
      await sql`set local enable_seqscan = off`.execute(tx);
      const text = statement.replace('$1', "'ra'").replace('$2', "'rb'");
      return (await sql.raw<{ 'QUERY PLAN': string }>(`explain ${text}`).execute(tx)).rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    // Either name index serves it (artists_name_desc_idx read backward is in the same order).
    expect(plan).toMatch(/(Index (Only )?Scan( Backward)? using|Bitmap Index Scan on) artists_name(_desc)?_idx/);
    expect(plan).toMatch(/Index Cond: .*>=.*<'?/s);
  });
});
