import { createHash } from 'node:crypto';

// The realistic workload of issue 14: distinct requests as an app sends them, drawn from a seeded
// generator (the same seed and dataset give the same requests, in the same order, on every machine).
// Pure: it needs only the dataset's sizes and a sample of its catalogue, never a running service.

export const DEFAULT_MIX_SEED = 14;
// Long enough that no 8 s phase wraps around at up to 6,000 req/s: a read sent again could be answered
// from the response cache, and the mix measures the service on requests it has not seen.
export const DEFAULT_MIX_COUNT = 50_000;
export const MIN_MIX_COUNT = 10_000;

/** The load phases of the mix (wrk, beside the ceiling): 32 connections unless said. */
export const MIX_PHASES = [
  { id: 'mix-read', title: 'reads only', write: null, connections: null },
  { id: 'mix-song', title: 'reads + 1 in 20 a song POST', write: 'song', connections: null },
  { id: 'mix-patch', title: 'reads + 1 in 20 a user PATCH', write: 'patch', connections: null },
  { id: 'mix-read-c1', title: 'reads only, 1 connection', write: null, connections: 1 },
];
export const MIX_LATENCY = 'mix-latency';
/** What `--only mix` stands for: the phases and the one-at-a-time latency. */
export const MIX_IDS = [...MIX_PHASES.map((p) => p.id), MIX_LATENCY];

/** Request kinds, their share of the mix (percent) and their titles in the report. */
export const MIX_KINDS = [
  { kind: 'users-list', weight: 40, title: 'users list', scope: 'admin' },
  { kind: 'alias', weight: 10, title: 'alias', scope: 'admin' },
  { kind: 'user', weight: 15, title: 'single user', scope: 'admin' },
  { kind: 'artist-list', weight: 10, title: 'artist list', scope: 'read' },
  { kind: 'artist', weight: 15, title: 'single artist', scope: 'read' },
  { kind: 'album-songs', weight: 10, title: 'album songs', scope: 'read' },
  // Issue 18's request kinds: measured one at a time only (weight 0: not part of the load mix).
  { kind: 'users-prefix', weight: 0, title: 'users name prefix', scope: 'admin' },
  { kind: 'users-range', weight: 0, title: 'users age range', scope: 'admin' },
  { kind: 'users-cursor', weight: 0, title: 'users cursor page', scope: 'admin' },
  { kind: 'artist-prefix', weight: 0, title: 'artists name prefix', scope: 'read' },
  { kind: 'album-range', weight: 0, title: 'albums year range', scope: 'read' },
  { kind: 'artists-embed', weight: 0, title: 'artists embed=albums (20)', scope: 'read' },
];

/** The seeded first names (src/seed/users.seeder.ts): typeahead prefixes are drawn from them. */
const FIRST_NAMES = [
  'Ana',
  'Álvaro',
  'Bruno',
  'Beatriz',
  'Cecília',
  'Chloé',
  'Diego',
  'Élodie',
  'Émile',
  'Fábio',
  'François',
  'Gonçalo',
  'Hélène',
  'Inês',
  'Íñigo',
  'João',
  'Jürgen',
  'Jörg',
  'Karin',
  'Lúcia',
  'Márcio',
  'Mónica',
  'Nicolás',
  'Noémie',
  'Óscar',
  'Pedro',
  'Renée',
  'Sérgio',
  'Sofia',
  'Thaís',
  'Tomás',
  'Vinícius',
  'Zoë',
  'alice',
  'ben',
  'emma',
];

/** The seeded countries (src/seed/users.seeder.ts), as a client types them: lower case. */
export const COUNTRIES = [
  'brazil',
  'argentina',
  'united states',
  'germany',
  'france',
  'japan',
  'portugal',
  'spain',
  'italy',
  'mexico',
  'canada',
  'india',
  'nigeria',
  'poland',
  'chile',
];
/** The aliases the migrations create on users. */
export const ALIASES = ['young-brazilians'];

const USER_SORTS = ['id', 'first_name', 'last_name', 'age', 'status', 'country'];
const ARTIST_SORTS = ['id', 'name'];
const SONG_SORTS = ['id', 'name', 'time'];
const SIZES = [10, 20, 20, 25, 50, 100];
const SORT_PARAMS = ['sort', 'sort_by', 'order'];
const PAGE_PARAMS = ['page', 'size'];

/** The query parameters each kind may carry (what the service declares for that route). */
export const MIX_PARAMS = {
  'users-list': ['status', 'older_than', 'younger_than', 'lives_in', ...SORT_PARAMS, ...PAGE_PARAMS],
  alias: [...SORT_PARAMS, ...PAGE_PARAMS],
  user: [],
  'artist-list': ['name', ...SORT_PARAMS, ...PAGE_PARAMS],
  artist: [],
  'album-songs': [...SORT_PARAMS, ...PAGE_PARAMS],
  'users-prefix': ['first_name_starts_with', 'last_name_starts_with', ...SORT_PARAMS, ...PAGE_PARAMS],
  'users-range': ['older_than', 'younger_than', ...SORT_PARAMS, ...PAGE_PARAMS],
  'users-cursor': ['sort', 'after', 'size'],
  'artist-prefix': ['name_starts_with', ...SORT_PARAMS, ...PAGE_PARAMS],
  'album-range': ['released_after', 'released_before', ...SORT_PARAMS, ...PAGE_PARAMS],
  'artists-embed': ['embed', ...SORT_PARAMS, ...PAGE_PARAMS],
};

/**
 * A cursor as the service writes it (src/query/cursor.ts encodeCursor, checked against it by
 * test/bench/mix.test.ts): base64url JSON of the sort-key values, a dot, and the digest over the
 * list's scope (collection and sort keys with the id tie-break) and that body.
 */
export function cursorFor(scope, values) {
  const body = Buffer.from(JSON.stringify(values)).toString('base64url');
  const digest = createHash('sha256').update(scope).update('\u0000').update(body).digest('base64url').slice(0, 16);
  return `${body}.${digest}`;
}

/** mulberry32, as the seed command uses: tiny and deterministic. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A query pair, keeping `[ ] , :` readable as the service's own Link URLs do (they are safe in a query).
const enc = (s) => encodeURIComponent(s).replace(/%5B/gi, '[').replace(/%5D/gi, ']').replace(/%2C/gi, ',').replace(/%3A/gi, ':');
const query = (pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${enc(k)}=${enc(String(v))}`).join('&')}` : '');

function draw(random) {
  const int = (min, max) => min + Math.floor(random() * (max - min + 1));
  const pick = (items) => items[Math.floor(random() * items.length)];
  const chance = (p) => random() < p;
  const distinct = (items, n) => {
    const pool = [...items];
    const out = [];
    while (out.length < n) out.push(pool.splice(Math.floor(random() * pool.length), 1)[0]);
    return out;
  };
  return { next: random, int, pick, chance, distinct };
}

/** Mostly pages 1-5 (1 the most), sometimes deep: up to `max`. */
function page(r, max) {
  if (max <= 1) return 1;
  if (r.chance(0.85)) return Math.min(max, r.pick([1, 1, 1, 2, 2, 3, 4, 5]));
  return r.int(Math.min(6, max), max);
}

/** One- or two-field sort in either style the service offers, or none. */
function sort(r, fields, none = 0.2) {
  const x = r.int(0, 99) / 100;
  if (x < none) return [];
  const dir = () => r.pick(['asc', 'desc']);
  if (x < none + 0.4) return [['sort', `${r.pick(fields)}:${dir()}`]];
  if (x < none + 0.6 && fields.length > 1) {
    const [f, g] = r.distinct(fields, 2);
    return [['sort', `${f}:${dir()},${g}:${dir()}`]];
  }
  const field = r.pick(fields);
  return r.chance(0.85)
    ? [
        ['sort_by', field],
        ['order', dir()],
      ]
    : [['sort_by', field]];
}

function usersList(r, deepPages) {
  const pairs = [];
  if (r.chance(0.5)) pairs.push(['status', r.pick(['active', 'inactive'])]);
  const older = r.chance(0.35) ? r.int(0, 80) : undefined;
  if (older !== undefined) pairs.push(['older_than', older]);
  if (r.chance(0.35)) pairs.push(['younger_than', r.int(older === undefined ? 5 : older + 5, 99)]);
  if (r.chance(0.5)) pairs.push(['lives_in', r.chance(0.6) ? r.pick(COUNTRIES) : `[${r.distinct(COUNTRIES, 3).join(',')}]`]);
  pairs.push(...sort(r, USER_SORTS));
  pairs.push(['page', page(r, deepPages)], ['size', r.pick(SIZES)]);
  return `/users${query(pairs)}`;
}

function alias(r, deepPages) {
  const pairs = [...sort(r, USER_SORTS, 0), ['page', page(r, deepPages)], ['size', r.pick(SIZES)]];
  return `/users/${r.pick(ALIASES)}${query(pairs)}`;
}

function artistList(r, ctx) {
  const pairs = [];
  if (r.chance(0.1) && ctx.catalogue.length) pairs.push(['name', r.pick(ctx.catalogue).name]);
  pairs.push(...sort(r, ARTIST_SORTS));
  const size = r.pick(SIZES);
  pairs.push(['page', pairs[0]?.[0] === 'name' ? 1 : page(r, Math.min(ctx.deepPages, Math.max(1, Math.ceil(ctx.artists / size))))], ['size', size]);
  return `/artists${query(pairs)}`;
}

function albumSongs(r, ctx) {
  const artist = r.pick(ctx.catalogue);
  const album = r.pick(artist.albums);
  const pairs = sort(r, SONG_SORTS, 0.3);
  if (r.chance(0.5)) pairs.push(['page', 1], ['size', r.pick(SIZES)]);
  return `/artists/${artist.id}/albums/${album}/songs${query(pairs)}`;
}

/** A typeahead as a user types it: the first 1-3 letters of a seeded first name, in any case. */
function usersPrefix(r) {
  const name = r.pick(FIRST_NAMES);
  const prefix = [...name].slice(0, r.int(1, 3)).join('');
  const pairs = [['first_name_starts_with', r.chance(0.5) ? prefix.toLowerCase() : prefix]];
  pairs.push(...sort(r, ['id', 'last_name', 'age'], 0.4));
  pairs.push(['page', r.pick([1, 1, 1, 2, 3])], ['size', r.pick(SIZES)]);
  return `/users${query(pairs)}`;
}

/** An age window, sorted by age or id. */
function usersRange(r) {
  const older = r.int(0, 90);
  const pairs = [
    ['older_than', older],
    ['younger_than', r.int(older + 2, 100)],
  ];
  pairs.push(...sort(r, ['id', 'age'], 0.3));
  pairs.push(['page', r.pick([1, 1, 2, 3, 5])], ['size', r.pick(SIZES)]);
  return `/users${query(pairs)}`;
}

/** A page by cursor anywhere in the list: by id, or by age (descending) then id. */
function usersCursor(r, users) {
  const id = r.int(1, users);
  if (r.chance(0.5))
    return `/users${query([
      ['after', cursorFor('users|id:asc', [id])],
      ['size', r.pick(SIZES)],
    ])}`;
  const age = r.int(0, 99);
  return `/users${query([
    ['sort', 'age:desc'],
    ['after', cursorFor('users|age:desc,id:asc', [age, id])],
    ['size', r.pick(SIZES)],
  ])}`;
}

/** A typeahead on artist names: the first 1-12 characters of a sampled artist's name. */
function artistPrefix(r, ctx) {
  const name = r.pick(ctx.catalogue).name;
  const pairs = [['name_starts_with', [...name].slice(0, r.int(1, Math.min(name.length, 12))).join('')]];
  if (r.chance(0.5)) pairs.push(['sort', 'name:asc']);
  pairs.push(['page', r.pick([1, 1, 2, 3])], ['size', r.pick(SIZES)]);
  return `/artists${query(pairs)}`;
}

/** An artist's albums released after a year. */
function albumRange(r, ctx) {
  const artist = r.pick(ctx.catalogue);
  const pairs = [['released_after', r.int(1950, 2020)]];
  if (r.chance(0.5)) pairs.push(['released_before', r.int(2021, 2030)]);
  pairs.push(...sort(r, ['id', 'year', 'name'], 0.5));
  return `/artists/${artist.id}/albums${query(pairs)}`;
}

/** A page of 20 artists, each with its albums (embed=albums), anywhere in the list. */
function artistsEmbed(r, ctx) {
  const pairs = [['embed', 'albums'], ...sort(r, ARTIST_SORTS, 0.5)];
  pairs.push(['page', r.int(1, Math.max(1, Math.floor(ctx.artists / 20)))], ['size', 20]);
  return `/artists${query(pairs)}`;
}

/**
 * opts: { seed, count, probesPerKind, patches, users, artists, catalogue: [{ id, name, albums: [albumId] }] }
 * (albums never include the album the benchmark writes to). Returns
 * { reads: [{ kind, path }], probes: { kind: [path] }, patches: [{ id, body }] }: `count` distinct reads
 * in the mix's proportions, `probesPerKind` further distinct paths per kind for the one-at-a-time
 * latency, and `patches` distinct users (read by no single-user request) each with a status/age change.
 */
export function generateMix(opts) {
  const o = { seed: DEFAULT_MIX_SEED, count: DEFAULT_MIX_COUNT, probesPerKind: 200, patches: 1000, deepPages: 500, ...opts };
  if (!(o.users >= 1) || !(o.artists >= 1) || !o.catalogue?.length) throw new Error('generateMix needs users, artists and a catalogue sample');
  const r = draw(rng(o.seed));
  const seen = new Set();
  const userIds = new Set();

  // Users the PATCHes change: no single-user read asks for them, so their originals are read from
  // the dataset file and put back after each PATCH phase.
  const patches = [];
  const patchCount = Math.min(o.patches, Math.floor(o.users / 4));
  while (patches.length < patchCount) {
    const id = r.int(1, o.users);
    if (userIds.has(id)) continue;
    userIds.add(id);
    const x = r.int(0, 2);
    const body =
      x === 0 ? { status: r.pick(['active', 'inactive']) } : x === 1 ? { age: r.int(0, 99) } : { status: r.pick(['active', 'inactive']), age: r.int(0, 99) };
    patches.push({ id, body });
  }

  const makers = {
    'users-list': () => usersList(r, o.deepPages),
    alias: () => alias(r, o.deepPages),
    user: () => {
      const id = r.int(1, o.users);
      if (userIds.has(id)) return null;
      userIds.add(id);
      return `/users/${id}`;
    },
    'artist-list': () => artistList(r, o),
    artist: () => `/artists/${r.int(1, o.artists)}`,
    'album-songs': () => albumSongs(r, o),
    'users-prefix': () => usersPrefix(r),
    'users-range': () => usersRange(r),
    'users-cursor': () => usersCursor(r, o.users),
    'artist-prefix': () => artistPrefix(r, o),
    'album-range': () => albumRange(r, o),
    'artists-embed': () => artistsEmbed(r, o),
  };
  const exhausted = new Set();
  /** A path of this kind not drawn before, or null once 200 draws in a row were all repeats. */
  const fresh = (kind) => {
    for (let tries = 0; tries < 200; tries++) {
      const path = makers[kind]();
      if (path !== null && !seen.has(path)) {
        seen.add(path);
        return path;
      }
    }
    exhausted.add(kind);
    return null;
  };

  const probes = {};
  for (const { kind } of MIX_KINDS) {
    probes[kind] = [];
    for (let i = 0; i < o.probesPerKind; i++) {
      const path = fresh(kind);
      if (path === null) break;
      probes[kind].push(path);
    }
    exhausted.clear();
  }

  const reads = [];
  while (reads.length < o.count) {
    const open = MIX_KINDS.filter((k) => !exhausted.has(k.kind));
    if (open.length === 0) throw new Error(`the dataset is too small for ${o.count} distinct requests (got ${reads.length})`);
    let x = r.next() * open.reduce((sum, k) => sum + k.weight, 0);
    const { kind } = open.find((k) => (x -= k.weight) < 0) ?? open.at(-1);
    const path = fresh(kind);
    if (path !== null) reads.push({ kind, path });
  }
  return { reads, probes, patches };
}

/** The kind's entry of MIX_KINDS. */
export const kindOf = (kind) => MIX_KINDS.find((k) => k.kind === kind);
