import fc from 'fast-check';
import { sql } from 'kysely';
import { collationKey, fold } from '../../src/db/collation.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, type Client, type TestContext } from '../helpers.js';
import { expectedUsers, filterParams, ids, seedUsers, SORTABLE, type SeedUser, type SortField } from './fixtures.js';

// Random writes (users created, moved between statuses, ages and countries, deleted; songs written
// elsewhere in the catalogue) interleaved with random list queries. Every page and every total equals
// the in-memory oracle over the rows as they are after the writes so far: the summary counts, the
// per-table versions that keep remembered totals and page boundaries, and the page-strategy choice
// are exact through any sequence of writes.

let ctx: TestContext;
let api: Client;
let users: SeedUser[];
let album: { artistId: number; albumId: number };
let created = 0;

const FIRST = ['Ana', 'ana', 'Bruno', 'carla', 'João', 'joao'];
const LAST = ['Silva', 'souza', 'Lima', 'Müller'];
const COUNTRIES = ['Brazil', 'brazil', 'Argentina', 'chile', 'Perú', 'peru'];

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.admin);
  const people = Array.from({ length: 30 }, (_, i) => ({
    first_name: FIRST[i % FIRST.length]!,
    last_name: LAST[i % LAST.length]!,
    age: 15 + ((i * 7) % 40),
    status: i % 3 === 0 ? ('inactive' as const) : ('active' as const),
    country: COUNTRIES[i % COUNTRIES.length]!,
  }));
  users = await seedUsers(api, people, 'w');
  const artistId = (await createArtist(api, 'Writers')).id;
  album = { artistId, albumId: (await createAlbum(api, artistId, 'Side effects')).id };
});
afterAll(() => ctx.close());

const personArb = fc.record({
  first_name: fc.constantFrom(...FIRST),
  last_name: fc.constantFrom(...LAST),
  age: fc.integer({ min: 0, max: 70 }),
  status: fc.constantFrom('active' as const, 'inactive' as const),
  country: fc.constantFrom(...COUNTRIES),
});
const patchArb = fc
  .record(
    {
      age: fc.integer({ min: 0, max: 70 }),
      status: fc.constantFrom('active', 'inactive'),
      country: fc.constantFrom(...COUNTRIES),
      first_name: fc.constantFrom(...FIRST),
      last_name: fc.constantFrom(...LAST),
    },
    { requiredKeys: [] },
  )
  .filter((p) => Object.keys(p).length > 0);
const queryArb = fc.record({
  filters: fc.record(
    {
      status: fc.constantFrom('active', 'inactive'),
      older_than: fc.integer({ min: 0, max: 60 }),
      younger_than: fc.integer({ min: 5, max: 70 }),
      lives_in: fc.uniqueArray(fc.constantFrom('brazil', 'ARGENTINA', 'Chile', 'PERU'), { minLength: 1, maxLength: 2 }),
      first_name: fc.constantFrom(...FIRST),
    },
    { requiredKeys: [] },
  ),
  sort: fc.uniqueArray(fc.record({ field: fc.constantFrom(...SORTABLE), dir: fc.constantFrom('asc', 'desc') }), { maxLength: 2, selector: (k) => k.field }),
  page: fc.integer({ min: 1, max: 6 }),
  size: fc.integer({ min: 1, max: 12 }),
});
// A lone name prefix: its total is summed from users_name_counts (migrations 20261124T0900, 20261126T0100).
const PREFIXES = ['a', 'AN', 'ana', 'b', 'c', 'Carla', 'x', 's', 'SO', 'l', 'lima', 'jo', 'JOÃ', 'mü', 'mu'];
const prefixQueryArb = fc.record({
  filters: fc.oneof(fc.record({ first_name_starts_with: fc.constantFrom(...PREFIXES) }), fc.record({ last_name_starts_with: fc.constantFrom(...PREFIXES) })),
  sort: queryArb.map((q) => q.sort),
  page: fc.integer({ min: 1, max: 6 }),
  size: fc.integer({ min: 1, max: 12 }),
});
const opArb = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('query' as const), query: queryArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('query' as const), query: prefixQueryArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('create' as const), person: personArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('patch' as const), pick: fc.nat(), patch: patchArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('song' as const) }) },
  // The last query again: whatever was remembered for it (total, page boundaries) must not outlive a write.
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('again' as const) }) },
);

type Op = typeof opArb extends fc.Arbitrary<infer T> ? T : never;
type Query = { filters: Record<string, unknown>; sort: { field: SortField; dir: string }[]; page: number; size: number };

let lastQuery: Query | undefined;

async function apply(op: Op): Promise<void> {
  if (op.kind === 'again' && lastQuery) return apply({ kind: 'query', query: lastQuery });
  if (op.kind === 'query') {
    lastQuery = op.query;
    const { filters, sort, page, size } = op.query;
    const params = [...filterParams(filters), `page=${page}&size=${size}`];
    if (sort.length > 0) params.push(`sort=${sort.map((s) => `${s.field}:${s.dir}`).join(',')}`);
    const all = expectedUsers(users, filters, sort);
    const res = await api.get(`/users?${params.join('&')}`);
    expect(res.statusCode).toBe(200);
    expect(ids(res.json()), params.join('&')).toEqual(all.slice((page - 1) * size, page * size).map((u) => u.id));
    expect(res.headers['x-total-count'], params.join('&')).toBe(String(all.length));
  } else if (op.kind === 'create') {
    const res = await api.post('/users', { ...op.person, email: `new${created++}@example.com` });
    expect(res.statusCode).toBe(201);
    users.push(res.json<SeedUser>());
  } else if (op.kind === 'patch' && users.length > 0) {
    const target = users[op.pick % users.length]!;
    const res = await api.patch(`/users/${target.id}`, op.patch);
    expect(res.statusCode).toBe(200);
    users = users.map((u) => (u.id === target.id ? ({ ...u, ...op.patch } as SeedUser) : u));
  } else if (op.kind === 'delete' && users.length > 0) {
    const target = users[op.pick % users.length]!;
    expect((await api.delete(`/users/${target.id}`)).statusCode).toBe(204);
    users = users.filter((u) => u.id !== target.id);
  } else if (op.kind === 'song') {
    const res = await api.post(`/artists/${album.artistId}/albums/${album.albumId}/songs`, { name: 'Interlude', time: '01:00' });
    expect(res.statusCode).toBe(201);
  }
}

describe('GET /users with writes in between (property)', () => {
  it('answers every page and total as the oracle does over the rows after each write', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 25 }), async (ops) => {
        for (const op of ops) await apply(op);
      }),
      { numRuns: 40, seed: 20261124 },
    );
  });

  it('pages a sort led by a summary column (read one value at a time) exactly, across the boundaries between values', async () => {
    const more = Array.from({ length: 24 }, (_, i) => ({
      first_name: FIRST[(i * 5) % FIRST.length]!,
      last_name: LAST[(i * 7) % LAST.length]!,
      age: 18 + ((i * 11) % 30),
      status: i % 3 === 1 ? ('inactive' as const) : ('active' as const),
      country: COUNTRIES[(i * 3) % COUNTRIES.length]!,
    }));
    users.push(...(await seedUsers(api, more, 's')));
    const restArb = fc.uniqueArray(
      fc.record({ field: fc.constantFrom<SortField>('first_name', 'last_name', 'age', 'country', 'id'), dir: fc.constantFrom('asc', 'desc') }),
      {
        minLength: 1,
        maxLength: 2,
        selector: (k) => k.field,
      },
    );
    const coveredArb = fc.record(
      {
        older_than: fc.integer({ min: 0, max: 40 }),
        lives_in: fc.uniqueArray(fc.constantFrom('brazil', 'ARGENTINA', 'Chile', 'PERU'), { minLength: 1, maxLength: 2 }),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<SortField>('status', 'country', 'age'),
        fc.constantFrom('asc', 'desc'),
        restArb,
        coveredArb,
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 9 }),
        async (lead, dir, rest, filters, page, size) => {
          const sort = [{ field: lead, dir }, ...rest.filter((k) => k.field !== lead)];
          const all = expectedUsers(users, filters, sort);
          const params = [...filterParams(filters), `sort=${sort.map((s) => `${s.field}:${s.dir}`).join(',')}`, `page=${page}&size=${size}`].join('&');
          const res = await api.get(`/users?${params}`);
          expect(res.statusCode).toBe(200);
          expect(ids(res.json()), params).toEqual(all.slice((page - 1) * size, page * size).map((u) => u.id));
          expect(res.headers['x-total-count']).toBe(String(all.length));
        },
      ),
      { numRuns: 60, seed: 20261125 },
    );
  });

  // Counted here from the users' own text, keyed as src/db/collation.ts keys it: the stored keys and
  // the summaries kept from them agree with the names they belong to.
  const countBy = (rows: Record<string, unknown>[], key: (r: Record<string, unknown>) => string) => {
    const counts = new Map<string, number>();
    for (const r of rows) counts.set(key(r), (counts.get(key(r)) ?? 0) + 1);
    return counts;
  };
  const usersNow = async () => (await sql<Record<string, unknown>>`select first_name, last_name, status, country, age from users`.execute(ctx.app.db)).rows;

  it('keeps the name summary equal to counting the users themselves', async () => {
    const { rows: summary } = await sql<{ field: string; name: string; n: number | string }>`
      select field, name, sum(n) as n from users_name_counts group by field, name having sum(n) <> 0`.execute(ctx.app.db);
    const rows = await usersNow();
    const counted = new Map<string, number>();
    for (const field of ['first_name', 'last_name']) {
      for (const [name, n] of countBy(rows, (r) => collationKey(String(r[field])))) counted.set(`${field}\u0000${name}`, n);
    }
    expect(new Map(summary.map((r) => [`${r.field}\u0000${r.name}`, Number(r.n)]))).toEqual(counted);
    expect(summary.length).toBeGreaterThan(0);
  });

  it('keeps the summary equal to counting the users themselves', async () => {
    const { rows: summary } = await sql<{ status: string; country_fold: string; country_key: string; age: number; n: number | string }>`
      select status, country_fold, country_key, age, sum(n) as n from users_counts group by status, country_fold, country_key, age having sum(n) <> 0`.execute(
      ctx.app.db,
    );
    const counted = countBy(await usersNow(), (r) => {
      const key = collationKey(String(r.country));
      return `${String(r.status)}|${fold(String(r.country))}|${key}|${Number(r.age)}`;
    });
    expect(new Map(summary.map((r) => [`${r.status}|${r.country_fold}|${r.country_key}|${Number(r.age)}`, Number(r.n)]))).toEqual(counted);
    expect(summary.length).toBeGreaterThan(0);
  });
});
