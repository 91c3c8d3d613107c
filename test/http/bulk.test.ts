import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, errorBody, type Client, type TestContext } from '../helpers.js';

// Bulk create: an array body on the creating POSTs, all-or-nothing, answered with the created
// resources (ids, in the order sent); with Idempotency-Key replayed like any POST.

let ctx: TestContext;
let api: Client;
let admin: Client;

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.write);
  admin = client(ctx.app, ctx.tokens.admin);
});
afterAll(() => ctx.close());

const image = 'https://img.example.com/x.jpg';
const count = async (path: string) => Number((await admin.get(`${path}${path.includes('?') ? '&' : '?'}size=1`)).headers['x-total-count']);

describe('bulk create', () => {
  it('creates every artist of an array in one answer, in the order sent, stored as one would be', async () => {
    const res = await api.post('/artists', [
      { name: ' Bulk A ', image },
      { name: 'Bulk B', image },
    ]);
    expect(res.statusCode).toBe(201);
    const created = res.json<{ id: number; name: string }[]>();
    expect(created.map((a) => a.name)).toEqual(['Bulk A', 'Bulk B']);
    expect(created[1]!.id).toBeGreaterThan(created[0]!.id);
    expect(res.headers.location).toBeUndefined();
    expect((await api.get(`/artists/${created[0]!.id}`)).json()).toEqual({ name: 'Bulk A', image });
  });

  it('albums, songs and users too', async () => {
    const artist = await createArtist(api, 'Bulk Parent');
    const albums = await api.post(`/artists/${artist.id}/albums`, [
      { name: 'One', year: 2001, image },
      { name: 'Two', year: 2002, image },
    ]);
    expect(albums.statusCode).toBe(201);
    expect(albums.json().map((a: { year: number }) => a.year)).toEqual([2001, 2002]);
    const album = albums.json()[0] as { id: number };
    const songs = await api.post(`/artists/${artist.id}/albums/${album.id}/songs`, [
      { name: 'S1', time: '01:00' },
      { name: 'S2', time: '02:00' },
      { name: 'S3', time: '03:00' },
    ]);
    expect(songs.statusCode).toBe(201);
    expect(songs.json().map((s: { name: string }) => s.name)).toEqual(['S1', 'S2', 'S3']);
    expect(await count(`/artists/${artist.id}/albums/${album.id}/songs`)).toBe(3);
    const users = await admin.post('/users', [
      { first_name: 'A', last_name: 'B', email: 'bulk1@example.com', age: 20, status: 'active', country: 'Chile' },
      { first_name: 'C', last_name: 'D', email: 'bulk2@example.com', age: 30, status: 'inactive', country: 'Peru' },
    ]);
    expect(users.statusCode).toBe(201);
    expect(users.json().map((u: { email: string }) => u.email)).toEqual(['bulk1@example.com', 'bulk2@example.com']);
  });

  it('is all-or-nothing: one invalid item is 400 naming it, one duplicate email is 409, nothing stored', async () => {
    const before = await count('/artists');
    const bad = await api.post('/artists', [
      { name: 'Fine', image },
      { name: '', image },
    ]);
    expect(bad.statusCode).toBe(400);
    expect(errorBody(bad).details!.map((d) => d.field)).toEqual(['1.name', '1.name']); // too short, and blank
    expect(await count('/artists')).toBe(before);
    const users = await count('/users');
    const dup = await admin.post('/users', [
      { first_name: 'E', last_name: 'F', email: 'dup@example.com', age: 20, status: 'active', country: 'Chile' },
      { first_name: 'G', last_name: 'H', email: 'DUP@example.com', age: 20, status: 'active', country: 'Chile' },
    ]);
    expect(dup.statusCode).toBe(409);
    expect(await count('/users')).toBe(users);
    const artist = await createArtist(api, 'No Such Album');
    expect((await api.post(`/artists/${artist.id}/albums/999999/songs`, [{ name: 'x', time: '01:00' }])).statusCode).toBe(404);
  });

  it('takes at most 100 items, at least one; a single item is answered as before', async () => {
    const many = Array.from({ length: 101 }, (_, i) => ({ name: `n${i}`, image }));
    const res = await api.post('/artists', many);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([{ field: 'body', maximum: 'Must have at most 100 items.' }]);
    expect((await api.post('/artists', [])).statusCode).toBe(400);
    const one = await api.post('/artists', { name: 'Single', image });
    expect(one.statusCode).toBe(201);
    expect(one.headers.location).toBe(`/artists/${one.json().id}`);
  });

  it('with Idempotency-Key, a retried array is replayed, not created twice', async () => {
    const artist = await createArtist(api, 'Idem');
    const body = [
      { name: 'I1', year: 1999, image },
      { name: 'I2', year: 2000, image },
    ];
    const first = await api.post(`/artists/${artist.id}/albums`, body, { 'idempotency-key': 'bulk-key-1' });
    const again = await api.post(`/artists/${artist.id}/albums`, body, { 'idempotency-key': 'bulk-key-1' });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect(await count(`/artists/${artist.id}/albums`)).toBe(2);
    await createAlbum(api, artist.id, 'I3');
  });
});
