import type { Db } from '../db/database.js';
import { LANGUAGES, between, derivedSeed, phrase, pick, rng, type Random } from './random.js';
import { chunks, type Seeder } from './seeder.js';
import { FIRST_NAMES, LAST_NAMES } from './users.seeder.js';
import { storedName } from '../db/collation.js';

export interface CatalogueSeedOptions {
  artists: number;
  albumsPerArtist: number;
  songsPerAlbum: number;
}

/** Artists per transaction: bounds the work lost to a crash and the memory a batch holds. */
const ARTISTS_PER_TRANSACTION = 100;

interface PlannedArtist {
  name: string;
  image: string;
  albums: { name: string; year: number; image: string; songs: { name: string; time: string }[] }[];
}

const slug = (s: string) =>
  s
    .normalize('NFD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-');

/**
 * Artist number `n` (1-based), drawn artist-major so the result does not depend on batch size: a band
 * ("Las Señales 12", "Die Wälder 7") or, one in three, a person ("Vinícius Araújo 3"), its albums and
 * songs named in its language ("Canções Douradas", "Grüne Wälder"). The number keeps every artist's
 * name its own.
 */
function planArtist(random: Random, n: number, o: CatalogueSeedOptions): PlannedArtist {
  const language = pick(random, LANGUAGES);
  const person = random() < 1 / 3;
  const name = person ? `${pick(random, FIRST_NAMES)} ${pick(random, LAST_NAMES)} ${n}` : `${language.article} ${pick(random, language.nouns)} ${n}`;
  const albums = [];
  for (let a = 1; a <= o.albumsPerArtist; a++) {
    const albumName = phrase(random, language);
    const songs = [];
    for (let s = 1; s <= o.songsPerAlbum; s++) {
      const time = `${String(between(random, 1, 9)).padStart(2, '0')}:${String(between(random, 0, 59)).padStart(2, '0')}`;
      songs.push({ name: phrase(random, language), time });
    }
    albums.push({ name: albumName, year: between(random, 1960, 2025), image: `https://img.example.com/albums/${slug(name)}-${a}.jpg`, songs });
  }
  return { name, image: `https://img.example.com/artists/${slug(name)}.jpg`, albums };
}

/** Each name as stored with its key (src/db/collation.ts), computed once per distinct name. */
const stored = new Map<string, { name: string; name_key: string }>();
function storedOnce(name: string): { name: string; name_key: string } {
  let found = stored.get(name);
  if (!found) {
    found = storedName(name);
    if (stored.size < 100_000) stored.set(name, found);
  }
  return found;
}

async function insertBatch(db: Db, planned: PlannedArtist[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Multi-row INSERT ... RETURNING gives the ids in the order of the VALUES rows (SQLite, PostgreSQL).
    const artistIds: number[] = [];
    for (const part of chunks(planned.map(({ name, image }) => ({ ...storedName(name), image })))) {
      artistIds.push(...(await trx.insertInto('artists').values(part).returning('id').execute()).map((r) => r.id));
    }
    const albums = planned.flatMap((artist, i) => artist.albums.map((album) => ({ artist_id: artistIds[i]!, album })));
    const albumIds: number[] = [];
    for (const part of chunks(albums)) {
      const rows = part.map(({ artist_id, album }) => ({ artist_id, ...storedOnce(album.name), year: album.year, image: album.image }));
      albumIds.push(...(await trx.insertInto('albums').values(rows).returning('id').execute()).map((r) => r.id));
    }
    const songs = albums.flatMap(({ album }, i) => album.songs.map((song) => ({ album_id: albumIds[i]!, ...storedOnce(song.name), time: song.time })));
    for (const part of chunks(songs)) await trx.insertInto('songs').values(part).execute();
  });
}

export const catalogueSeeder: Seeder<CatalogueSeedOptions> = {
  name: 'catalogue',
  tables: ['artists', 'albums', 'songs'],
  total: (o) => o.artists * (1 + o.albumsPerArtist * (1 + o.songsPerAlbum)),
  async run(db, o, progress) {
    const random = rng(derivedSeed(o.seed, 'catalogue'));
    for (let first = 1; first <= o.artists; first += ARTISTS_PER_TRANSACTION) {
      const planned: PlannedArtist[] = [];
      for (let n = first; n < first + ARTISTS_PER_TRANSACTION && n <= o.artists; n++) planned.push(planArtist(random, n, o));
      await insertBatch(db, planned);
      progress.advance(planned.length * (1 + o.albumsPerArtist * (1 + o.songsPerAlbum)));
    }
  },
};
