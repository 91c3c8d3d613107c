import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { HeldRows } from '../../src/db/arrivals.js';
import { collationKey } from '../../src/db/collation.js';
import { ADMIN_TOKEN, appsOnOneDatabase, client, createAlbum, createArtist, type SharedDatabase } from '../helpers.js';
import { backend } from '../database.js';

// HeldRows (src/db/arrivals.ts) keeps a row while the versions of the tables its read touched are
// those read before it: the tables are learnt from the read itself (db/reads.ts), not named by hand.
// A read over two tables is read again after a write to either; one touching a table no version
// covers (events) is never held. `reads` counts the times the read really ran.

describe(`HeldRows learns the tables its read touches (${backend})`, () => {
  let shared: SharedDatabase;
  let app: FastifyInstance;

  beforeAll(async () => {
    shared = await appsOnOneDatabase({});
    app = shared.apps[0]!;
  });
  afterAll(() => shared?.close());

  it('a row read from two tables is read again after a write to either, and only then', async () => {
    const api = client(app, ADMIN_TOKEN);
    const artist = await createArtist(api, 'Held');
    const held = new HeldRows<{ n: number; names: string }>();
    let reads = 0;
    const read = async () => {
      reads++;
      const rows = await app.db
        .selectFrom('albums')
        .innerJoin('artists', 'artists.id', 'albums.artist_id')
        .select(['albums.name as album', 'artists.name as artist'])
        .where('artists.id', '=', artist.id)
        .orderBy('albums.id')
        .execute();
      return { n: rows.length, names: rows.map((r) => `${r.artist}/${r.album}`).join() };
    };
    const get = async () => held.get(app.db, 'k', await app.versionsAfter(undefined), read);

    expect(await get()).toEqual({ n: 0, names: '' });
    expect(await get()).toEqual({ n: 0, names: '' });
    expect(reads).toBe(1);
    await createAlbum(api, artist.id, 'First');
    expect(await get()).toEqual({ n: 1, names: 'Held/First' });
    expect(reads).toBe(2);
    expect(await get()).toEqual({ n: 1, names: 'Held/First' });
    expect(reads).toBe(2);
    // A write to the other table the read touched (by SQL, as psql would): read again.
    await sql`update artists set name = 'Renamed', name_key = ${collationKey('Renamed')} where id = ${artist.id}`.execute(app.db);
    expect(await get()).toEqual({ n: 1, names: 'Renamed/First' });
    expect(reads).toBe(3);
    // A write to a table it did not touch: still held.
    await api.post('/users', { first_name: 'A', last_name: 'B', email: 'held@example.com', age: 3, status: 'active', country: 'X' });
    expect(await get()).toEqual({ n: 1, names: 'Renamed/First' });
    expect(reads).toBe(3);
  });

  it('a row whose read touched a table no version covers is never held', async () => {
    const held = new HeldRows<{ n: number }>();
    let reads = 0;
    const read = async () => {
      reads++;
      const { rows } = await sql<{ n: number }>`select count(*) as n from events`.execute(app.db);
      return { n: Number(rows[0]!.n) };
    };
    for (let i = 1; i <= 3; i++) {
      await held.get(app.db, 'e', await app.versionsAfter(undefined), read);
      expect(reads).toBe(i);
    }
  });
});
