import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, createSong, errorBody, type Client, type TestContext } from '../helpers.js';

let ctx: TestContext;
let api: Client;
let artistId: number;
let albumId: number;

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.write);
  artistId = (await createArtist(api)).id;
  albumId = (await createAlbum(api, artistId)).id;
});
afterAll(() => ctx.close());

describe('POST /artists/{artist_id}/albums/{album_id}/songs', () => {
  it('creates a song: 201, Location, {id, name, time}', async () => {
    const res = await api.post(`/artists/${artistId}/albums/${albumId}/songs`, { name: 'Paranoid Android', time: '06:23' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({ id: expect.any(Number), name: 'Paranoid Android', time: '06:23' });
    expect(res.headers.location).toBe(`/artists/${artistId}/albums/${albumId}/songs/${body.id}`);
  });

  it.each(['6:23', '06:60', '06-23', '006:23', '06:23 ', 'ab:cd', ''])('rejects the time %j', async (time) => {
    const res = await api.post(`/artists/${artistId}/albums/${albumId}/songs`, { name: 'X', time });
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toContainEqual({
      field: 'time',
      pattern: 'Must be mm:ss: two digits, a colon, two digits (seconds 00-59).',
    });
  });

  it('counts the length of the name as sent (maxLength 200) and stores it trimmed', async () => {
    const res = await api.post(`/artists/${artistId}/albums/${albumId}/songs`, { name: ` ${'s'.repeat(198)} `, time: '01:00' });
    expect(res.statusCode).toBe(201);
    expect(res.json().name).toBe('s'.repeat(198));
    const over = await api.post(`/artists/${artistId}/albums/${albumId}/songs`, { name: ` ${'s'.repeat(200)}`, time: '01:00' });
    expect(over.statusCode).toBe(400);
  });

  it('accepts 00:00 and 99:59', async () => {
    for (const time of ['00:00', '99:59']) {
      const res = await api.post(`/artists/${artistId}/albums/${albumId}/songs`, { name: 'Edge', time });
      expect(res.statusCode).toBe(201);
    }
  });

  it('lists missing name and time', async () => {
    const res = await api.post(`/artists/${artistId}/albums/${albumId}/songs`, {});
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual(
      expect.arrayContaining([
        { field: 'name', required: 'Missing data for required field.' },
        { field: 'time', required: 'Missing data for required field.' },
      ]),
    );
  });

  it('answers concurrent writes (committed together) each with its own song, stored under its own album', async () => {
    const other = (await createAlbum(api, artistId, 'Kid A')).id;
    const sent = Array.from({ length: 24 }, (_, i) => ({
      album: i % 3 === 0 ? other : albumId,
      name: `Concurrent ${i}`,
      time: `0${i % 10}:${String(i).padStart(2, '0')}`,
    }));
    const answers = await Promise.all(sent.map((s) => api.post(`/artists/${artistId}/albums/${s.album}/songs`, { name: s.name, time: s.time })));
    const ids = new Set<number>();
    answers.forEach((res, i) => {
      expect(res.statusCode).toBe(201);
      const song = res.json<{ id: number; name: string; time: string }>();
      expect(song).toEqual({ id: expect.any(Number), name: sent[i]!.name, time: sent[i]!.time });
      expect(res.headers.location).toBe(`/artists/${artistId}/albums/${sent[i]!.album}/songs/${song.id}`);
      ids.add(song.id);
    });
    expect(ids.size).toBe(sent.length);
    for (const res of answers) {
      const stored = await api.get(res.headers.location as string);
      expect(stored.statusCode).toBe(200);
      expect(stored.json()).toEqual(res.json());
    }
    const search = await api.get('/search?q=concurrent&size=50');
    expect(search.statusCode).toBe(200);
    // ...and in the search index, which the statement's trigger fills for every row.
    const hits = search.json<{ kind: string; path: string }[]>();
    expect(hits.map((h) => h.kind)).toEqual(sent.map(() => 'song'));
    expect(hits.map((h) => h.path).sort()).toEqual(answers.map((res) => res.headers.location as string).sort());
  });

  it('concurrent writes under a wrong path fail alone with their 404; the others are written, each with its own song', async () => {
    const stranger = (await createArtist(api, 'Stranger')).id;
    const album = (await createAlbum(api, artistId, 'Amnesiac')).id;
    // One round per kind of wrong path (another artist's album, an unknown album, an unknown artist),
    // so that no other write's error makes the batch fail for it: its own check must.
    const wrongPaths: [string, string][] = [
      [`/artists/${stranger}/albums/${album}/songs`, 'Album not found.'],
      [`/artists/${artistId}/albums/999999/songs`, 'Album not found.'],
      [`/artists/999999/albums/${album}/songs`, 'Artist not found.'],
    ];
    const written: string[] = [];
    for (const [round, [wrong, message]] of wrongPaths.entries()) {
      // Sent in one turn, so they share a batch: two of eight under the wrong path.
      const sent = Array.from({ length: 8 }, (_, i) => ({
        path: i % 4 === 1 ? wrong : `/artists/${artistId}/albums/${album}/songs`,
        name: `Mixed ${round}.${i}`,
      }));
      const answers = await Promise.all(sent.map((s) => api.post(s.path, { name: s.name, time: '02:30' })));
      answers.forEach((res, i) => {
        if (i % 4 === 1) {
          expect(res.statusCode).toBe(404);
          expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message });
          return;
        }
        expect(res.statusCode).toBe(201);
        const song = res.json<{ id: number; name: string; time: string }>();
        expect(song).toEqual({ id: expect.any(Number), name: sent[i]!.name, time: '02:30' });
        expect(res.headers.location).toBe(`/artists/${artistId}/albums/${album}/songs/${song.id}`);
        written.push(sent[i]!.name);
      });
    }
    // Stored: exactly the accepted songs (a failed batch reruns its writes concurrently: any id order).
    const stored = await api.get(`/artists/${artistId}/albums/${album}/songs?size=100`);
    expect(stored.statusCode).toBe(200);
    expect(
      stored
        .json<{ songs: { name: string }[] }>()
        .songs.map((s) => s.name)
        .sort(),
    ).toEqual(written.sort());
  });

  it('answers 404 "Album not found." for an album of another artist', async () => {
    const other = await createArtist(api, 'Someone else');
    const res = await api.post(`/artists/${other.id}/albums/${albumId}/songs`, { name: 'X', time: '01:00' });
    expect(res.statusCode).toBe(404);
    expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Album not found.' });
  });

  it('answers 404 "Artist not found." for an unknown artist', async () => {
    const res = await api.post(`/artists/999999/albums/${albumId}/songs`, { name: 'X', time: '01:00' });
    expect(res.statusCode).toBe(404);
    expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Artist not found.' });
  });

  it('answers 400 naming both bad ids', async () => {
    const res = await api.post('/artists/a/albums/b/songs', { name: 'X', time: '01:00' });
    expect(res.statusCode).toBe(400);
    const fields = errorBody(res).details?.map((d) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['artist_id', 'album_id']));
  });
});

describe('GET /artists/{artist_id}/albums/{album_id}/songs', () => {
  it("returns the album's name, year and image with its songs", async () => {
    const artist = await createArtist(api, 'Air');
    const album = await createAlbum(api, artist.id, 'Moon Safari', 1998, 'https://img.example.com/ms.jpg');
    const s1 = await createSong(api, artist.id, album.id, 'La femme d’argent', '07:11');
    const s2 = await createSong(api, artist.id, album.id, 'Sexy Boy', '04:58');
    const res = await client(ctx.app, ctx.tokens.read).get(`/artists/${artist.id}/albums/${album.id}/songs`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      name: 'Moon Safari',
      year: 1998,
      image: 'https://img.example.com/ms.jpg',
      songs: [
        { id: s1.id, name: 'La femme d’argent', time: '07:11' },
        { id: s2.id, name: 'Sexy Boy', time: '04:58' },
      ],
    });
  });

  it('answers 404 "Album not found." for an album under the wrong artist', async () => {
    const other = await createArtist(api, 'Wrong');
    const res = await api.get(`/artists/${other.id}/albums/${albumId}/songs`);
    expect(res.statusCode).toBe(404);
    expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Album not found.' });
  });

  it('answers 404 "Album not found." for an unknown album', async () => {
    const res = await api.get(`/artists/${artistId}/albums/888888/songs`);
    expect(res.statusCode).toBe(404);
    expect(errorBody(res).message).toBe('Album not found.');
  });

  it('answers 404 "Artist not found." for an unknown artist', async () => {
    const res = await api.get(`/artists/888888/albums/${albumId}/songs`);
    expect(res.statusCode).toBe(404);
    expect(errorBody(res).message).toBe('Artist not found.');
  });
});

const songUrl = (songId: number, artist = artistId, album = albumId) => `/artists/${artist}/albums/${album}/songs/${songId}`;

describe('GET /artists/{artist_id}/albums/{album_id}/songs/{song_id}', () => {
  it('returns the Song {id, name, time} with an ETag; If-None-Match gives 304', async () => {
    const song = await createSong(api, artistId, albumId, 'Let Down', '04:59');
    const res = await client(ctx.app, ctx.tokens.read).get(songUrl(song.id));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: song.id, name: 'Let Down', time: '04:59' });
    const cached = await api.get(songUrl(song.id), { 'if-none-match': res.headers.etag as string });
    expect(cached.statusCode).toBe(304);
    expect(cached.body).toBe('');
  });

  it('answers 404 naming the kind that is missing on the path', async () => {
    const song = await createSong(api, artistId, albumId);
    const otherAlbum = await createAlbum(api, artistId, 'Other');
    const otherArtist = await createArtist(api, 'Other');
    const cases: [string, string][] = [
      [songUrl(999999), 'Song not found.'],
      [songUrl(song.id, artistId, otherAlbum.id), 'Song not found.'],
      [songUrl(song.id, otherArtist.id, albumId), 'Album not found.'],
      [songUrl(song.id, artistId, 999999), 'Album not found.'],
      [songUrl(song.id, 999999, albumId), 'Artist not found.'],
    ];
    for (const [url, message] of cases) {
      const res = await api.get(url);
      expect(res.statusCode).toBe(404);
      expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message });
    }
  });

  it('answers 400 naming a bad song id', async () => {
    const res = await api.get(songUrl(0));
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details?.[0]?.field).toBe('song_id');
  });
});

describe('PATCH /artists/{artist_id}/albums/{album_id}/songs/{song_id}', () => {
  it('updates the fields sent and answers the Song with its new ETag', async () => {
    const song = await createSong(api, artistId, albumId, 'Lucky', '04:19');
    const before = (await api.get(songUrl(song.id))).headers.etag;
    const res = await api.patch(songUrl(song.id), { time: '04:20' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: song.id, name: 'Lucky', time: '04:20' });
    expect(res.headers.etag).not.toBe(before);
    expect((await api.get(songUrl(song.id))).headers.etag).toBe(res.headers.etag);
  });

  it('refuses a stale If-Match with 412 and changes nothing', async () => {
    const song = await createSong(api, artistId, albumId, 'Karma Police', '04:21');
    const etag = (await api.get(songUrl(song.id))).headers.etag as string;
    expect((await api.patch(songUrl(song.id), { name: 'Karma Police (live)' }, { 'if-match': etag })).statusCode).toBe(200);
    const stale = await api.patch(songUrl(song.id), { name: 'Overwritten' }, { 'if-match': etag });
    expect(stale.statusCode).toBe(412);
    expect((await api.get(songUrl(song.id))).json().name).toBe('Karma Police (live)');
  });

  it('answers 404 for a song addressed under another album and changes nothing', async () => {
    const song = await createSong(api, artistId, albumId, 'Mine');
    const otherAlbum = await createAlbum(api, artistId, 'Elsewhere');
    const res = await api.patch(songUrl(song.id, artistId, otherAlbum.id), { name: 'Moved?' });
    expect(res.statusCode).toBe(404);
    expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Song not found.' });
    expect((await api.get(songUrl(song.id))).json().name).toBe('Mine');
  });

  it.each([
    ['an empty body', {}, { field: 'body', required: 'At least one field must be sent.' }],
    ['a bad time', { time: '4:60' }, { field: 'time', pattern: 'Must be mm:ss: two digits, a colon, two digits (seconds 00-59).' }],
    ['seconds over 59', { time: '03:60' }, { field: 'time', pattern: 'Must be mm:ss: two digits, a colon, two digits (seconds 00-59).' }],
    ['a blank name', { name: ' ' }, { field: 'name', pattern: 'Must not be blank.' }],
    ['an unknown field', { album_id: 3 }, { field: 'album_id', unknown: 'Unknown field.' }],
  ])('rejects %s with 400', async (_label, body, detail) => {
    const song = await createSong(api, artistId, albumId, 'Same', '01:00');
    const res = await api.patch(songUrl(song.id), body);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toContainEqual(detail);
    expect((await api.get(songUrl(song.id))).json()).toEqual(song);
  });
});

describe('DELETE /artists/{artist_id}/albums/{album_id}/songs/{song_id}', () => {
  it('answers 204 and removes only that song', async () => {
    const gone = await createSong(api, artistId, albumId, 'Gone');
    const kept = await createSong(api, artistId, albumId, 'Kept');
    const res = await api.delete(songUrl(gone.id));
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(errorBody(await api.get(songUrl(gone.id))).message).toBe('Song not found.');
    expect((await api.get(songUrl(kept.id))).statusCode).toBe(200);
  });

  it('answers 404 under the wrong artist and deletes nothing', async () => {
    const song = await createSong(api, artistId, albumId);
    const otherArtist = await createArtist(api);
    const res = await api.delete(songUrl(song.id, otherArtist.id, albumId));
    expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Album not found.' });
    expect((await api.get(songUrl(song.id))).statusCode).toBe(200);
  });

  it('honours If-Match: 412 when stale, 204 with *', async () => {
    const song = await createSong(api, artistId, albumId);
    const etag = (await api.get(songUrl(song.id))).headers.etag as string;
    await api.patch(songUrl(song.id), { name: 'Edited' });
    expect((await api.delete(songUrl(song.id), { 'if-match': etag })).statusCode).toBe(412);
    expect((await api.delete(songUrl(song.id), { 'if-match': '*' })).statusCode).toBe(204);
    expect((await api.delete(songUrl(song.id), { 'if-match': '*' })).statusCode).toBe(404);
  });

  it('needs the write scope', async () => {
    const song = await createSong(api, artistId, albumId);
    expect((await client(ctx.app, ctx.tokens.read).delete(songUrl(song.id))).statusCode).toBe(403);
  });
});
