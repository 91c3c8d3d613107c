import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createArtist, errorBody, type Client, type TestContext } from '../helpers.js';
import { expectedUsers, filterParams, ids, links, seedUsers, SORTABLE, type SeedUser } from './fixtures.js';

// Cursor pagination (after=) against the in-memory oracle: following Link next from after= (empty)
// gives every row once, in order, whatever the filters and sort; writes between pages skip no row
// and repeat none.

let ctx: TestContext;
let api: Client;
let users: SeedUser[];

const FIRST = ['Ana', 'ana', 'Bruno', 'carla', 'Dan', 'eve'];
const LAST = ['Silva', 'souza', 'Lima', 'Diaz'];
const COUNTRIES = ['Brazil', 'brazil', 'Argentina', 'chile', 'Peru'];
let seed = 11;
const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
const person = () => ({
  first_name: FIRST[next(FIRST.length)]!,
  last_name: LAST[next(LAST.length)]!,
  age: next(60) + 10,
  status: next(3) === 0 ? ('inactive' as const) : ('active' as const),
  country: COUNTRIES[next(COUNTRIES.length)]!,
});

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.admin);
  users = await seedUsers(
    api,
    Array.from({ length: 50 }, () => person()),
    'c',
  );
});
afterAll(() => ctx.close());

const filterArb = fc.record(
  {
    status: fc.constantFrom('active', 'inactive'),
    older_than: fc.integer({ min: 0, max: 70 }),
    lives_in: fc.uniqueArray(fc.constantFrom('brazil', 'ARGENTINA', 'Chile', 'peru'), { minLength: 1, maxLength: 2 }),
    first_name_starts_with: fc.constantFrom('a', 'B', 'carl', 'e'),
  },
  { requiredKeys: [] },
);
const sortArb = fc.uniqueArray(fc.record({ field: fc.constantFrom(...SORTABLE), dir: fc.constantFrom('asc', 'desc') }), {
  maxLength: 3,
  selector: (k) => k.field,
});
const sortParam = (sort: { field: string; dir: string }[]) => (sort.length ? [`sort=${sort.map((s) => `${s.field}:${s.dir}`).join(',')}`] : []);

/** Follows Link next from `first` to the end; `between` runs after each page (writes). */
async function walk(first: string, between: (page: number) => Promise<void> = async () => {}) {
  const seen: SeedUser[] = [];
  const totals: string[] = [];
  let url: string | undefined = first;
  for (let page = 0; url; page++) {
    if (page > 1000) throw new Error('the walk does not end');
    const res = await api.get(url);
    expect(res.statusCode, res.body).toBe(200);
    seen.push(...res.json<SeedUser[]>());
    totals.push(String(res.headers['x-total-count']));
    const rel = links(res.headers.link);
    expect(rel.first).toMatch(/[?&]after=&size=\d+$/);
    url = rel.next;
    // Writes between the first pages only, so that the walk reaches the end.
    if (url && page < 6) await between(page);
  }
  return { seen, totals };
}

describe('GET /users?after= (cursor pagination, property)', () => {
  it('following Link next gives the oracle list exactly once, with the exact total on every page', async () => {
    await fc.assert(
      fc.asyncProperty(filterArb, sortArb, fc.integer({ min: 1, max: 9 }), async (filters, sort, size) => {
        const all = expectedUsers(users, filters, sort);
        const { seen, totals } = await walk(`/users?${[...filterParams(filters), ...sortParam(sort), `after=&size=${size}`].join('&')}`);
        expect(ids(seen)).toEqual(ids(all));
        expect(new Set(totals)).toEqual(new Set([String(all.length)]));
      }),
      { numRuns: 60, seed: 20261124 },
    );
  });

  it('skips no row and repeats none while rows are inserted and deleted between pages', async () => {
    await fc.assert(
      fc.asyncProperty(sortArb, fc.integer({ min: 2, max: 6 }), async (sort, size) => {
        const before = new Set(ids(users));
        const deleted = new Set<number>();
        const { seen } = await walk(`/users?${[...sortParam(sort), `after=&size=${size}`].join('&')}`, async () => {
          // Two new users anywhere in the order (before or after the cursor), and one existing user deleted.
          for (let i = 0; i < 2; i++) {
            const res = await api.post('/users', { ...person(), email: `w${users.length}-${i}-${seed}@example.com` });
            expect(res.statusCode).toBe(201);
            users.push(res.json<SeedUser>());
          }
          const victim = users[next(users.length)]!;
          expect((await api.delete(`/users/${victim.id}`)).statusCode).toBe(204);
          users = users.filter((u) => u.id !== victim.id);
          deleted.add(victim.id);
        });
        const seenIds = ids(seen);
        // None repeated.
        expect(new Set(seenIds).size).toBe(seenIds.length);
        // None skipped: every user there from the start to the end was seen.
        for (const id of before) if (!deleted.has(id)) expect(seenIds, `user ${id}`).toContain(id);
        // In the sort order throughout (what was seen is the oracle's order of those rows).
        const byId = new Map([...users, ...seen].map((u) => [u.id, u]));
        expect(seenIds).toEqual(
          ids(
            expectedUsers(
              [...new Set(seenIds)].map((id) => byId.get(id)!),
              {},
              sort,
            ),
          ),
        );
      }),
      { numRuns: 15, seed: 20261125 },
    );
  });
});

describe('cursor errors and links', () => {
  const firstPage = async (url: string) => {
    const res = await api.get(url);
    expect(res.statusCode).toBe(200);
    return links(res.headers.link).next!;
  };
  const cursorOf = (url: string) => decodeURIComponent(/[?&]after=([^&]*)/.exec(url)![1]!);

  it.each([
    ['edited', (c: string) => `${c.slice(0, 3)}${c[3] === 'A' ? 'B' : 'A'}${c.slice(4)}`],
    ['cut short', (c: string) => c.slice(0, -2)],
    ['not base64', () => 'x!y.z'],
    ['no digest', (c: string) => c.split('.')[0]!],
  ])('a cursor %s is 400 in the standard error body', async (_, tamper) => {
    const cursor = cursorOf(await firstPage('/users?sort=last_name:desc&after=&size=2'));
    const res = await api.get(`/users?sort=last_name:desc&after=${encodeURIComponent(tamper(cursor))}&size=2`);
    expect(res.statusCode).toBe(400);
    const body = errorBody(res);
    expect(body.code).toBe('BAD_REQUEST');
    expect(body.details).toEqual([{ field: 'after', invalid: expect.stringContaining('Not a cursor this list gave') }]);
  });

  it('a cursor of another sort or another list is 400; other styles with after are 400', async () => {
    const cursor = cursorOf(await firstPage('/users?sort=last_name:desc&after=&size=2'));
    expect((await api.get(`/users?sort=last_name:asc&after=${cursor}&size=2`)).statusCode).toBe(400);
    await createArtist(api, 'A');
    await createArtist(api, 'B');
    const artistsCursor = cursorOf(await firstPage('/artists?after=&size=1'));
    expect((await api.get(`/users?after=${artistsCursor}&size=1`)).statusCode).toBe(400);
    const mixed = await api.get(`/users?after=&page=2`);
    expect(mixed.statusCode).toBe(400);
    expect(errorBody(mixed).details).toEqual([
      { field: 'page', invalid: 'Cannot be combined with after; use one style: page+size, offset+limit, page+pagesize or after+size.' },
    ]);
  });

  it('keeps the filters and sort in Link, and the last page has no next', async () => {
    const res = await api.get('/users?lives_in=peru&older_than=65&sort=age:desc&size=100&after=');
    expect(res.statusCode).toBe(200);
    expect(links(res.headers.link)).toEqual({ first: '/users?lives_in=peru&older_than=65&sort=age:desc&after=&size=100' });
    const small = await api.get('/users?status=active&sort=age:desc&size=1&after=');
    expect(links(small.headers.link).next).toMatch(/^\/users\?status=active&sort=age:desc&after=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+&size=1$/);
  });
});
