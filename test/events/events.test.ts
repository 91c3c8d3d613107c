import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, createSong, errorBody, type Client, type TestContext } from '../helpers.js';
import { openStream } from './sse.js';

let ctx: TestContext;
let admin: Client;
let reader: Client;
let base: string;

beforeAll(async () => {
  ctx = await buildTestApp({ eventsHeartbeatMs: 20, eventsPollMs: 20 });
  admin = client(ctx.app, ctx.tokens.admin);
  reader = client(ctx.app, ctx.tokens.read);
  base = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(() => ctx.close());

interface Ev {
  id: string;
  sequence: number;
  type: string;
  path: string;
  resource: Record<string, unknown>;
  at: string;
}

async function eventsAfter(api: Client, after: number, query = ''): Promise<Ev[]> {
  const res = await api.get(`/events?after=${after}&size=1000${query}`);
  expect(res.statusCode).toBe(200);
  return res.json<Ev[]>();
}

async function last(): Promise<number> {
  const res = await admin.get('/events?after=0&size=1');
  // The feed's end: page through once (tests here write little).
  let after = 0;
  for (let page = res.json<Ev[]>(); page.length; page = await eventsAfter(admin, after)) after = page[page.length - 1]!.sequence;
  return after;
}

describe('GET /events', () => {
  it('records create, update and delete of artists, albums and songs, with the resource as GET returns it', async () => {
    const start = await last();
    const artist = await createArtist(admin, 'Portishead', 'https://img.example.com/p.jpg');
    const album = await createAlbum(admin, artist.id, 'Dummy', 1994, 'https://img.example.com/d.jpg');
    const song = await createSong(admin, artist.id, album.id, 'Roads', '05:05');
    const patched = await admin.patch(`/artists/${artist.id}/albums/${album.id}/songs/${song.id}`, { name: 'Sour Times' });
    expect(patched.statusCode).toBe(200);
    expect((await admin.delete(`/artists/${artist.id}/albums/${album.id}/songs/${song.id}`)).statusCode).toBe(204);

    const events = await eventsAfter(reader, start);
    expect(events.map((e) => [e.type, e.path])).toEqual([
      ['artist.created', `/artists/${artist.id}`],
      ['album.created', `/artists/${artist.id}/albums/${album.id}`],
      ['song.created', `/artists/${artist.id}/albums/${album.id}/songs/${song.id}`],
      ['song.updated', `/artists/${artist.id}/albums/${album.id}/songs/${song.id}`],
      ['song.deleted', `/artists/${artist.id}/albums/${album.id}/songs/${song.id}`],
    ]);
    expect(events.map((e) => e.resource)).toEqual([artist, album, song, patched.json(), { id: song.id }]);
    expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => start + 1 + i));
    for (const e of events) {
      expect(e.id).toMatch(/^[0-9a-f]{32}$/);
      expect(Date.parse(e.at)).not.toBeNaN();
    }
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  });

  it('records the deletion of every song and album an artist held, before its own', async () => {
    const artist = await createArtist(admin, 'Massive Attack');
    const a1 = await createAlbum(admin, artist.id, 'Blue Lines');
    const a2 = await createAlbum(admin, artist.id, 'Mezzanine');
    const s1 = await createSong(admin, artist.id, a1.id, 'Safe from Harm');
    const s2 = await createSong(admin, artist.id, a2.id, 'Angel');
    const s3 = await createSong(admin, artist.id, a2.id, 'Teardrop');
    const start = await last();
    expect((await admin.delete(`/artists/${artist.id}/albums/${a2.id}`)).statusCode).toBe(204);
    expect((await admin.delete(`/artists/${artist.id}`)).statusCode).toBe(204);
    const events = await eventsAfter(reader, start);
    expect(events.map((e) => [e.type, e.path, e.resource])).toEqual([
      ['song.deleted', `/artists/${artist.id}/albums/${a2.id}/songs/${s2.id}`, { id: s2.id }],
      ['song.deleted', `/artists/${artist.id}/albums/${a2.id}/songs/${s3.id}`, { id: s3.id }],
      ['album.deleted', `/artists/${artist.id}/albums/${a2.id}`, { id: a2.id }],
      ['song.deleted', `/artists/${artist.id}/albums/${a1.id}/songs/${s1.id}`, { id: s1.id }],
      ['album.deleted', `/artists/${artist.id}/albums/${a1.id}`, { id: a1.id }],
      ['artist.deleted', `/artists/${artist.id}`, { id: artist.id }],
    ]);
  });

  it('gives every write of a group commit its own event, numbered without a gap', async () => {
    const artist = await createArtist(admin);
    const album = await createAlbum(admin, artist.id);
    const start = await last();
    const songs = await Promise.all(Array.from({ length: 40 }, (_, i) => createSong(admin, artist.id, album.id, `Song ${i}`, '01:00')));
    const events = await eventsAfter(reader, start, '&types=song.created');
    expect(events.map((e) => e.sequence)).toEqual(songs.map((_, i) => start + 1 + i));
    expect(events.map((e) => e.resource).sort((a, b) => Number(a.id) - Number(b.id))).toEqual(songs.sort((a, b) => a.id - b.id));
  });

  it('shows users and aliases events to admin only (personal data)', async () => {
    const start = await last();
    const user = await admin.post('/users', { first_name: 'Ana', last_name: 'Lima', email: 'ana@example.com', age: 30, status: 'active', country: 'Brazil' });
    expect(user.statusCode).toBe(201);
    const alias = await admin.put('/aliases/users/active-people', { query: 'status=active' });
    expect(alias.statusCode).toBe(201);
    await createArtist(admin, 'Public');
    const seen = await eventsAfter(admin, start);
    expect(seen.map((e) => e.type)).toEqual(['user.created', 'alias.created', 'artist.created']);
    expect(seen[0]!.resource).toEqual(user.json());
    expect(seen[0]!.path).toBe(`/users/${user.json<{ id: number }>().id}`);
    expect(seen[1]!.resource).toEqual(alias.json());
    expect(seen[1]!.path).toBe('/aliases/users/active-people');
    expect((await eventsAfter(reader, start)).map((e) => e.type)).toEqual(['artist.created']);
    const refused = await reader.get(`/events?after=${start}&types=user.created`);
    expect(refused.statusCode).toBe(403);
    expect(errorBody(refused).code).toBe('FORBIDDEN');
  });

  it('pages with after, size and types, and links the next page', async () => {
    const start = await last();
    for (let i = 0; i < 3; i++) await createArtist(admin, `Paged ${i}`);
    const first = await reader.get(`/events?after=${start}&size=2&types=artist.created,artist.deleted`);
    expect(first.statusCode).toBe(200);
    const page = first.json<Ev[]>();
    expect(page.map((e) => e.sequence)).toEqual([start + 1, start + 2]);
    expect(first.headers.link).toBe(`</events?after=${start + 2}&types=artist.created%2Cartist.deleted&size=2>; rel="next"`);
    expect(first.headers['x-last-sequence']).toBe(String(start + 2));
    const next = await reader.get(`/events?after=${start + 2}&size=2&types=artist.created,artist.deleted`);
    expect(next.json<Ev[]>().map((e) => e.sequence)).toEqual([start + 3]);
    const empty = await reader.get(`/events?after=${start + 3}`);
    expect(empty.json()).toEqual([]);
    expect(empty.headers['x-last-sequence']).toBe(String(start + 3));
  });

  it('refuses unknown types, a negative after and a missing token', async () => {
    const bad = await reader.get('/events?types=artist.created,artist.renamed');
    expect(bad.statusCode).toBe(400);
    expect(errorBody(bad).details?.[0]?.field).toBe('types');
    expect((await reader.get('/events?after=-1')).statusCode).toBe(400);
    expect((await client(ctx.app).get('/events')).statusCode).toBe(401);
  });

  // Each is 10 (or 16) to Number(); none is how an integer is written. Huge: past what the field allows.
  const spellings = ['0x10', '1e1', '%2B10', '%2010', '10%20', '10.0', '010', '0b10', '1_0', '', '99999999999999999999'];

  it.each(spellings)('answers 400 for after and size written %s, as for every integer parameter', async (spelling) => {
    for (const field of ['after', 'size']) {
      const res = await reader.get(`/events?${field}=${spelling}`);
      expect(res.statusCode, `${field}=${spelling}`).toBe(400);
      const detail = errorBody(res).details?.[0];
      expect(detail?.field).toBe(field);
      expect(Object.keys(detail ?? {}).filter((k) => k !== 'field')).toEqual([spelling === '99999999999999999999' ? 'maximum' : 'type']);
    }
    const stream = await reader.get(`/events/stream?after=${spelling}`);
    expect(stream.statusCode).toBe(400);
    expect(errorBody(stream).details?.[0]?.field).toBe('after');
  });

  it('still reads plain decimal after and size', async () => {
    const res = await reader.get('/events?after=0&size=10');
    expect(res.statusCode).toBe(200);
    expect(res.headers.link).toMatch(/size=10>/);
  });
});

describe('GET /events/stream', () => {
  it('streams events with heartbeats; a client cut off mid-stream resumes with Last-Event-ID, no gap, no duplicate', async () => {
    const start = await last();
    const first = await openStream(`${base}/events/stream?after=${start}`, ctx.tokens.read);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const artists = [];
    for (let i = 0; i < 5; i++) artists.push(await createArtist(admin, `Streamed ${i}`));
    await first.until((c) => c.events.length >= 3 && c.heartbeats > 0);
    first.close();
    const seen = first.events.map((e) => e.data.sequence);
    // Writes go on while nobody listens.
    for (let i = 5; i < 10; i++) artists.push(await createArtist(admin, `Streamed ${i}`));
    const resumed = await openStream(`${base}/events/stream`, ctx.tokens.read, { 'last-event-id': String(seen[seen.length - 1]) });
    for (let i = 10; i < 12; i++) artists.push(await createArtist(admin, `Streamed ${i}`));
    await resumed.until((c) => c.events.length > 0 && c.events[c.events.length - 1]!.data.sequence === start + 12);
    resumed.close();
    const all = [...seen, ...resumed.events.map((e) => e.data.sequence)];
    expect(all).toEqual(artists.map((_, i) => start + 1 + i));
    expect(resumed.events.map((e) => e.id)).toEqual(resumed.events.map((e) => String(e.data.sequence)));
    expect([...first.events, ...resumed.events].map((e) => e.data.resource)).toEqual(artists);
  });

  it('starts with the next event when given no position, and leaves out what the token may not see', async () => {
    await createArtist(admin, 'Before');
    const stream = await openStream(`${base}/events/stream`, ctx.tokens.read);
    const adminStream = await openStream(`${base}/events/stream?types=user.created`, ctx.tokens.admin);
    // The first heartbeat says both have subscribed.
    await stream.until((c) => c.heartbeats > 0);
    await adminStream.until((c) => c.heartbeats > 0);
    await admin.post('/users', { first_name: 'Bo', last_name: 'Ek', email: 'bo@example.com', age: 40, status: 'active', country: 'Sweden' });
    const after = await createArtist(admin, 'After');
    await stream.until((c) => c.events.length >= 1);
    await adminStream.until((c) => c.events.length >= 1);
    stream.close();
    adminStream.close();
    expect(stream.events.map((e) => e.data.resource)).toEqual([after]);
    expect(adminStream.events.map((e) => e.data.type)).toEqual(['user.created']);
    const refused = await fetch(`${base}/events/stream?types=alias.created`, { headers: { authorization: `Bearer ${ctx.tokens.read}` } });
    expect(refused.status).toBe(403);
  });
});

describe('EVENTS_RETENTION_DAYS', () => {
  it('deletes events older than the retention but the newest, and numbering goes on after them', async () => {
    const kept = await buildTestApp({ eventsRetentionDays: 1 });
    try {
      const api = client(kept.app, kept.tokens.admin);
      for (let i = 0; i < 4; i++) await createArtist(api, `Old ${i}`);
      // Read once: on PostgreSQL the events table holds the events once published (a read publishes).
      expect((await api.get('/events')).json<Ev[]>()).toHaveLength(4);
      // All written three days ago, as far as the table knows: the newest stays, the next is numbered after it.
      const old = new Date(Date.now() - 3 * 24 * 3600_000).toISOString();
      await kept.app.db.withTables<{ events: { sequence: number; at: string } }>().updateTable('events').set({ at: old }).execute();
      expect(await kept.app.events.prune()).toEqual({ events: 3, 'webhook deliveries': 0 });
      const recent = await createArtist(api, 'Recent');
      const left = (await api.get('/events')).json<Ev[]>();
      expect(left.map((e) => e.sequence)).toEqual([4, 5]);
      expect(left[1]!.resource).toEqual(recent);
    } finally {
      await kept.close();
    }
  });
});
