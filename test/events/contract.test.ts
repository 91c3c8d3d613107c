import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, createSong, type Client, type TestContext } from '../helpers.js';
import { EVENT_CASCADES, EVENT_PATHS, EVENT_SOURCES, EVENT_TYPES, type EventResource } from '../../src/modules/events/events.contract.js';

// The event contract (src/modules/events/events.contract.ts, with each resource's table module) against
// the events the database records: the triggers were made by migrations from frozen copies of it, so
// this is what holds the two together. Each resource written through the API, then read back from
// GET /events and from GET of the resource.

interface Ev {
  type: string;
  path: string;
  resource: Record<string, unknown>;
}

let ctx: TestContext;
let admin: Client;
let seen: Ev[];
/** The resource as GET returned it after each write, by event type. */
const asGot = new Map<string, Record<string, unknown>>();
/** Each resource's row as the contract's paths name its columns. */
const rows = new Map<EventResource, Record<string, unknown>>();

beforeAll(async () => {
  ctx = await buildTestApp();
  admin = client(ctx.app, ctx.tokens.admin);
  const artist = await createArtist(admin, 'Björk', 'https://img.example.com/b.jpg');
  const album = await createAlbum(admin, artist.id, 'Homogenic', 1997, 'https://img.example.com/h.jpg');
  const song = await createSong(admin, artist.id, album.id, 'Jóga', '05:05');
  const user = (
    await admin.post('/users', { first_name: 'Åsa', last_name: 'Ek', email: 'asa@example.com', age: 30, status: 'active', country: 'Sweden' })
  ).json<Record<string, unknown> & { id: number }>();
  expect((await admin.put('/aliases/users/swedes', { query: 'lives_in=Sweden' })).statusCode).toBe(201);
  const urls: Record<EventResource, string> = {
    artist: `/artists/${artist.id}`,
    album: `/artists/${artist.id}/albums/${album.id}`,
    song: `/artists/${artist.id}/albums/${album.id}/songs/${song.id}`,
    user: `/users/${user.id}`,
    alias: '/aliases/users/swedes',
  };
  rows.set('artist', artist);
  rows.set('album', { ...album, artist_id: artist.id });
  rows.set('song', { ...song, artist_id: artist.id, album_id: album.id });
  rows.set('user', user);
  rows.set('alias', { name: 'swedes', collection: 'users' });
  const patches: Record<EventResource, unknown> = {
    artist: { name: 'Björk Guðmundsdóttir' },
    album: { year: 1998 },
    song: { time: '05:06' },
    user: { age: 31 },
    alias: { query: 'lives_in=Sweden&status=active' },
  };
  // GET /artists/{id} leaves the id out (the interface document's representation): put back.
  const got = async (type: EventResource) => ({ id: rows.get(type)!.id, ...(await admin.get(urls[type])).json<Record<string, unknown>>() });
  for (const type of ['artist', 'album', 'song', 'user'] as const) {
    asGot.set(`${type}.created`, await got(type));
    expect((await admin.patch(urls[type], patches[type])).statusCode).toBe(200);
    asGot.set(`${type}.updated`, await got(type));
  }
  asGot.set('alias.created', { name: 'swedes', collection: 'users', query: 'lives_in=Sweden' });
  expect((await admin.put(urls.alias, patches.alias)).statusCode).toBe(200);
  asGot.set('alias.updated', { name: 'swedes', collection: 'users', query: 'lives_in=Sweden&status=active' });
  // Deleted one by one, children first; then an artist with an album and a song, which cascades.
  for (const type of ['song', 'album', 'artist', 'user', 'alias'] as const) expect((await admin.delete(urls[type])).statusCode).toBe(204);
  const parent = await createArtist(admin, 'Sigur Rós', 'https://img.example.com/s.jpg');
  const child = await createAlbum(admin, parent.id, 'Takk', 2005, 'https://img.example.com/t.jpg');
  await createSong(admin, parent.id, child.id, 'Glósóli', '06:15');
  expect((await admin.delete(`/artists/${parent.id}`)).statusCode).toBe(204);
  seen = (await admin.get('/events?after=0&size=1000')).json<Ev[]>();
});
afterAll(() => ctx.close());

describe('the event contract', () => {
  it('names every type the database records, and the database records every type it names', () => {
    expect(new Set(seen.map((e) => e.type))).toEqual(new Set(EVENT_TYPES));
  });

  it.each(EVENT_SOURCES.map((t) => [t.event.type, t] as const))(
    '%s: created and updated carry the table module’s fields, as GET returns them',
    (type, table) => {
      for (const verb of ['created', 'updated']) {
        const event = seen.find((e) => e.type === `${type}.${verb}`)!;
        expect(Object.keys(event.resource).sort()).toEqual([...table.fields].sort());
        expect(event.resource).toEqual(asGot.get(`${type}.${verb}`));
      }
    },
  );

  it.each(EVENT_SOURCES.map((t) => [t.event.type, t] as const))('%s: deleted carries the fields that name it, at its path', (type, table) => {
    const event = seen.find((e) => e.type === `${type}.deleted`)!;
    expect(Object.keys(event.resource).sort()).toEqual([...table.event.deleted].sort());
    const row = rows.get(type)!;
    expect(event.path).toBe(EVENT_PATHS[type].replace(/\{(\w+)\}/g, (_, column: string) => String(row[column])));
  });

  it('records the deletions a delete cascades to before its own', () => {
    const tail = seen.slice(-3).map((e) => e.type);
    expect(tail).toEqual([...(EVENT_CASCADES.artist ?? []).map((t) => `${t}.deleted`), 'artist.deleted']);
  });
});
