import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, deferred, errorBody, type Client, type LogEntry, type TestContext } from '../helpers.js';
import { createArtist as insertArtist } from '../../src/modules/artists/artists.repository.js';

let ctx: TestContext;
let api: Client;
let flakyCalls = 0;
let slowCalls = 0;
// Barriers of the /__slow route: opened when its handler starts, and by the test to let it finish.
const slowStarted = deferred();
const slowRelease = deferred();
// Opened when a duplicate logs that it waits for the running request with its key.
const duplicateWaits = deferred();
// Barriers of the /__stalled route: its first call stops before its write until the test lets it go.
let stalledCalls = 0;
const stalledStarted = deferred();
const stalledRelease = deferred();

beforeAll(async () => {
  ctx = await buildTestApp(
    { idempotencyTtlSeconds: 120 },
    (app) => {
      // Fails on our side the first time, works the second: the key must not remember the failure.
      app.post('/__flaky', { config: { scope: 'write', idempotent: true }, schema: {} }, async (_request, reply) => {
        flakyCalls += 1;
        if (flakyCalls === 1) throw new Error('transient');
        return reply.code(201).send({ call: flakyCalls });
      });
      // Still running when its duplicate arrives (it runs until the test releases it): the
      // duplicate must wait for it, not run again. The handler runs only once the key is reserved.
      app.post('/__slow', { config: { scope: 'write', idempotent: true }, schema: {} }, async (_request, reply) => {
        slowCalls += 1;
        slowStarted.resolve();
        await slowRelease.promise;
        return reply.code(201).header('Location', `/__slow/${slowCalls}`).send({ call: slowCalls });
      });
      // Writes an artist as POST /artists does; its first call stalls before writing (a request
      // that runs past its lease), so that a retry can take its key over.
      app.post('/__stalled', { config: { scope: 'write', idempotent: true }, schema: {} }, async (_request, reply) => {
        stalledCalls += 1;
        if (stalledCalls === 1) {
          stalledStarted.resolve();
          await stalledRelease.promise;
        }
        return reply.created(
          (db) => insertArtist(db, { name: 'Stalled', image: 'https://img.example.com/s.jpg' }),
          (artist) => `/artists/${artist.id}`,
        );
      });
    },
    (entry: LogEntry) => {
      if (entry.msg === 'Idempotency-Key held by a request still running: waiting for its answer') duplicateWaits.resolve();
    },
  );
  api = client(ctx.app, ctx.tokens.write);
});
afterAll(() => ctx.close());

async function artistsNamed(name: string) {
  return ctx.app.db.selectFrom('artists').select('id').where('name', '=', name).execute();
}

const body = (name: string) => ({ name, image: 'https://img.example.com/i.jpg' });

describe('POST with Idempotency-Key', () => {
  it('replays the first answer (status, Location, body) for a retry and creates nothing new', async () => {
    const first = await api.post('/artists', body('Once'), { 'idempotency-key': 'retry-1' });
    expect(first.statusCode).toBe(201);
    const retry = await api.post('/artists', { image: 'https://img.example.com/i.jpg', name: 'Once' }, { 'idempotency-key': 'retry-1' });
    expect(retry.statusCode).toBe(201);
    expect(retry.json()).toEqual(first.json());
    expect(retry.headers.location).toBe(first.headers.location);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await artistsNamed('Once')).toHaveLength(1);
  });

  it('answers 409 CONFLICT for the same key with a different body, creating nothing', async () => {
    await api.post('/artists', body('First body'), { 'idempotency-key': 'reuse-1' });
    const res = await api.post('/artists', body('Second body'), { 'idempotency-key': 'reuse-1' });
    expect(res.statusCode).toBe(409);
    expect(errorBody(res)).toEqual({ code: 'CONFLICT', message: 'This Idempotency-Key was already used with a different request.' });
    expect(await artistsNamed('Second body')).toHaveLength(0);
  });

  it('answers 409 for the same key on another path', async () => {
    const artist = await createArtist(api);
    await api.post('/artists', body('Path one'), { 'idempotency-key': 'path-1' });
    const res = await api.post(
      `/artists/${artist.id}/albums`,
      { name: 'Path one', year: 2000, image: 'https://img.example.com/i.jpg' },
      { 'idempotency-key': 'path-1' },
    );
    expect(res.statusCode).toBe(409);
  });

  it('keeps the keys of different callers apart', async () => {
    const other = client(ctx.app, ctx.tokens.admin);
    const mine = await api.post('/artists', body('Shared key'), { 'idempotency-key': 'shared' });
    const theirs = await other.post('/artists', body('Shared key'), { 'idempotency-key': 'shared' });
    expect(theirs.statusCode).toBe(201);
    expect(theirs.json().id).not.toBe(mine.json().id);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
  });

  it('creates exactly one row for concurrent duplicates, and every duplicate gets the same answer', async () => {
    const sends = Array.from({ length: 6 }, () => api.post('/artists', body('Concurrent'), { 'idempotency-key': 'burst-1' }));
    const results = await Promise.all(sends);
    expect(results.map((r) => r.statusCode)).toEqual([201, 201, 201, 201, 201, 201]);
    expect(new Set(results.map((r) => r.json().id)).size).toBe(1);
    expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(5);
    expect(await artistsNamed('Concurrent')).toHaveLength(1);
  });

  it('makes a duplicate that arrives while the first is running wait for its answer', async () => {
    const first = api.post('/__slow', { a: 1 }, { 'idempotency-key': 'slow-1' });
    await slowStarted.promise; // the first holds the key and is running
    const duplicate = api.post('/__slow', { a: 1 }, { 'idempotency-key': 'slow-1' });
    await duplicateWaits.promise; // the duplicate met the running request and waits for it
    expect(slowCalls).toBe(1);
    slowRelease.resolve();
    const [original, replayed] = await Promise.all([first, duplicate]);
    expect(slowCalls).toBe(1);
    expect(original.statusCode).toBe(201);
    expect(original.headers['idempotent-replayed']).toBeUndefined();
    expect(replayed.statusCode).toBe(201);
    expect(replayed.json()).toEqual({ call: 1 });
    expect(replayed.json()).toEqual(original.json());
    expect(replayed.headers.location).toBe('/__slow/1');
    expect(replayed.headers['idempotent-replayed']).toBe('true');
  });

  it('replays the first answer byte for byte: body, Location and ETag as first sent', async () => {
    const artist = await createArtist(api, 'Bytes');
    const album = await createAlbum(api, artist.id);
    const posts: [string, unknown, Client][] = [
      ['/artists', body('Bytes one'), api],
      ['/artists', [body('Bytes two'), body('Bytes three')], api],
      [`/artists/${artist.id}/albums`, { name: 'Bytes', year: 2001, image: 'https://img.example.com/b.jpg' }, api],
      [`/artists/${artist.id}/albums/${album.id}/songs`, { name: 'Bytes', time: '02:02' }, api],
      [`/artists/${artist.id}/albums/${album.id}/songs`, [{ name: 'Bytes 2', time: '02:03' }], api],
      [
        '/users',
        { first_name: 'Byte', last_name: 'Wise', email: 'bytes@example.com', age: 33, status: 'active', country: 'Peru' },
        client(ctx.app, ctx.tokens.admin),
      ],
    ];
    for (const [i, [url, payload, who]] of posts.entries()) {
      const first = await who.post(url, payload, { 'idempotency-key': `bytes-${i}` });
      expect(first.statusCode, first.body).toBe(201);
      const retry = await who.post(url, payload, { 'idempotency-key': `bytes-${i}` });
      expect(retry.statusCode).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toBe(first.body);
      expect(retry.headers['content-type']).toBe(first.headers['content-type']);
      expect(retry.headers.location).toBe(first.headers.location);
      expect(retry.headers.etag).toBe(first.headers.etag);
    }
  });

  it("a request that ran past its lease and lost its key to a retry writes nothing: one row for the key, the retry's", async () => {
    const first = api.post('/__stalled', { a: 1 }, { 'idempotency-key': 'stalled-1' });
    await stalledStarted.promise; // it holds the key and has not written yet
    // Its lease lapses (as when the request stalls longer than IDEMPOTENCY_LEASE_SECONDS)...
    await ctx.app.db
      .updateTable('idempotency_keys')
      .set({ lease_until: new Date(Date.now() - 1000).toISOString() })
      .where('key', '=', 'stalled-1')
      .execute();
    // ...so the retry takes the key over and runs.
    const retry = await api.post('/__stalled', { a: 1 }, { 'idempotency-key': 'stalled-1' });
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    stalledRelease.resolve();
    const late = await first;
    expect(late.statusCode).toBe(409);
    expect(errorBody(late).code).toBe('CONFLICT');
    expect(late.headers['retry-after']).toBe('1');
    expect(late.headers.location).toBeUndefined();
    expect(await artistsNamed('Stalled')).toEqual([{ id: retry.json().id }]);
    const again = await api.post('/__stalled', { a: 1 }, { 'idempotency-key': 'stalled-1' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(retry.body);
    expect(stalledCalls).toBe(2);
  });

  it('keyed and unkeyed songs written at once: every unkeyed one and one per key', async () => {
    const artist = await createArtist(api, 'Mixed');
    const album = await createAlbum(api, artist.id);
    const url = `/artists/${artist.id}/albums/${album.id}/songs`;
    const sends = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0
        ? api.post(url, { name: `plain ${i}`, time: '01:00' })
        : api.post(url, { name: `keyed ${i % 10}`, time: '01:00' }, { 'idempotency-key': `mixed-${i % 10}` }),
    );
    const results = await Promise.all(sends);
    expect(results.map((r) => r.statusCode)).toEqual(results.map(() => 201));
    const names = (await ctx.app.db.selectFrom('songs').select('name').where('album_id', '=', album.id).execute()).map((r) => r.name).sort();
    const plain = Array.from({ length: 20 }, (_, i) => `plain ${2 * i}`);
    const keyed = ['keyed 1', 'keyed 3', 'keyed 5', 'keyed 7', 'keyed 9'];
    expect(names).toEqual([...keyed, ...plain].sort());
  });

  it("stores a unique violation (409) as the key's answer, writing nothing, and replays it", async () => {
    const admin = client(ctx.app, ctx.tokens.admin);
    const person = { first_name: 'Taken', last_name: 'Mail', email: 'taken@example.com', age: 41, status: 'active', country: 'Chile' };
    expect((await admin.post('/users', person)).statusCode).toBe(201);
    const clash = { ...person, first_name: 'Second' };
    const first = await admin.post('/users', clash, { 'idempotency-key': 'taken-1' });
    expect(first.statusCode).toBe(409);
    const retry = await admin.post('/users', clash, { 'idempotency-key': 'taken-1' });
    expect(retry.statusCode).toBe(409);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(first.body);
    expect(await ctx.app.db.selectFrom('users').select('id').where('first_name', '=', 'Second').execute()).toEqual([]);
  });

  it('works on album and song creation too', async () => {
    const artist = await createArtist(api);
    const albumBody = { name: 'Idem', year: 1999, image: 'https://img.example.com/a.jpg' };
    const [a, b] = await Promise.all([
      api.post(`/artists/${artist.id}/albums`, albumBody, { 'idempotency-key': 'album-1' }),
      api.post(`/artists/${artist.id}/albums`, albumBody, { 'idempotency-key': 'album-1' }),
    ]);
    expect(a.json()).toEqual(b.json());
    expect((await api.get(`/artists/${artist.id}/albums`)).json().albums).toHaveLength(1);
    const album = a.json<{ id: number }>();
    const songUrl = `/artists/${artist.id}/albums/${album.id}/songs`;
    const s1 = await api.post(songUrl, { name: 'S', time: '01:00' }, { 'idempotency-key': 'song-1' });
    const s2 = await api.post(songUrl, { name: 'S', time: '01:00' }, { 'idempotency-key': 'song-1' });
    expect(s2.json()).toEqual(s1.json());
    expect((await api.get(songUrl)).json().songs).toHaveLength(1);
  });

  it('works on user creation: a retry replays status, Location and body and creates nothing; another body is 409', async () => {
    const admin = client(ctx.app, ctx.tokens.admin);
    const person = { first_name: 'Idem', last_name: 'Potent', email: 'idem@example.com', age: 40, status: 'active', country: 'Chile' };
    const first = await admin.post('/users', person, { 'idempotency-key': 'user-1' });
    expect(first.statusCode).toBe(201);
    const retry = await admin.post('/users', { ...person }, { 'idempotency-key': 'user-1' });
    expect(retry.statusCode).toBe(201);
    expect(retry.json()).toEqual(first.json());
    expect(retry.headers.location).toBe(first.headers.location);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    const other = await admin.post('/users', { ...person, email: 'other@example.com' }, { 'idempotency-key': 'user-1' });
    expect(other.statusCode).toBe(409);
    expect(errorBody(other)).toEqual({ code: 'CONFLICT', message: 'This Idempotency-Key was already used with a different request.' });
    const stored = await ctx.app.db.selectFrom('users').select('email').where('first_name', '=', 'Idem').execute();
    expect(stored).toEqual([{ email: 'idem@example.com' }]);
  });

  it('leaves POST /tokens out: the secret is never stored for a replay, each POST makes a token', async () => {
    const admin = client(ctx.app, ctx.tokens.admin);
    const first = await admin.post('/tokens', { scopes: ['read'], name: 'once' }, { 'idempotency-key': 'token-1' });
    const second = await admin.post('/tokens', { scopes: ['read'], name: 'once' }, { 'idempotency-key': 'token-1' });
    expect([first.statusCode, second.statusCode]).toEqual([201, 201]);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.json().token).not.toBe(first.json().token);
    const keys = await ctx.app.db.selectFrom('idempotency_keys').select('body').where('key', '=', 'token-1').execute();
    expect(keys).toEqual([]);
  });

  it('replays a client error of the first request as well', async () => {
    const first = await api.post(
      '/artists/999999/albums',
      { name: 'X', year: 2000, image: 'https://img.example.com/x.jpg' },
      { 'idempotency-key': 'missing-1' },
    );
    expect(first.statusCode).toBe(404);
    const retry = await api.post(
      '/artists/999999/albums',
      { name: 'X', year: 2000, image: 'https://img.example.com/x.jpg' },
      { 'idempotency-key': 'missing-1' },
    );
    expect(retry.statusCode).toBe(404);
    expect(retry.json()).toEqual(first.json());
    expect(retry.headers['idempotent-replayed']).toBe('true');
  });

  it('forgets a key whose request failed on the server, so the retry runs again', async () => {
    const first = await api.post('/__flaky', {}, { 'idempotency-key': 'flaky-1' });
    expect(first.statusCode).toBe(500);
    const retry = await api.post('/__flaky', {}, { 'idempotency-key': 'flaky-1' });
    expect(retry.statusCode).toBe(201);
    expect(retry.json()).toEqual({ call: 2 });
    const third = await api.post('/__flaky', {}, { 'idempotency-key': 'flaky-1' });
    expect(third.json()).toEqual({ call: 2 });
  });

  it('keeps a key for the configured time, then treats it as new', async () => {
    const first = await api.post('/artists', body('Expiring'), { 'idempotency-key': 'ttl-1' });
    const row = await ctx.app.db.selectFrom('idempotency_keys').selectAll().where('key', '=', 'ttl-1').executeTakeFirstOrThrow();
    expect(Date.parse(row.expires_at) - Date.parse(row.created_at)).toBe(120_000);
    await ctx.app.db
      .updateTable('idempotency_keys')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', row.id)
      .execute();
    const later = await api.post('/artists', body('Expiring'), { 'idempotency-key': 'ttl-1' });
    expect(later.statusCode).toBe(201);
    expect(later.json().id).not.toBe(first.json().id);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
  });

  it.each([
    ['empty', '', { field: 'idempotency-key', minLength: 'Must be at least 1 character.' }],
    ['over 255 characters', 'k'.repeat(256), { field: 'idempotency-key', maxLength: 'Must be at most 255 characters.' }],
    ['non-ASCII', 'clé-1', { field: 'idempotency-key', pattern: 'Must be 1..255 printable ASCII characters.' }],
  ])('rejects a key that is %s with 400 and creates nothing', async (_label, key, detail) => {
    const res = await api.post('/artists', body(`Bad key ${key.length}`), { 'idempotency-key': key });
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([detail]);
    expect(await artistsNamed(`Bad key ${key.length}`)).toHaveLength(0);
  });

  it.each(['__proto__', 'constructor', 'toString', '0x10'])('a key named %s is a key like any other: replayed, one row', async (key) => {
    const first = await api.post('/artists', body(`Key ${key}`), { 'idempotency-key': key });
    expect(first.statusCode).toBe(201);
    const retry = await api.post('/artists', body(`Key ${key}`), { 'idempotency-key': key });
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(first.body);
    expect(retry.headers.location).toBe(first.headers.location);
    expect(await artistsNamed(`Key ${key}`)).toHaveLength(1);
  });

  it('without the header, every POST creates', async () => {
    await api.post('/artists', body('Twice'));
    await api.post('/artists', body('Twice'));
    expect(await artistsNamed('Twice')).toHaveLength(2);
  });
});
