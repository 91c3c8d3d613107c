import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildTestApp, client, createAlbum, createArtist, type Client, type TestContext } from '../helpers.js';
import { collationKey, fold } from '../../src/db/collation.js';
import { byName } from './fixtures.js';

// Every writer keeps a name's collation key in the statement that writes the name
// (src/db/collation.ts): concurrent creates, renames, bulk creates and grouped song commits leave
// every row's key its own name's, and the lists in the order of the names.

let ctx: TestContext;
let api: Client;
let admin: Client;

const NAMES = ['Álvaro', 'Alvaro', 'ALVARO', 'Barão', 'Barry', 'Straße', 'Strasse', 'Zoë', 'zoe', 'Élodie', 'E\u0301lodie', 'Işık', 'Ζωή', '🎸 Band', 'Mötley'];
const pick = (i: number) => NAMES[i % NAMES.length]!;

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.write);
  admin = client(ctx.app, ctx.tokens.admin);
});
afterAll(() => ctx.close());

/** Rows whose stored keys are not their own text's. */
async function strayKeys(): Promise<string[]> {
  const out: string[] = [];
  for (const table of ['artists', 'albums', 'songs'] as const) {
    const { rows } = await sql<{ id: number; name: string; name_key: string }>`select id, name, name_key from ${sql.table(table)}`.execute(ctx.app.db);
    for (const r of rows) if (r.name_key !== collationKey(r.name) || r.name !== r.name.normalize('NFC')) out.push(`${table} ${r.id} ${r.name}`);
  }
  const { rows } = await sql<
    Record<string, string>
  >`select id, first_name, last_name, country, first_name_key, last_name_key, country_key, country_fold from users`.execute(ctx.app.db);
  for (const r of rows) {
    const own = r.first_name_key === collationKey(r.first_name!) && r.last_name_key === collationKey(r.last_name!);
    if (!own || r.country_key !== collationKey(r.country!) || r.country_fold !== fold(r.country!)) out.push(`users ${r.id}`);
  }
  return out;
}

describe('keys under concurrent writes', () => {
  it('every created, renamed, bulk-created and group-committed row carries its own name’s key', async () => {
    const artist = await createArtist(api, 'Concurrent');
    const album = await createAlbum(api, artist.id, 'Together');
    const existing = await Promise.all(Array.from({ length: 10 }, (_, i) => createArtist(api, `${pick(i)} ${i}`)));
    const writes: Promise<{ statusCode: number }>[] = [];
    for (let i = 0; i < 30; i++) {
      writes.push(api.post('/artists', { name: `${pick(i + 3)} new ${i}`, image: 'https://img.example.com/a.jpg' }));
      // Songs of one album: SQLite and PostgreSQL commit concurrent ones together (db/group-commit.ts, db/pg-batch.ts).
      writes.push(api.post(`/artists/${artist.id}/albums/${album.id}/songs`, { name: `${pick(i + 7)} ${i}`, time: '03:00' }));
      writes.push(api.patch(`/artists/${existing[i % existing.length]!.id}`, { name: `${pick(i + 5)} renamed ${i}` }));
      writes.push(
        admin.post('/users', [
          { first_name: pick(i), last_name: pick(i + 1), email: `c${i}a@example.com`, age: 20 + i, status: 'active', country: pick(i + 2) },
          { first_name: pick(i + 4), last_name: pick(i + 6), email: `c${i}b@example.com`, age: 30 + i, status: 'inactive', country: pick(i + 8) },
        ]),
      );
    }
    for (const res of await Promise.all(writes)) expect([200, 201]).toContain(res.statusCode);
    expect(await strayKeys()).toEqual([]);

    // The lists are in the names' order, and every song is there once.
    const songs = await api.get(`/artists/${artist.id}/albums/${album.id}/songs?sort=name:asc&size=100`);
    const songNames = songs.json<{ songs: { name: string }[] }>().songs.map((s) => s.name);
    expect(songNames).toHaveLength(30);
    expect(songNames).toEqual([...songNames].sort(byName));
    const users = await admin.get('/users?sort=last_name:desc,first_name:asc&size=100');
    const rows = users.json<{ first_name: string; last_name: string; id: number }[]>();
    expect(rows).toHaveLength(60);
    expect(rows).toEqual([...rows].sort((a, b) => byName(b.last_name, a.last_name) || byName(a.first_name, b.first_name) || a.id - b.id));
  });

  it('takes names whose fold is long (a character that expands eighteenfold, emoji): the key fits an index entry', async () => {
    const res = await admin.post('/users', {
      first_name: '\ufdfa'.repeat(100),
      last_name: '\ufdfd'.repeat(100),
      email: 'long@example.com',
      age: 40,
      status: 'active',
      country: '😀'.repeat(64),
    });
    expect(res.statusCode).toBe(201);
    expect((await createArtist(api, '\ufdfa'.repeat(200))).name).toHaveLength(200);
    const found = await admin.get(`/users?first_name_starts_with=${encodeURIComponent('\ufdfa'.repeat(100))}&sort=country:asc`);
    expect(found.statusCode).toBe(200);
    expect(found.headers['x-total-count']).toBe('1');
    expect(await strayKeys()).toEqual([]);
  });
});
