import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { rng, pick, type Random } from '../../src/seed/random.js';
import { buildTestApp, client, createAlbum, createArtist, createSong, type Client, type TestContext } from '../helpers.js';
import { links } from '../query/fixtures.js';

// Following Link next through /search while the catalogue changes between pages: every hit that
// matched throughout the walk (neither created, renamed nor deleted during it, nor cascaded away)
// appears exactly once, and no hit appears twice unless it was renamed. The writes are random (a
// seeded PRNG, so a failure replays): creates, renames and deletes of artists, albums and songs,
// with names that match the query and names that do not.

type Kind = 'artist' | 'album' | 'song';
interface Entity {
  kind: Kind;
  id: number;
  artistId: number;
  albumId: number;
}
interface Hit {
  kind: Kind;
  id: number;
  name: string;
}

// Words that match the queries below in every way a name can (whole word, prefix, several words,
// first word or not), and words that match none of them.
const WORDS = ['river', 'rivers', 'riverside', 'riv', 'blue', 'blues', 'moon', 'moonlight', 'stone', 'red'];
const QUERIES = ['river', 'blue riv', 'r', 'moon'];

let ctx: TestContext;
let writer: Client;
let reader: Client;

beforeAll(async () => {
  ctx = await buildTestApp();
  writer = client(ctx.app, ctx.tokens.write);
  reader = client(ctx.app, ctx.tokens.read);
});
afterAll(() => ctx.close());

const key = (kind: string, id: number) => `${kind}:${id}`;

function randomName(random: Random): string {
  const words = Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(random, WORDS));
  const name = words.map((w) => (random() < 0.3 ? w[0]!.toUpperCase() + w.slice(1) : w)).join(pick(random, [' ', ' ', ' ', ', ', ' - ']));
  return random() < 0.1 ? `${name}!` : name;
}

/** The catalogue as the test wrote it, to pick what to rename or delete and to know what a delete cascades to. */
class Catalogue {
  readonly entities = new Map<string, Entity>();
  /** What the walk may see change: created, renamed or deleted (cascades included) since it began. */
  touched = new Set<string>();

  constructor(private readonly random: Random) {}

  private of(kind: Kind): Entity[] {
    return [...this.entities.values()].filter((e) => e.kind === kind);
  }

  private add(e: Entity): void {
    this.entities.set(key(e.kind, e.id), e);
    this.touched.add(key(e.kind, e.id));
  }

  private pathOf(e: Entity): string {
    if (e.kind === 'artist') return `/artists/${e.id}`;
    if (e.kind === 'album') return `/artists/${e.artistId}/albums/${e.id}`;
    return `/artists/${e.artistId}/albums/${e.albumId}/songs/${e.id}`;
  }

  async create(kind: Kind): Promise<void> {
    const name = randomName(this.random);
    const albums = this.of('album');
    const artists = this.of('artist');
    if (kind === 'song' && albums.length > 0) {
      const album = pick(this.random, albums);
      const song = await createSong(writer, album.artistId, album.id, name, '03:00');
      this.add({ kind: 'song', id: song.id, artistId: album.artistId, albumId: album.id });
    } else if (kind === 'album' && artists.length > 0) {
      const artist = pick(this.random, artists);
      const album = await createAlbum(writer, artist.id, name, 2000);
      this.add({ kind: 'album', id: album.id, artistId: artist.id, albumId: album.id });
    } else {
      const artist = await createArtist(writer, name);
      this.add({ kind: 'artist', id: artist.id, artistId: artist.id, albumId: 0 });
    }
  }

  async rename(): Promise<void> {
    const e = pick(this.random, [...this.entities.values()]);
    const res = await writer.patch(this.pathOf(e), { name: randomName(this.random) });
    expect(res.statusCode, res.body).toBe(200);
    this.touched.add(key(e.kind, e.id));
  }

  async delete(kind: Kind): Promise<void> {
    const candidates = this.of(kind);
    if (candidates.length === 0) return;
    const e = pick(this.random, candidates);
    const res = await writer.delete(this.pathOf(e));
    expect(res.statusCode, res.body).toBe(204);
    // The database cascades an artist's delete to its albums and songs, an album's to its songs.
    for (const [k, other] of this.entities) {
      const gone =
        k === key(e.kind, e.id) ||
        (e.kind === 'artist' && other.kind !== 'artist' && other.artistId === e.id) ||
        (e.kind === 'album' && other.kind === 'song' && other.albumId === e.id);
      if (gone) {
        this.entities.delete(k);
        this.touched.add(k);
      }
    }
  }

  /** Deletes what is left (every artist, so their albums and songs): the next walk starts from an empty catalogue. */
  async clear(): Promise<void> {
    for (const e of this.of('artist')) expect((await writer.delete(this.pathOf(e))).statusCode).toBe(204);
    this.entities.clear();
  }

  /** One random write: mostly creates and renames, deletes mostly of songs so the catalogue does not drain. */
  async write(): Promise<void> {
    const r = this.random();
    const kind: Kind = pick(this.random, ['artist', 'album', 'album', 'song', 'song', 'song']);
    if (r < 0.45) await this.create(kind);
    else if (r < 0.75) await this.rename();
    else await this.delete(this.random() < 0.8 ? 'song' : kind);
  }
}

/** Every hit of `q` now, in one request (the test keeps the catalogue under 100 hits a query). */
async function allHits(q: string): Promise<Hit[]> {
  const res = await reader.get(`/search?q=${encodeURIComponent(q)}&size=100`);
  expect(res.statusCode).toBe(200);
  const hits = res.json<Hit[]>();
  expect(Number(res.headers['x-total-count'])).toBe(hits.length);
  return hits;
}

describe('GET /search cursors under writes', () => {
  // Three walks per query, each its own seed: a failure names the seed, which replays it exactly.
  const cases = QUERIES.flatMap((q, i) => [1, 2, 3].map((n) => ({ q, seed: 1000 * (i + 1) + n })));

  it.each(cases)('q=$q seed $seed: a hit that matched throughout appears exactly once, none twice', async ({ q, seed }) => {
    const random = rng(seed);
    const catalogue = new Catalogue(random);
    onTestFinished(() => catalogue.clear());
    for (let i = 0; i < 60; i++) await catalogue.create(i < 8 ? 'artist' : i < 24 ? 'album' : 'song');
    catalogue.touched = new Set();
    const before = await allHits(q);
    expect(before.length).toBeGreaterThan(6);

    const seen = new Map<string, Hit[]>();
    let url: string | undefined = `/search?q=${encodeURIComponent(q)}&after=&size=${2 + Math.floor(random() * 3)}`;
    let pages = 0;
    while (url) {
      const res = await reader.get(url);
      expect(res.statusCode, res.body).toBe(200);
      for (const hit of res.json<Hit[]>()) seen.set(key(hit.kind, hit.id), [...(seen.get(key(hit.kind, hit.id)) ?? []), hit]);
      url = links(res.headers.link).next;
      expect(++pages, 'the walk does not end').toBeLessThan(200);
      const writes = 1 + Math.floor(random() * 3);
      for (let w = 0; w < writes; w++) await catalogue.write();
    }

    const stable = before.filter((h) => !catalogue.touched.has(key(h.kind, h.id)));
    expect(stable.length).toBeGreaterThan(0);
    const missing = stable.filter((h) => !seen.has(key(h.kind, h.id)));
    const repeated = [...seen].filter(([k, hits]) => hits.length > 1 && !catalogue.touched.has(k)).map(([k]) => k);
    expect({ missing, repeated }).toEqual({ missing: [], repeated: [] });
    // A hit renamed during the walk may show under both names, never twice under one.
    for (const hits of seen.values()) expect(new Set(hits.map((h) => h.name)).size).toBe(hits.length);
  });
});
