import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, type Client, type TestContext } from '../helpers.js';
import { expectedUsers, ids, seedUsers, SORTABLE, type SeedUser, type SortField } from './fixtures.js';
import { shapeStats } from '../../src/query/shapes.js';

// For random filter/sort/page combinations, GET /users returns what a plain in-memory computation
// over the same rows returns: same ids, same order, same total.

let ctx: TestContext;
let api: Client;
let users: SeedUser[];

// Names as people write them: case and accents apart (Díaz and Diaz, João and Joao, Perú and Peru).
const FIRST = ['Ana', 'ana', 'Bruno', 'carla', 'Dan', 'eve', 'João', 'Joao', 'Élodie'];
const LAST = ['Silva', 'souza', 'Lima', 'Diaz', 'Díaz', 'Müller'];
const COUNTRIES = ['Brazil', 'brazil', 'Argentina', 'chile', 'Peru', 'Perú', 'México'];
type Field = SortField;

/** `count` people drawn from the names, countries, ages and statuses above. */
function people(count: number) {
  let seed = 7;
  const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
  return Array.from({ length: count }, () => ({
    first_name: FIRST[next(FIRST.length)]!,
    last_name: LAST[next(LAST.length)]!,
    age: next(60) + 10,
    status: next(3) === 0 ? ('inactive' as const) : ('active' as const),
    country: COUNTRIES[next(COUNTRIES.length)]!,
  }));
}

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.admin);
  users = await seedUsers(api, people(60), 'p');
});
afterAll(() => ctx.close());

const filterArb = fc.record(
  {
    status: fc.constantFrom('active', 'inactive'),
    older_than: fc.integer({ min: 0, max: 80 }),
    younger_than: fc.integer({ min: 0, max: 80 }),
    lives_in: fc.uniqueArray(fc.constantFrom('brazil', 'BRAZIL', 'ARGENTINA', 'Chile', 'peru', 'PERÚ', 'mexico', 'mars'), { minLength: 1, maxLength: 3 }),
    first_name: fc.constantFrom(...FIRST, 'Jo\u00e3o', 'Joa\u0303o'),
    last_name: fc.constantFrom(...LAST),
    first_name_starts_with: fc.constantFrom('a', 'AN', 'Ana', 'b', 'C', 'carl', 'e', 'x', 'jo', 'JOÃ', 'él'),
    last_name_starts_with: fc.constantFrom('s', 'SO', 'Silva', 'l', 'D', 'z', 'dí', 'MU'),
  },
  { requiredKeys: [] },
);
const sortArb = fc.uniqueArray(fc.record({ field: fc.constantFrom(...SORTABLE), dir: fc.constantFrom('asc', 'desc') }), {
  maxLength: 3,
  selector: (k) => k.field,
});
const pageArb = fc.record({
  style: fc.constantFrom('size', 'pagesize', 'limit', 'none'),
  n: fc.integer({ min: 1, max: 6 }),
  size: fc.integer({ min: 1, max: 25 }),
  singleSort: fc.boolean(),
});

const expected = (f: Record<string, unknown>, sort: { field: Field; dir: string }[]) => expectedUsers(users, f, sort);

/** One list request against the in-memory computation: the page's ids and the total. */
async function checkList(
  filters: Record<string, unknown>,
  sort: { field: Field; dir: string }[],
  page: { style: string; n: number; size: number; singleSort: boolean },
  on: { api: Client; users: SeedUser[] } = { api, users },
) {
  const params: string[] = [];
  for (const [k, v] of Object.entries(filters)) params.push(`${k}=${Array.isArray(v) ? `[${v.join(',')}]` : String(v)}`);
  if (page.singleSort && sort.length === 1) params.push(`sort_by=${sort[0]!.field}&order=${sort[0]!.dir}`);
  else if (sort.length > 0) params.push(`sort=${sort.map((s) => `${s.field}:${s.dir}`).join(',')}`);
  let offset = 0;
  let limit = 20;
  if (page.style === 'limit') {
    offset = (page.n - 1) * 7;
    limit = page.size;
    params.push(`offset=${offset}&limit=${limit}`);
  } else if (page.style !== 'none') {
    offset = (page.n - 1) * page.size;
    limit = page.size;
    params.push(`page=${page.n}&${page.style}=${page.size}`);
  }
  const all = expectedUsers(on.users, filters, sort);
  const res = await on.api.get(`/users?${params.join('&')}`);
  expect(res.statusCode).toBe(200);
  expect(ids(res.json())).toEqual(all.slice(offset, offset + limit).map((u) => u.id));
  expect(res.headers['x-total-count']).toBe(String(all.length));
}

// Only the filters the users summary counts by (status, age, country): the lists whose totals and
// page routes come from it (per-value reads, merges of countries, one arm per second-key value).
const summaryFilterArb = fc.record(
  {
    status: fc.constantFrom('active', 'inactive'),
    older_than: fc.integer({ min: 0, max: 80 }),
    younger_than: fc.integer({ min: 0, max: 80 }),
    lives_in: fc.uniqueArray(fc.constantFrom('brazil', 'BRAZIL', 'ARGENTINA', 'Chile', 'peru', 'PERÚ', 'mexico', 'mars'), { minLength: 1, maxLength: 3 }),
  },
  { requiredKeys: [] },
);
const dirArb = fc.constantFrom('asc', 'desc');
// Half of them a name and then a key the summary counts by: the sorts read as one arm per value.
const nameThenArb = fc
  .tuple(fc.constantFrom('first_name', 'last_name'), dirArb, fc.constantFrom('status', 'country', 'age'), dirArb)
  .map(([name, nameDir, other, otherDir]) => [
    { field: name as Field, dir: nameDir },
    { field: other as Field, dir: otherDir },
  ]);

describe('GET /users (property)', () => {
  it('matches an in-memory computation for random filters, sorts and pages', async () => {
    await fc.assert(
      fc.asyncProperty(filterArb, sortArb, pageArb, (f, s, p) => checkList(f, s, p)),
      { numRuns: 150, seed: 20261122 },
    );
  });

  it('matches it for random filters the summary counts by, sorts and pages', async () => {
    await fc.assert(
      fc.asyncProperty(summaryFilterArb, fc.oneof(sortArb, nameThenArb), pageArb, (f, s, p) => checkList(f, s, p)),
      { numRuns: 150, seed: 20261124 },
    );
  });
});

describe('GET /users on the SQL path (USERS_INDEX=off): a country or two, a status and ages, deep pages (property)', () => {
  // What SQLite reads from users_country_status_age (migration 20261127T0340): every column compared
  // is in its entries (page-strategy.ts heldIndex). On PostgreSQL, which has no such index, the same
  // lists through its own plans.
  let sqlPath: { api: Client; users: SeedUser[]; ctx: TestContext };
  beforeAll(async () => {
    const built = await buildTestApp({ usersIndex: false });
    const on = client(built.app, built.tokens.admin);
    sqlPath = { ctx: built, api: on, users: await seedUsers(on, people(300), 's') };
  });
  afterAll(() => sqlPath.ctx.close());
  const heldArb = fc.record(
    {
      status: fc.constantFrom('active', 'inactive'),
      older_than: fc.integer({ min: 0, max: 50 }),
      younger_than: fc.integer({ min: 20, max: 80 }),
      lives_in: fc.uniqueArray(fc.constantFrom('brazil', 'ARGENTINA', 'Chile', 'peru', 'PERÚ', 'mexico'), { minLength: 1, maxLength: 2 }),
    },
    { requiredKeys: ['status', 'lives_in'] },
  );
  const deepArb = fc.record({
    style: fc.constantFrom('size', 'limit'),
    n: fc.integer({ min: 1, max: 12 }),
    size: fc.integer({ min: 1, max: 10 }),
    singleSort: fc.boolean(),
  });
  it('matches the in-memory computation', async () => {
    await fc.assert(
      fc.asyncProperty(heldArb, fc.oneof(sortArb, nameThenArb), deepArb, (filters, sort, page) => checkList(filters, sort, page, sqlPath)),
      { numRuns: 150, seed: 20261127 },
    );
  });
});

describe('GET /users deep pages (keyset from remembered page boundaries)', () => {
  it('gives every page exactly, whatever order the pages are asked in', async () => {
    await fc.assert(
      fc.asyncProperty(
        filterArb,
        sortArb,
        fc.integer({ min: 1, max: 7 }),
        fc.array(fc.integer({ min: 1, max: 14 }), { minLength: 3, maxLength: 10 }),
        async (filters, sort, size, pages) => {
          const params: string[] = [];
          for (const [k, v] of Object.entries(filters)) params.push(`${k}=${Array.isArray(v) ? `[${v.join(',')}]` : String(v)}`);
          if (sort.length > 0) params.push(`sort=${sort.map((s) => `${s.field}:${s.dir}`).join(',')}`);
          const all = expected(filters, sort);
          for (const n of pages) {
            const res = await api.get(`/users?${[...params, `page=${n}&size=${size}`].join('&')}`);
            expect(res.statusCode).toBe(200);
            expect(ids(res.json()), `page ${n} of ${size}`).toEqual(all.slice((n - 1) * size, n * size).map((u) => u.id));
            expect(res.headers['x-total-count']).toBe(String(all.length));
          }
        },
      ),
      { numRuns: 80, seed: 20261123 },
    );
  });

  it('runs a list of a shape already seen with new values from its kept SQL, building no statement', async () => {
    // Two exact first names (no summary answers them: page and count), page 2: one shape, other values.
    const page = (name: string) => api.get(`/users?first_name=${encodeURIComponent(name)}&sort=age:desc&page=2&size=1`);
    const first = await page('Ana');
    expect(first.statusCode).toBe(200);
    const { built, shapes } = shapeStats(ctx.app.db);
    expect(shapes).toBeGreaterThan(0);
    const second = await page('Bruno');
    expect(second.statusCode).toBe(200);
    expect(second.json()).toHaveLength(1);
    expect(ids(second.json()), 'the values of the second request, not the first').toEqual(
      expected({ first_name: 'Bruno' }, [{ field: 'age', dir: 'desc' }])
        .slice(1, 2)
        .map((u) => u.id),
    );
    expect(shapeStats(ctx.app.db).built, 'statements built for the second request').toBe(built);
  });

  it('forgets the boundaries when data changes: the same page after a write is exact', async () => {
    const url = '/users?sort=age:asc,first_name:desc&page=3&size=5';
    const page = async () => ids((await api.get(url)).json());
    const expectedPage = () =>
      expected({}, [
        { field: 'age', dir: 'asc' },
        { field: 'first_name', dir: 'desc' },
      ])
        .slice(10, 15)
        .map((u) => u.id);
    await api.get('/users?sort=age:asc,first_name:desc&page=2&size=5');
    expect(await page()).toEqual(expectedPage());
    // Move the youngest user to the end: every later page shifts by one.
    const youngest = expected({}, [
      { field: 'age', dir: 'asc' },
      { field: 'first_name', dir: 'desc' },
    ])[0]!;
    const res = await api.patch(`/users/${youngest.id}`, { age: 120 });
    expect(res.statusCode).toBe(200);
    users = users.map((u) => (u.id === youngest.id ? { ...u, age: 120 } : u));
    expect(await page()).toEqual(expectedPage());
  });
});

describe('GET /users?fields= (property)', () => {
  const FIELDS = ['id', 'first_name', 'last_name', 'email', 'age', 'status', 'country'] as const;
  it('answers the oracle rows with only the listed properties, in the route order', async () => {
    await fc.assert(
      fc.asyncProperty(
        filterArb,
        fc.uniqueArray(fc.constantFrom(...FIELDS), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 3 }),
        async (filters, fields, page) => {
          const all = expected(filters, []);
          const params = [
            ...Object.entries(filters).map(([k, v]) => `${k}=${Array.isArray(v) ? `[${v.join(',')}]` : String(v)}`),
            `fields=${fields.join(',')}`,
            `page=${page}&size=5`,
          ];
          const res = await api.get(`/users?${params.join('&')}`);
          expect(res.statusCode).toBe(200);
          const keep = FIELDS.filter((f) => fields.includes(f));
          expect(res.json()).toEqual(all.slice((page - 1) * 5, page * 5).map((u) => Object.fromEntries(keep.map((f) => [f, u[f]]))));
          for (const row of res.json<object[]>()) expect(Object.keys(row)).toEqual(keep);
          expect(res.headers['x-total-count']).toBe(String(all.length));
        },
      ),
      { numRuns: 60, seed: 20261127 },
    );
  });
});
