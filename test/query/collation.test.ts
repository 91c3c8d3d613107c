import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, errorBody, type Client, type TestContext } from '../helpers.js';

// Text as people write it (issue 33): names sort as a reader of Portuguese, Spanish, French or German
// reads them (Unicode collation at base strength: accents and case ignored first, then the exact
// text, then id), the same on SQLite and PostgreSQL; typing without accents finds them (prefixes,
// q=, lives_in); one text is one value (composed and decomposed accents). Only HTTP: what a client
// sees. The expected orders are written out, and checked against Intl.Collator('pt') too.

let ctx: TestContext;
let api: Client;
let admin: Client;

const reader = new Intl.Collator('pt', { sensitivity: 'base' });
/** A Portuguese reader's order at base strength, then the exact text by code point. */
const asRead = (a: string, b: string) => reader.compare(a, b) || Buffer.compare(Buffer.from(a), Buffer.from(b));

// The catalogue: names a person types without accents, and names differing only by accent.
const ARTISTS = [
  'Barry Wordsworth',
  'Barão Vermelho',
  'Alvaro Zeta',
  'Álvaro Lins',
  'Vinícius Cantuária',
  'Vinicius de Moraes',
  'VINÍCIUS Junior',
  'vinícius calderoni',
  'Vinícius Araújo',
  'Mötley Crüe',
  'Motörhead',
  'Zé Ramalho',
  'Élodie Frégé',
  'Elis Regina',
  'Chico Buarque',
];
const ARTISTS_AS_READ = [
  'Álvaro Lins',
  'Alvaro Zeta',
  'Barão Vermelho',
  'Barry Wordsworth',
  'Chico Buarque',
  'Elis Regina',
  'Élodie Frégé',
  'Mötley Crüe',
  'Motörhead',
  'Vinícius Araújo',
  'vinícius calderoni',
  'Vinícius Cantuária',
  'Vinicius de Moraes',
  'VINÍCIUS Junior',
  'Zé Ramalho',
];

const names = (body: unknown) => (body as { name: string }[]).map((r) => r.name);
const q = (text: string) => encodeURIComponent(text);

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.write);
  admin = client(ctx.app, ctx.tokens.admin);
  for (const name of ARTISTS) await createArtist(api, name);
});
afterAll(() => ctx.close());

describe('sorting as people read', () => {
  it('the expected order is a Portuguese reader’s (Intl.Collator at base strength, then the exact text)', () => {
    expect([...ARTISTS].sort(asRead)).toEqual(ARTISTS_AS_READ);
  });

  it('sorts artists by name: Barão Vermelho before Barry Wordsworth, Álvaro Lins before Alvaro Zeta', async () => {
    const res = await api.get('/artists?sort=name:asc&size=100');
    expect(res.statusCode).toBe(200);
    expect(names(res.json())).toEqual(ARTISTS_AS_READ);
    const desc = await api.get('/artists?sort_by=name&order=desc&size=100');
    expect(names(desc.json())).toEqual([...ARTISTS_AS_READ].reverse());
  });

  it('pages and cursors follow the same order', async () => {
    const paged: string[] = [];
    for (let page = 1; page <= 4; page++) paged.push(...names((await api.get(`/artists?sort=name:asc&page=${page}&size=4`)).json()));
    expect(paged).toEqual(ARTISTS_AS_READ);
    const walked: string[] = [];
    let next: string | undefined = '/artists?sort=name:asc&after=&size=4';
    while (next) {
      const res = await api.get(next);
      expect(res.statusCode).toBe(200);
      walked.push(...names(res.json()));
      next = /<([^>]*)>; rel="next"/.exec(String(res.headers.link))?.[1];
    }
    expect(walked).toEqual(ARTISTS_AS_READ);
  });

  it('breaks ties by the exact text, then id, whatever order the names were written in', async () => {
    const artist = await createArtist(api, 'Ties');
    // Written in two orders: the list's order is the same.
    for (const name of ['Álvaro', 'alvaro', 'Alvaro', 'ALVARO', 'Álvaro', 'A\u0301lvaro']) await createAlbum(api, artist.id, name);
    const res = await api.get(`/artists/${artist.id}/albums?sort=name:asc`);
    const albums = res.json<{ albums: { id: number; name: string }[] }>().albums;
    expect(albums.map((a) => a.name)).toEqual(['ALVARO', 'Alvaro', 'alvaro', 'Álvaro', 'Álvaro', 'Álvaro']);
    // The three Álvaro (one sent decomposed: stored as the same text) by id.
    const alvaros = albums.filter((a) => a.name === 'Álvaro').map((a) => a.id);
    expect(alvaros).toEqual([...alvaros].sort((a, b) => a - b));
    const desc = await api.get(`/artists/${artist.id}/albums?sort=name:desc,id:desc`);
    expect(desc.json<{ albums: { id: number }[] }>().albums.map((a) => a.id)).toEqual(albums.map((a) => a.id).reverse());
  });

  it('sorts users by first name, last name and country the same way', async () => {
    const people = [
      ['João', 'Müller', 'México'],
      ['Joao', 'Muller', 'Mexico'],
      ['joão', 'Mueller', 'MEXICO'],
      ['José', 'Núñez', 'Perú'],
      ['Jürgen', 'Nunez', 'Peru'],
      ['Álvaro', 'Weiß', 'España'],
      ['Alvaro', 'Weiss', 'Espana'],
    ];
    for (const [i, [first, last, country]] of people.entries()) {
      const res = await admin.post('/users', { first_name: first, last_name: last, email: `reader${i}@example.com`, age: 30 + i, status: 'active', country });
      expect(res.statusCode).toBe(201);
    }
    for (const [field, at] of [
      ['first_name', 0],
      ['last_name', 1],
      ['country', 2],
    ] as const) {
      const res = await admin.get(`/users?sort=${field}:asc&size=100`);
      expect(res.statusCode).toBe(200);
      const got = res.json<Record<string, string>[]>().map((u) => u[field]);
      expect(got, field).toEqual(people.map((p) => p[at]!).sort(asRead));
    }
  });
});

describe('typing without accents finds them', () => {
  it('name_starts_with=vini finds the five Vinícius, MOT finds Mötley Crüe', async () => {
    const vini = await api.get('/artists?name_starts_with=vini&sort=name:asc');
    expect(names(vini.json())).toEqual(['Vinícius Araújo', 'vinícius calderoni', 'Vinícius Cantuária', 'Vinicius de Moraes', 'VINÍCIUS Junior']);
    expect(vini.headers['x-total-count']).toBe('5');
    const mot = await api.get('/artists?name_starts_with=MOT&sort=name:asc');
    expect(names(mot.json())).toEqual(['Mötley Crüe', 'Motörhead']);
    // Accents in the prefix are ignored as well, composed or decomposed.
    for (const prefix of ['Viní', 'VINI', 'vini\u0301', 'Móť']) {
      const res = await api.get(`/artists?name_starts_with=${q(prefix)}`);
      expect(res.statusCode, prefix).toBe(200);
      expect(res.json<unknown[]>().length, prefix).toBe(prefix === 'Móť' ? 2 : 5);
    }
  });

  it('q= matches words regardless of accents and case, on both backends', async () => {
    const res = await api.get('/artists?q=vinicius&sort=name:asc');
    expect(res.headers['x-total-count']).toBe('5');
    expect(names((await api.get('/artists?q=MOTLEY%20crue')).json())).toEqual(['Mötley Crüe']);
    expect(names((await api.get(`/artists?q=${q('cantuária')}`)).json())).toEqual(['Vinícius Cantuária']);
    // GET /search matches the same way.
    const search = await api.get('/search?q=motley');
    expect(search.statusCode).toBe(200);
    expect(names(search.json())).toEqual(['Mötley Crüe']);
  });

  it('users: first_name_starts_with=jo finds João, last_name_starts_with=mul finds Müller', async () => {
    const jo = await admin.get('/users?first_name_starts_with=jo&sort=first_name:asc');
    expect(jo.json<{ first_name: string }[]>().map((u) => u.first_name)).toEqual(['Joao', 'João', 'joão', 'José']);
    const mul = await admin.get('/users?last_name_starts_with=MUL&sort=last_name:asc');
    expect(mul.json<{ last_name: string }[]>().map((u) => u.last_name)).toEqual(['Muller', 'Müller']);
    expect(mul.headers['x-total-count']).toBe('2');
  });

  it('lives_in ignores accents and case: mexico finds México, Mexico and MEXICO', async () => {
    const res = await admin.get('/users?lives_in=mexico&sort=country:asc');
    expect(res.json<{ country: string }[]>().map((u) => u.country)).toEqual(['MEXICO', 'Mexico', 'México']);
    expect(res.headers['x-total-count']).toBe('3');
    const list = await admin.get(`/users?lives_in=[${q('PERÚ')},espana]&sort=country:desc`);
    expect(list.json<{ country: string }[]>().map((u) => u.country)).toEqual(['Perú', 'Peru', 'España', 'Espana']);
  });
});

describe('one text, one value; exact filters are exact', () => {
  it('stores a name sent decomposed (e + U+0301) composed, and name= finds it either way', async () => {
    const decomposed = 'Ze\u0301 Decomposto';
    const created = await api.post('/artists', { name: decomposed, image: 'https://img.example.com/z.jpg' });
    expect(created.statusCode).toBe(201);
    expect(created.json<{ name: string }>().name).toBe('Zé Decomposto');
    for (const sent of ['Zé Decomposto', decomposed]) {
      const res = await api.get(`/artists?name=${q(sent)}`);
      expect(names(res.json()), sent).toEqual(['Zé Decomposto']);
    }
    // A rename too, and a bulk create.
    const id = created.json<{ id: number }>().id;
    const renamed = await api.patch(`/artists/${id}`, { name: 'Zo\u0308e Decomposta' });
    expect(renamed.json<{ name: string }>().name).toBe('Zöe Decomposta');
    expect(names((await api.get(`/artists?name=${q('Zöe Decomposta')}`)).json())).toEqual(['Zöe Decomposta']);
    const bulk = await api.post('/artists', [{ name: 'Cafe\u0301 Bulk', image: 'https://img.example.com/c.jpg' }]);
    expect(bulk.json<{ name: string }[]>().map((a) => a.name)).toEqual(['Café Bulk']);
    const user = await admin.post('/users', {
      first_name: 'Rene\u0301e',
      last_name: 'Lefe\u0300vre',
      email: 'renee@example.com',
      age: 40,
      status: 'active',
      country: 'Franc\u0327a',
    });
    expect(user.json<Record<string, string>>()).toMatchObject({ first_name: 'Renée', last_name: 'Lefèvre', country: 'França' });
    expect((await admin.get(`/users?first_name=${q('Renée')}`)).headers['x-total-count']).toBe('1');
    expect((await admin.get(`/users?last_name=${q('Lefe\u0300vre')}`)).headers['x-total-count']).toBe('1');
  });

  it('name=, first_name= and last_name= are the exact text: accents and case count (the typeahead and q ignore them)', async () => {
    expect(names((await api.get(`/artists?name=${q('Vinicius de Moraes')}`)).json())).toEqual(['Vinicius de Moraes']);
    expect((await api.get(`/artists?name=${q('vinicius de moraes')}`)).json()).toEqual([]);
    expect((await api.get(`/artists?name=${q('Vinícius de Moraes')}`)).json()).toEqual([]);
    const joao = await admin.get(`/users?first_name=${q('João')}`);
    expect(joao.json<{ first_name: string }[]>().map((u) => u.first_name)).toEqual(['João']);
    expect((await admin.get('/users?last_name=Muller')).headers['x-total-count']).toBe('1');
  });
});

describe('hostile but plausible text', () => {
  let artistId: number;
  beforeAll(async () => {
    artistId = (await createArtist(api, 'Hostile Text')).id;
    for (const name of [
      'Straße',
      'Strasse',
      'STRASSE',
      'ﬁnal Cut',
      'Final Cut',
      'İstanbul',
      'Işık',
      'ISIK',
      'Ζωή',
      'ΖΩΗ',
      'Ёлка',
      '🎸 Guitar',
      '¡Hola!',
      '[Untitled]',
      '1999',
      'Øster',
      'Æon',
    ]) {
      await createAlbum(api, artistId, name);
    }
  });
  const albumNames = async (query: string) => {
    const res = await api.get(`/artists/${artistId}/albums?${query}`);
    expect(res.statusCode, query).toBe(200);
    return names(res.json<{ albums: unknown }>().albums);
  };

  it('reads ß as ss, ligatures as their letters, Ø as O and Æ as AE', async () => {
    expect(await albumNames(`name_starts_with=${q('straß')}&sort=name:asc`)).toEqual(['STRASSE', 'Strasse', 'Straße']);
    expect(await albumNames('name_starts_with=STRASSE&sort=name:asc')).toEqual(['STRASSE', 'Strasse', 'Straße']);
    expect(await albumNames('name_starts_with=fin&sort=name:asc')).toEqual(['Final Cut', 'ﬁnal Cut']);
    expect(await albumNames(`name_starts_with=${q('ﬁ')}&sort=name:asc`)).toEqual(['Final Cut', 'ﬁnal Cut']);
    expect(await albumNames('name_starts_with=oster')).toEqual(['Øster']);
    expect(await albumNames('name_starts_with=ae')).toEqual(['Æon']);
  });

  it('reads İ and the dotless ı as i (a person types isik for Işık), Greek and Cyrillic with their accents ignored', async () => {
    expect(await albumNames('name_starts_with=ist')).toEqual(['İstanbul']);
    expect(await albumNames('name_starts_with=isi&sort=name:asc')).toEqual(['ISIK', 'Işık']);
    expect(await albumNames(`name_starts_with=${q('ζω')}&sort=name:asc`)).toEqual(['ΖΩΗ', 'Ζωή']);
    expect(await albumNames(`name_starts_with=${q('ел')}`)).toEqual(['Ёлка']);
    expect(await albumNames(`q=${q('ζωη')}&sort=name:asc`)).toEqual(['ΖΩΗ', 'Ζωή']);
  });

  it('sorts spaces, punctuation, symbols and emoji before digits, and digits before letters', async () => {
    const sorted = await albumNames('sort=name:asc&size=100');
    // Among themselves by code point (the root order has its own sequence: docs/query-conventions.md).
    expect(sorted.slice(0, 4)).toEqual(['[Untitled]', '¡Hola!', '🎸 Guitar', '1999']);
    expect(sorted[4]).toBe('Æon');
    expect(await albumNames(`name_starts_with=${q('🎸')}`)).toEqual(['🎸 Guitar']);
    expect(await albumNames('q=guitar')).toEqual(['🎸 Guitar']);
  });

  it('refuses a prefix with nothing to start with (only an accent, or control and format characters): 400', async () => {
    for (const prefix of ['\u0301', '\u200d', '\u0001\u0002']) {
      const res = await api.get(`/artists/${artistId}/albums?name_starts_with=${q(prefix)}`);
      expect(res.statusCode, JSON.stringify(prefix)).toBe(400);
      expect(errorBody(res).details).toEqual([{ field: 'name_starts_with', invalid: expect.stringMatching(/^Must contain a letter, digit, space or symbol/) }]);
    }
    const users = await admin.get(`/users?last_name_starts_with=${q('\u0308')}`);
    expect(users.statusCode).toBe(400);
  });
});
