import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/query/cursor.js';
import { links } from '../query/fixtures.js';
import { storedName } from '../../src/db/collation.js';
import { buildTestApp, client, createAlbum, createArtist, createSong, errorBody, type Client, type TestContext } from '../helpers.js';

let ctx: TestContext;
let api: Client;
let ids: { radiohead: number; okc: number; airbag: number; bjork: number; homogenic: number };

beforeAll(async () => {
  ctx = await buildTestApp();
  const writer = client(ctx.app, ctx.tokens.write);
  const radiohead = await createArtist(writer, 'Radiohead');
  const okc = await createAlbum(writer, radiohead.id, 'OK Computer', 1997);
  const airbag = await createSong(writer, radiohead.id, okc.id, 'Airbag', '04:44');
  await createSong(writer, radiohead.id, okc.id, 'Paranoid Android', '06:23');
  await createSong(writer, radiohead.id, okc.id, 'Karma Police', '04:21');
  const bjork = await createArtist(writer, 'Björk');
  const homogenic = await createAlbum(writer, bjork.id, 'Homogenic', 1997);
  await createSong(writer, bjork.id, homogenic.id, 'Jóga', '05:05');
  await createSong(writer, bjork.id, homogenic.id, 'Computer Love', '03:30');
  ids = { radiohead: radiohead.id, okc: okc.id, airbag: airbag.id, bjork: bjork.id, homogenic: homogenic.id };
  api = client(ctx.app, ctx.tokens.read);
});
afterAll(() => ctx.close());

describe('GET /search', () => {
  it('finds artists, albums and songs by name, each with its kind and path', async () => {
    const res = await api.get('/search?q=computer');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-total-count']).toBe('2');
    const hits = res.json<{ kind: string; name: string; path: string }[]>();
    expect(hits).toEqual(
      expect.arrayContaining([
        { kind: 'album', id: ids.okc, name: 'OK Computer', path: `/artists/${ids.radiohead}/albums/${ids.okc}` },
        {
          kind: 'song',
          id: expect.any(Number),
          name: 'Computer Love',
          path: expect.stringMatching(new RegExp(`^/artists/${ids.bjork}/albums/${ids.homogenic}/songs/\\d+$`)),
        },
      ]),
    );
    expect((await api.get('/search?q=radiohead')).json()).toEqual([
      { kind: 'artist', id: ids.radiohead, name: 'Radiohead', path: `/artists/${ids.radiohead}` },
    ]);
  });

  it('matches word prefixes, every word, ignoring case', async () => {
    expect((await api.get('/search?q=AIRB')).json()).toEqual([
      { kind: 'song', id: ids.airbag, name: 'Airbag', path: `/artists/${ids.radiohead}/albums/${ids.okc}/songs/${ids.airbag}` },
    ]);
    expect((await api.get('/search?q=ok%20comp')).json()).toEqual([expect.objectContaining({ name: 'OK Computer' })]);
    expect((await api.get('/search?q=karma%20android')).json()).toEqual([]);
  });

  // A known difference, documented in the README: FTS5 folds accents; PostgreSQL's 'simple' text
  // search configuration does not (unaccent is an extension the service does not require).
  it.runIf(process.env.TEST_BACKEND !== 'postgres')('ignores accents on SQLite', async () => {
    expect((await api.get('/search?q=bjork')).json()).toEqual([expect.objectContaining({ kind: 'artist', name: 'Björk' })]);
    expect((await api.get('/search?q=joga')).json()).toEqual([expect.objectContaining({ kind: 'song', name: 'Jóga' })]);
  });

  it('ranks the closer match first', async () => {
    const writer = client(ctx.app, ctx.tokens.write);
    await createArtist(writer, 'Police');
    const names = (await api.get('/search?q=police')).json<{ name: string }[]>().map((h) => h.name);
    expect(names).toEqual(['Police', 'Karma Police']);
  });

  it('ranks by how the name matches, from the name alone: the query itself, whole words first, prefix, anywhere; then shorter, kind, id', async () => {
    const writer = client(ctx.app, ctx.tokens.write);
    const island = await createArtist(writer, 'Quokka Island');
    const the = await createArtist(writer, 'The Quokka');
    const quokka = await createArtist(writer, 'Quokka');
    const album = await createAlbum(writer, island.id, 'Quokkas', 2001);
    const bang = await createAlbum(writer, island.id, 'Quokka!', 2002);
    const song = await createSong(writer, island.id, album.id, 'quokka', '03:00');
    const other = await createSong(writer, island.id, album.id, 'Island Quokka', '03:00');
    const hyphen = await createSong(writer, island.id, bang.id, 'Quokka-Island', '03:00');
    const order = async (q: string) =>
      (await api.get(`/search?q=${encodeURIComponent(q)}`)).json<{ kind: string; id: number }[]>().map((h) => `${h.kind} ${h.id}`);
    expect(await order('quokka')).toEqual([
      `artist ${quokka.id}`, // the name is the query (shortest, then artists first)
      `song ${song.id}`,
      `album ${bang.id}`, // starts with the word: 7 characters
      `artist ${island.id}`, // 13
      `song ${hyphen.id}`, // 13, a song
      `album ${album.id}`, // starts with the word as a prefix
      `artist ${the.id}`, // the word elsewhere: 10 characters
      `song ${other.id}`, // 13
    ]);
    // Every word, the last one a prefix; "Quokka-Island" is the query as much as "Quokka Island" is.
    expect(await order('QUOKKA isl')).toEqual([`artist ${island.id}`, `song ${hyphen.id}`, `song ${other.id}`]);
    expect(await order('quokka island')).toEqual([`artist ${island.id}`, `song ${hyphen.id}`, `song ${other.id}`]);
    expect(await order('island quokka')).toEqual([`song ${other.id}`, `artist ${island.id}`, `song ${hyphen.id}`]);
  });

  it.runIf(process.env.TEST_BACKEND !== 'postgres')('ranks a name that differs from the query only by accents as the query itself (SQLite)', async () => {
    const writer = client(ctx.app, ctx.tokens.write);
    const longer = await createArtist(writer, 'Bjork Tribute');
    const names = (await api.get('/search?q=bjork')).json<{ id: number; name: string }[]>().map((h) => h.name);
    expect(names).toEqual(['Björk', 'Bjork Tribute']);
    await ctx.app.db.deleteFrom('artists').where('id', '=', longer.id).execute();
  });

  it('paginates with page and size (default 20), with X-Total-Count and Link', async () => {
    const writer = client(ctx.app, ctx.tokens.write);
    for (let i = 1; i <= 25; i++) await createArtist(writer, `Pagination Band ${i}`);
    const first = await api.get('/search?q=pagination&size=2');
    expect(first.headers['x-total-count']).toBe('25');
    expect(first.json()).toHaveLength(2);
    expect(first.headers.link).toBe(
      '</search?q=pagination&page=1&size=2>; rel="first", </search?q=pagination&page=2&size=2>; rel="next", </search?q=pagination&page=13&size=2>; rel="last"',
    );
    expect((await api.get('/search?q=pagination')).json()).toHaveLength(20);
    const all = (await api.get('/search?q=pagination&size=100')).json<{ name: string }[]>();
    expect(all.map((h) => h.name)).toEqual(Array.from({ length: 25 }, (_, i) => `Pagination Band ${i + 1}`)); // equal rank: by id
    expect((await api.get('/search?q=pagination&page=2&size=2')).json()).toEqual(all.slice(2, 4));
    const past = await api.get('/search?q=pagination&page=99&size=2');
    expect(past.statusCode).toBe(200);
    expect(past.json()).toEqual([]);
    expect(past.headers['x-total-count']).toBe('25');
  });

  it('reflects renames and deletions through the index triggers', async () => {
    const writer = client(ctx.app, ctx.tokens.write);
    const artist = await createArtist(writer, 'Zyzzyva Quartet');
    expect((await api.get('/search?q=zyzzyva')).json()).toHaveLength(1);
    // Rename and delete straight in the database: the triggers, not the routes, keep the index in step.
    await ctx.app.db.updateTable('artists').set(storedName('Xylo Quartet')).where('id', '=', artist.id).execute();
    expect((await api.get('/search?q=zyzzyva')).json()).toEqual([]);
    expect((await api.get('/search?q=xylo')).json()).toEqual([expect.objectContaining({ id: artist.id, name: 'Xylo Quartet' })]);
    await ctx.app.db.deleteFrom('artists').where('id', '=', ids.bjork).execute(); // cascades to albums and songs
    expect((await api.get('/search?q=homogenic')).json()).toEqual([]);
    expect((await api.get('/search?q=joga')).json()).toEqual([]);
  });

  it.each([
    ['missing q', '/search', { field: 'q', required: 'Missing data for required field.' }],
    ['q over 200 characters', `/search?q=${'a'.repeat(201)}`, { field: 'q', maxLength: 'Must be at most 200 characters.' }],
    ['q without a letter or digit', '/search?q=%22*%20(%20-%20%5E', { field: 'q', pattern: 'Must contain at least one letter or digit.' }],
    ['size over 100', '/search?q=a&size=101', { field: 'size', maximum: 'Must be at most 100.' }],
    ['page 0', '/search?q=a&page=0', { field: 'page', minimum: 'Must be at least 1.' }],
    ['unknown parameter', '/search?q=a&kind=song', { field: 'kind', unknown: 'Unknown query parameter.' }],
  ])('rejects %s with 400 and a detail', async (_name, url, detail) => {
    const res = await api.get(url);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([detail]);
  });

  it('rejects an empty q with both rules it fails: too short, and no letter or digit', async () => {
    const res = await api.get('/search?q=');
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([
      { field: 'q', minLength: 'Must be at least 1 character.' },
      { field: 'q', pattern: 'Must contain at least one letter or digit.' },
    ]);
  });

  it.each([
    ['a vulgar fraction', '½'],
    ['a word and a fraction', 'x ½'],
    ["a letter newer than SQLite's Unicode tables", '\u{1E900}'],
    ['a combining accent', 'Jo\u0301ga'],
    ['CJK', '東京'],
    ['an emoji between words', 'ok 🎸 computer'],
    ['regular expression syntax', 'ok.*(computer|x)[^a]+$'],
    ['tsquery syntax', "ok:* & !'computer' <-> x"],
    ['sixteen words and more', Array.from({ length: 20 }, (_, i) => `w${i}`).join(' ')],
    ['200 characters', 'a'.repeat(200)],
  ])('answers %s in q with 200', async (_name, q) => {
    const res = await api.get(`/search?q=${encodeURIComponent(q)}&after=&size=5`);
    expect(res.statusCode, res.body).toBe(200);
    expect(Number(res.headers['x-total-count'])).toBeGreaterThanOrEqual(res.json<unknown[]>().length);
  });

  it('ranks words of any script alike', async () => {
    const writer = client(ctx.app, ctx.tokens.write);
    const inside = await createArtist(writer, 'Nights in 東京');
    const starts = await createArtist(writer, '東京 Nights');
    const exact = await createArtist(writer, '東京');
    const order = (await api.get('/search?q=%E6%9D%B1%E4%BA%AC')).json<{ id: number }[]>().map((h) => h.id);
    expect(order).toEqual([exact.id, starts.id, inside.id]);
    const words = (await api.get('/search?q=%E6%9D%B1%E4%BA%AC%20n')).json<{ id: number }[]>().map((h) => h.id);
    expect(words).toEqual([starts.id, inside.id]);
  });

  it('treats FTS syntax in q as plain words', async () => {
    const res = await api.get('/search?q=NEAR(ok%20computer)%20OR%20*');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-total-count']).toBe('0'); // "near" matches no name: every word must match
  });

  describe('after cursors', () => {
    // A cursor is signed with a digest anyone can compute (query/cursor.ts): what it holds is checked
    // too. Signed as the route signs (its scope is the list and q), a hostile value is still 400.
    const signed = (values: unknown) => encodeCursor('search|["computer"]', values as unknown[]);
    const page = (after: string) => api.get(`/search?q=computer&after=${after}&size=1`);

    it('walks the hits through Link next, one at a time, and a key forged as the route signs is read', async () => {
      const all = (await api.get('/search?q=computer&size=100')).json<unknown[]>();
      const walked: unknown[] = [];
      for (let url: string | undefined = '/search?q=computer&after=&size=1'; url;) {
        const res = await api.get(url);
        expect(res.statusCode).toBe(200);
        expect(res.headers['x-total-count']).toBe(String(all.length));
        walked.push(...res.json<unknown[]>());
        url = links(res.headers.link).next;
      }
      expect(walked).toEqual(all);
      // The test signs as the route does: the refusals below are for what the cursors hold.
      const res = await page(signed([0, 0, 1, 1]));
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(all.slice(0, 1));
    });

    it.each([
      ['an object', { 0: 0, 1: 0, 2: 0, 3: 0, length: 4 }],
      ['__proto__', JSON.parse('{"__proto__": [0, 0, 0, 0]}')],
      ['a string', '__proto__'],
      ['null', null],
      ['too few keys (the old rank cursor)', [-2.5, 2, 7]],
      ['too many keys', [0, 0, 0, 0, 0]],
      ['a string key', [0, 0, 0, '1']],
      ['a null key', [null, 0, 0, 1]],
      ['a nested key', [[0], 0, 0, 1]],
      ['a fraction', [0, 0, 0, 1.5]],
      ['an id past 32 bits', [0, 0, 0, 2 ** 31]],
      ['a huge number', [0, 0, 0, 1e300]],
      ['a negative id', [0, 0, 0, -1]],
      ['an id of 0', [0, 6, 1, 0]],
      ['a quality past the last', [4, 0, 1, 1]],
      ['a negative length', [0, -1, 1, 1]],
      ['a kind code past songs', [0, 0, 4, 1]],
    ])('refuses a signed cursor holding %s with 400', async (_name, values) => {
      const res = await page(signed(values));
      expect(res.statusCode).toBe(400);
      expect(errorBody(res).details).toEqual([{ field: 'after', invalid: expect.stringContaining('Not a cursor') }]);
    });

    const body = (text: string) => Buffer.from(text).toString('base64url');
    it.each([
      ['garbage', 'garbage'],
      ['a dot alone', '.'],
      ['__proto__', '__proto__'],
      ['constructor.prototype', 'constructor.prototype'],
      ['JSON without its digest', `${body('[0,0,0,1]')}.`],
      ['JSON with another digest', `${body('[0,0,0,1]')}.${signed([0, 0, 0, 2]).split('.')[1]}`],
      ['a cursor of another q', encodeCursor('search|["other"]', [0, 0, 0, 1])],
      ['bytes that are not UTF-8 JSON', `${Buffer.from([0xff, 0xfe, 0x00]).toString('base64url')}.aaaa`],
      ['a NUL', '%00'],
      ['4096 characters', `${'A'.repeat(4094)}.A`],
      ['a cursor past 4096 characters', 'A'.repeat(5000)],
      ['percent-encoded JSON', encodeURIComponent('[0,0,0,1]')],
    ])('refuses %s with 400', async (_name, after) => {
      const res = await page(after);
      expect(res.statusCode).toBe(400);
      const details = errorBody(res).details!;
      expect(details.length).toBeGreaterThan(0);
      for (const detail of details) expect(detail).toEqual(expect.objectContaining({ field: 'after' }));
    });

    it('refuses after twice with 400', async () => {
      const res = await api.get('/search?q=computer&after=&after=&size=1');
      expect(res.statusCode).toBe(400);
      expect(errorBody(res).details).toEqual([{ field: 'after', type: expect.any(String) }]);
    });
  });

  it('needs a token', async () => {
    const res = await client(ctx.app).get('/search?q=a');
    expect(res.statusCode).toBe(401);
  });
});
