import { describe, expect, it } from 'vitest';

// The realistic mix's generator (bench/lib/mix.mjs): pure, so it runs without a dataset or a service.
const lib = (name: string) => new URL(`../../bench/lib/${name}.mjs`, import.meta.url).href;
type Read = { kind: string; path: string };
type Mix = { reads: Read[]; probes: Record<string, string[]>; patches: { id: number; body: { status?: string; age?: number } }[] };
type Artist = { id: number; name: string; albums: number[] };
const { generateMix, MIX_PARAMS, MIX_KINDS, COUNTRIES, ALIASES, MIN_MIX_COUNT } = (await import(lib('mix'))) as {
  generateMix: (o: { seed?: number; count?: number; probesPerKind?: number; users: number; artists: number; catalogue: Artist[] }) => Mix;
  MIX_PARAMS: Record<string, string[]>;
  MIX_KINDS: { kind: string; weight: number }[];
  COUNTRIES: string[];
  ALIASES: string[];
  MIN_MIX_COUNT: number;
};
const { phaseList, advance, dirtyUsers, newCursor, mixRequests } = (await import(lib('mix-run'))) as {
  phaseList: (reqs: unknown, phase: { write: string | null }, cursor: Cursor) => { method: string; path: string }[];
  advance: (cursor: Cursor, phase: { write: string | null }, sent: number) => void;
  dirtyUsers: (cursor: Cursor, reqs: unknown) => number[];
  newCursor: () => Cursor;
  mixRequests: (mix: Mix, tokens: Record<string, string>, ids: { writeArtistId: number; writeAlbumId: number }) => unknown;
};
type Cursor = { read: number; song: number; patch: number; patchDirtyFrom: number | null };

// A catalogue sample shaped like the seeded one: 300 artists spread over 10,000, nine readable albums each.
const ARTISTS = 10_000;
const USERS = 1_000_000;
const catalogue: Artist[] = Array.from({ length: 300 }, (_, i) => {
  const id = 1 + i * 33;
  return { id, name: `The Silver Owls ${id}`, albums: Array.from({ length: 9 }, (_, k) => (id - 1) * 10 + k + 1) };
});
const WRITE_ALBUM = 10; // artist 1's last album: the one the benchmark writes to, left out of the sample
const generate = (seed?: number) => generateMix({ seed, users: USERS, artists: ARTISTS, catalogue });

const USER_SORTS = ['id', 'first_name', 'last_name', 'age', 'status', 'country'];
const SORTS: Record<string, string[]> = {
  'users-list': USER_SORTS,
  alias: USER_SORTS,
  'artist-list': ['id', 'name'],
  'album-songs': ['id', 'name', 'time'],
  'users-prefix': ['id', 'last_name', 'age'],
  'users-range': ['id', 'age'],
  'users-cursor': ['age'],
  'artist-prefix': ['name'],
  'album-range': ['id', 'year', 'name'],
  'artists-embed': ['id', 'name'],
};
const { decodeCursor, cursorScope } = await import('../../src/query/cursor.js');

/** Checks one generated path against what its route declares; returns the problems found. */
function problems({ kind, path }: Read): string[] {
  const out: string[] = [];
  const url = new URL(path, 'http://x');
  const params = [...url.searchParams.entries()];
  const keys = params.map(([k]) => k);
  const allowed = MIX_PARAMS[kind];
  if (!allowed) return [`unknown kind ${kind}`];
  for (const k of keys) if (!allowed.includes(k)) out.push(`parameter ${k} is not one of ${kind}'s`);
  if (new Set(keys).size !== keys.length) out.push('a repeated parameter');
  const get = (k: string) => url.searchParams.get(k);
  const int = (k: string, min: number, max: number) => {
    const v = get(k);
    if (v !== null && !(/^\d+$/.test(v) && Number(v) >= min && Number(v) <= max)) out.push(`${k}=${v} out of ${min}..${max}`);
  };
  int('page', 1, 500);
  int('size', 10, 100);
  int('older_than', 0, 99);
  int('younger_than', 0, 100);
  int('released_after', 1000, 9999);
  int('released_before', 1000, 9999);
  if (get('status') !== null && !['active', 'inactive'].includes(get('status')!)) out.push(`status=${get('status')}`);
  const livesIn = get('lives_in');
  if (livesIn !== null) {
    const list = livesIn.startsWith('[') ? livesIn.slice(1, -1).split(',') : [livesIn];
    if (![1, 3].includes(list.length) || new Set(list).size !== list.length || !list.every((c) => COUNTRIES.includes(c))) out.push(`lives_in=${livesIn}`);
  }
  const fields = SORTS[kind] ?? [];
  if (get('sort') !== null) {
    const items = get('sort')!
      .split(',')
      .map((s) => s.split(':'));
    if (items.length > 2 || !items.every(([f, d]) => fields.includes(f!) && ['asc', 'desc'].includes(d!))) out.push(`sort=${get('sort')}`);
    if (new Set(items.map(([f]) => f)).size !== items.length) out.push('a field sorted twice');
    if (keys.includes('sort_by') || keys.includes('order')) out.push('sort with sort_by/order');
  }
  if (get('sort_by') !== null && !fields.includes(get('sort_by')!)) out.push(`sort_by=${get('sort_by')}`);
  if (get('order') !== null && (!['asc', 'desc'].includes(get('order')!) || get('sort_by') === null)) out.push(`order=${get('order')}`);

  const p = url.pathname;
  const ok: Record<string, () => boolean> = {
    'users-list': () => p === '/users',
    alias: () => ALIASES.some((a) => p === `/users/${a}`),
    user: () => /^\/users\/\d+$/.test(p) && Number(p.split('/')[2]) >= 1 && Number(p.split('/')[2]) <= USERS,
    'artist-list': () => p === '/artists' && (get('name') === null || catalogue.some((a) => a.name === get('name'))),
    artist: () => /^\/artists\/\d+$/.test(p) && Number(p.split('/')[2]) >= 1 && Number(p.split('/')[2]) <= ARTISTS,
    'album-songs': () => {
      const m = /^\/artists\/(\d+)\/albums\/(\d+)\/songs$/.exec(p);
      return !!m && !!catalogue.find((a) => a.id === Number(m[1]))?.albums.includes(Number(m[2])) && Number(m[2]) !== WRITE_ALBUM;
    },
    'users-prefix': () => p === '/users' && (get('first_name_starts_with') ?? '').length > 0,
    'users-range': () => p === '/users' && Number(get('older_than')) < Number(get('younger_than')),
    'users-cursor': () => {
      // The cursor must be one the service itself would accept for that sort (src/query/cursor.ts).
      const keys =
        get('sort') === 'age:desc'
          ? [
              { column: 'age', direction: 'desc' },
              { column: 'id', direction: 'asc' },
            ]
          : [{ column: 'id', direction: 'asc' }];
      return (
        p === '/users' &&
        decodeCursor(
          get('after') ?? '',
          cursorScope('users', keys),
          keys.map(() => ({ string: false })),
        ).ok
      );
    },
    'artist-prefix': () => p === '/artists' && catalogue.some((a) => a.name.startsWith(get('name_starts_with') ?? '\u0000')),
    'artists-embed': () => p === '/artists' && get('embed') === 'albums' && get('size') === '20',
    'album-range': () => /^\/artists\/\d+\/albums$/.test(p) && catalogue.some((a) => p === `/artists/${a.id}/albums`),
  };
  if (!ok[kind]!()) out.push(`path ${p} does not address an existing ${kind}`);
  return out;
}

describe('the realistic mix generator', () => {
  const mix = generate();

  it('is deterministic from its seed, and another seed gives other requests', () => {
    const again = generate();
    expect(again.reads).toEqual(mix.reads);
    expect(again.probes).toEqual(mix.probes);
    expect(again.patches).toEqual(mix.patches);
    const other = generate(mix.reads.length + 1);
    const paths = new Set(mix.reads.map((r) => r.path));
    expect(other.reads.filter((r) => paths.has(r.path)).length).toBeLessThan(other.reads.length / 2);
  });

  it('draws at least 10,000 distinct reads, probes and PATCH targets apart from them', () => {
    expect(MIN_MIX_COUNT).toBe(10_000);
    expect(mix.reads.length).toBeGreaterThanOrEqual(10_000);
    const all = [...mix.reads.map((r) => r.path), ...Object.values(mix.probes).flat()];
    expect(new Set(all).size).toBe(all.length);
    for (const { kind } of MIX_KINDS) expect(mix.probes[kind]).toHaveLength(200);
    const patched = new Set(mix.patches.map((p) => p.id));
    expect(patched.size).toBe(mix.patches.length);
    expect(all.filter((p) => /^\/users\/\d+$/.test(p) && patched.has(Number(p.split('/')[2])))).toEqual([]);
    for (const { body } of mix.patches) {
      expect(Object.keys(body).length).toBeGreaterThan(0);
      expect(Object.keys(body).every((k) => k === 'status' || k === 'age')).toBe(true);
    }
  });

  it('uses only the parameters each route declares, with valid values, on records that exist', () => {
    const reads = [...mix.reads, ...Object.entries(mix.probes).flatMap(([kind, paths]) => paths.map((path) => ({ kind, path })))];
    const found = reads.flatMap((r) => problems(r).map((p) => `${r.path}: ${p}`));
    expect(found).toEqual([]);
  });

  it('covers the mix the issue describes', () => {
    const counts: Record<string, number> = {};
    for (const r of mix.reads) counts[r.kind] = (counts[r.kind] ?? 0) + 1;
    for (const { kind, weight } of MIX_KINDS) expect((counts[kind] ?? 0) / mix.reads.length).toBeCloseTo(weight / 100, 1);
    const users = mix.reads.filter((r) => r.kind === 'users-list').map((r) => r.path);
    const share = (re: RegExp) => users.filter((p) => re.test(p)).length / users.length;
    expect(share(/lives_in=\[[^\]]+,[^\]]+,[^\]]+\]/)).toBeGreaterThan(0.1); // lists of three countries
    expect(share(/lives_in=[a-z]/)).toBeGreaterThan(0.1); // one country
    expect(share(/sort=[a-z_]+:(asc|desc),/)).toBeGreaterThan(0.1); // two-field sorts
    expect(share(/sort_by=/)).toBeGreaterThan(0.1);
    expect(share(/[?&]page=[1-5]&/)).toBeGreaterThan(0.7);
    expect(share(/[?&]page=(\d{3})&/)).toBeGreaterThan(0.05); // sometimes deep, up to 500
    expect(share(/status=.*older_than=.*younger_than=.*lives_in=/)).toBeGreaterThan(0);
  });
});

describe('the mix phases', () => {
  const mix = generate();
  const reqs = mixRequests(mix, { read: 'r', write: 'w', admin: 'a' }, { writeArtistId: 1, writeAlbumId: WRITE_ALBUM });

  it('put one write in every 20 requests and continue where the last run stopped', () => {
    const cursor = newCursor();
    const phase = { write: 'patch' };
    const first = phaseList(reqs, phase, cursor);
    expect(first.slice(0, 20).map((r) => r.method)).toEqual([...Array(19).fill('GET'), 'PATCH']);
    expect(first.filter((r) => r.method === 'GET')).toHaveLength(mix.reads.length);
    advance(cursor, phase, 40);
    const next = phaseList(reqs, phase, cursor);
    expect(next[0]!.path).toBe(mix.reads[38]!.path);
    expect(next[19]!.path).toBe(`/users/${mix.patches[2]!.id}`);
    expect(dirtyUsers(cursor, reqs)).toEqual([mix.patches[0]!.id, mix.patches[1]!.id]);
    const reads = phaseList(reqs, { write: null }, cursor);
    expect(reads.every((r) => r.method === 'GET')).toBe(true);
  });
});
