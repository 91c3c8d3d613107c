import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLockEvents } from '../../src/db/write-lock.js';
import { backend } from '../database.js';
import { buildTestApp, client, createAlbum, createArtist, errorBody, type Client, type TestContext } from '../helpers.js';

// A write that finds another connection's write transaction open (another worker's commit, a CLI
// import) waits for the file's lock off the event loop (db/write-lock.ts): the worker goes on answering
// reads meanwhile. Here the other connection is the test's own, on the same file, in the same process:
// a write that slept inside SQLite would hold up the test too, and fail with 503 before the test could
// let go. Each kind of writer: an autocommit UPDATE through Kysely (PATCH a user), the group commit (POST
// a song) and a keyed POST (Idempotency-Key: its key's row, then a Kysely transaction).

let ctx: TestContext;
let api: Client;
let other: SQLite.Database;
let artistId: number;
let albumId: number;
let userId: number;

/** Resolves 'waiting' once `n` of the app's writers wait for the lock, or 'answered' if one of `requests` is answered first. */
function waitingWriters(n: number, requests: Promise<unknown>[]): Promise<'waiting' | 'answered'> {
  let seen = 0;
  let listener: () => void = () => {};
  const waiting = new Promise<'waiting'>((resolve) => {
    listener = () => {
      if (++seen === n) resolve('waiting');
    };
    writeLockEvents.on('waiting', listener);
  });
  const answered = Promise.race(requests).then(() => 'answered' as const);
  return Promise.race([waiting, answered]).finally(() => writeLockEvents.off('waiting', listener));
}

describe.skipIf(backend !== 'sqlite')('a write while another connection holds the write lock (sqlite)', () => {
  beforeAll(async () => {
    ctx = await buildTestApp();
    api = client(ctx.app, ctx.tokens.admin);
    artistId = (await createArtist(api)).id;
    albumId = (await createAlbum(api, artistId)).id;
    const res = await api.post('/users', { first_name: 'Ana', last_name: 'Silva', email: 'ana@example.com', age: 30, status: 'active', country: 'Brazil' });
    userId = res.json<{ id: number }>().id;
    other = new SQLite(ctx.config.databaseUrl.slice('sqlite:'.length));
  });
  afterAll(async () => {
    other.close();
    await ctx.close();
  });

  it('waits off the event loop: reads are answered meanwhile, and the writes commit once the lock is let go', async () => {
    other.exec('BEGIN IMMEDIATE');
    let released = false;
    const answer = <T>(request: Promise<T>) => request.then((res) => ({ res, afterRelease: released }));
    const patch = answer(api.patch(`/users/${userId}`, { age: 41 }));
    const song = answer(api.post(`/artists/${artistId}/albums/${albumId}/songs`, { name: 'Held', time: '01:00' }));
    const keyed = answer(api.post('/artists', { name: 'Keyed', image: 'https://img.example.com/k.jpg' }, { 'idempotency-key': 'held-1' }));
    try {
      expect(await waitingWriters(3, [patch, song, keyed])).toBe('waiting');
      // The event loop is free while they wait: reads are answered, and see none of the writes yet.
      const user = await api.get(`/users/${userId}`);
      expect(user.statusCode).toBe(200);
      expect(user.json()).toMatchObject({ age: 30 });
      const songs = await api.get(`/artists/${artistId}/albums/${albumId}/songs`);
      expect(songs.statusCode).toBe(200);
      expect(songs.json<{ songs: { name: string }[] }>().songs.map((s) => s.name)).not.toContain('Held');
    } finally {
      released = true;
      other.exec('COMMIT');
    }
    const [patched, posted, created] = await Promise.all([patch, song, keyed]);
    expect(patched).toMatchObject({ afterRelease: true, res: { statusCode: 200 } });
    expect(patched.res.json()).toMatchObject({ id: userId, age: 41 });
    expect(posted).toMatchObject({ afterRelease: true, res: { statusCode: 201 } });
    expect(created).toMatchObject({ afterRelease: true, res: { statusCode: 201 } });
    // Committed: read back, and the keyed POST replays its stored answer.
    expect((await api.get(`/users/${userId}`)).json()).toMatchObject({ age: 41 });
    const songs = await api.get(`/artists/${artistId}/albums/${albumId}/songs`);
    expect(songs.json<{ songs: { name: string }[] }>().songs.map((s) => s.name)).toContain('Held');
    const replay = await api.post('/artists', { name: 'Keyed', image: 'https://img.example.com/k.jpg' }, { 'idempotency-key': 'held-1' });
    expect(replay.statusCode).toBe(201);
    expect(replay.json()).toEqual(created.res.json());
  });

  it("gives up after the connection's busy_timeout with the 503 it answered before, and writes nothing", async () => {
    const handle = ctx.app.connection.sqlite!;
    const age = (await api.get(`/users/${userId}`)).json<{ age: number }>().age;
    const timeout = handle.pragma('busy_timeout', { simple: true }) as number;
    // Shorter than the 5 s the service sets, so the test does not wait that long; the lock held throughout.
    handle.pragma('busy_timeout = 30');
    other.exec('BEGIN IMMEDIATE');
    let results;
    try {
      results = await Promise.all([
        api.patch(`/users/${userId}`, { age: 50 }),
        api.post(`/artists/${artistId}/albums/${albumId}/songs`, { name: 'Never', time: '01:00' }),
        api.post('/artists', { name: 'Never', image: 'https://img.example.com/n.jpg' }, { 'idempotency-key': 'never-1' }),
      ]);
    } finally {
      other.exec('ROLLBACK');
      handle.pragma(`busy_timeout = ${timeout}`);
    }
    for (const res of results) {
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(errorBody(res)).toEqual({ code: 'SERVICE_UNAVAILABLE', message: 'The database is unavailable; try again shortly.' });
    }
    expect(handle.inTransaction).toBe(false);
    expect((await api.get(`/users/${userId}`)).json()).toMatchObject({ age });
    const songs = await api.get(`/artists/${artistId}/albums/${albumId}/songs`);
    expect(songs.json<{ songs: { name: string }[] }>().songs.map((s) => s.name)).not.toContain('Never');
    // The lock is free again: the next writes go through (the key was let go with its failed request).
    expect((await api.patch(`/users/${userId}`, { age: 51 })).statusCode).toBe(200);
    const retried = await api.post('/artists', { name: 'Never', image: 'https://img.example.com/n.jpg' }, { 'idempotency-key': 'never-1' });
    expect(retried.statusCode).toBe(201);
  });
});
