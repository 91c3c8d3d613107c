import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { backend } from '../database.js';
import { buildTestApp, client, type Client, type TestContext } from '../helpers.js';
import { byCodePoint, byName, links, sameFold, startsWith } from './fixtures.js';
import { listPage, listQuery, setListHeaders, type CollectionDef, type FilterDef } from '../../src/query/index.js';
import { usersCollection } from '../../src/modules/users/users.collection.js';
import { usersListSource } from '../../src/modules/users/users.repository.js';
import { prefixSummaryCovers, summaryCovers } from '../../src/query/summary.js';

// One meaning per filter, whichever way a list is answered. A users list can be answered from the
// summaries held in memory (users_counts, users_name_counts: totals, the values of a sort key) and
// the page strategies they allow, or through the index path alone (the page read by SQL, the total
// counted). Both must give the same page and total for every filter: every filter the users declare,
// and filters a developer could add the way docs/architecture.md says (one entry in `filters`), on
// columns the summaries hold folded or as they are, with other foldings and operators than theirs.
// Each way is a route over the same users (fixtures added to the app): `summary` lists through the
// users' own source with the extended collection, `plain` through the table alone; and /users itself
// for the declared filters. An in-memory oracle, written from each filter's declaration, checks all.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Filters the users do not declare, of kinds a developer could add: each either answered by the summaries or sent to the index path. */
const EXTRA: Record<string, FilterDef> = {
  // The summary holds the country's fold and key, not the country as stored: an exact comparison of
  // the stored column cannot be answered from it (nor `<` on text, the database's collation).
  country: { column: 'country', op: 'eq', type: 'string', description: 'Exact country (the column as stored).' },
  countries: { column: 'country', op: 'eq', type: 'string', list: true, description: 'Exact countries.' },
  country_after: { column: 'country', op: 'gt', type: 'string', description: 'Country after the value.' },
  // Through the country's key: answered by the summary, which holds the key.
  country_exact: { column: 'country', op: 'eq', type: 'string', text: 'exact', description: 'Exact country, through its key.' },
  country_starts_with: { column: 'country', op: 'prefix', type: 'string', description: 'Country starts with.' },
  // The summary holds age as it is.
  age: { column: 'age', op: 'eq', type: 'integer', description: 'Exact age.' },
  ages: { column: 'age', op: 'eq', type: 'integer', list: true, description: 'Exact ages.' },
  // Same field, operator and number of values as last_name (which compares through the key): another statement.
  last_name_stored: { column: 'last_name', op: 'eq', type: 'string', description: 'Exact last name, the column as stored.' },
  first_names: { column: 'first_name', op: 'eq', type: 'string', text: 'exact', list: true, description: 'Exact first names, through their keys.' },
};
const EXTENDED: CollectionDef = { ...usersCollection, name: 'users', filters: { ...usersCollection.filters, ...EXTRA } };
const FILTERS: Record<string, FilterDef> = EXTENDED.filters;

const FIRST = ['Ana', 'ana', 'ANA', 'Bruno', 'Émile', 'émile', 'Emile', 'Zoë', 'Zoe'];
const LAST = ['Silva', 'silva', 'Lima', 'Diaz', 'Díaz', 'Øster', 'Oster'];
const COUNTRIES = ['Brazil', 'brazil', 'BRAZIL', 'Chile', 'chile', 'Éire', 'éire', 'Eire', 'Peru', 'Perú', 'Japan'];

interface Row {
  id: number;
  first_name: string;
  last_name: string;
  email: string;
  age: number;
  status: string;
  country: string;
}

let ctx: TestContext;
let api: Client;
let users: Row[];

/** A list route over the users' rows: through `source(app)`, with the extended collection. */
function fixtureList(app: FastifyInstance, path: string, source: (app: FastifyInstance) => object) {
  app.get(path, { schema: { hide: true } }, async (request, reply: FastifyReply) => {
    const plan = listQuery(EXTENDED, request.url);
    const { rows, ...found } = await listPage(app.db, source(app) as never, plan);
    setListHeaders(reply, path, plan, found);
    return rows;
  });
}

beforeAll(async () => {
  ctx = await buildTestApp({}, (app) => {
    fixtureList(app, '/__meaning/summary', (a) => usersListSource(a.db));
    fixtureList(app, '/__meaning/plain', (a) => {
      const base = () => a.db.selectFrom('users');
      return {
        key: 'users-plain',
        table: 'users',
        values: {},
        base,
        rows: () => base().select(['id', 'first_name', 'last_name', 'email', 'age', 'status', 'country']),
      };
    });
  });
  api = client(ctx.app, ctx.tokens.admin);
  let seed = 31;
  const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
  const people = Array.from({ length: 90 }, (_, i) => ({
    first_name: FIRST[next(FIRST.length)]!,
    last_name: LAST[next(LAST.length)]!,
    email: `m${i}@example.com`,
    age: 18 + next(12),
    status: next(3) === 0 ? 'inactive' : 'active',
    country: COUNTRIES[next(COUNTRIES.length)]!,
  }));
  const res = await api.post('/users', people);
  expect(res.statusCode).toBe(201);
  users = res.json<Row[]>();
});
afterAll(() => ctx.close());

// The oracle: each filter's meaning from its declaration, in memory: a prefix and `text: 'fold'`
// ignore accents and case, other text is the exact text (NFC), names sort by their collation keys,
// other text by code point (fixtures.ts, src/db/collation.ts), as both backends are made to.
function oracleMatches(def: FilterDef, values: (string | number)[], row: Row): boolean {
  const v = row[def.column as keyof Row];
  if (def.op === 'prefix') return startsWith(String(v), String(values[0]));
  if (def.op === 'eq')
    return values.some((x) => (def.text === 'fold' ? sameFold(String(x), String(v)) : typeof x === 'string' ? x.normalize('NFC') === v : x === v));
  const order = typeof v === 'number' ? v - (values[0] as number) : byCodePoint(v, String(values[0]));
  return def.op === 'gt' ? order > 0 : order < 0;
}

function oracle(filters: Record<string, (string | number)[]>, sort: { field: string; dir: 'asc' | 'desc' }[]): Row[] {
  const rows = users.filter((u) => Object.entries(filters).every(([name, values]) => oracleMatches(FILTERS[name]!, values, u)));
  const key = (u: Row, field: string) => u[field as keyof Row];
  return rows.sort((a, b) => {
    for (const s of sort) {
      const x = key(a, s.field);
      const y = key(b, s.field);
      const order = typeof x === 'number' ? x - (y as number) : EXTENDED.sortable[s.field]!.key ? byName(x, String(y)) : byCodePoint(x, String(y));
      if (order !== 0) return order * (s.dir === 'desc' ? -1 : 1);
    }
    return a.id - b.id;
  });
}

/** On PostgreSQL `>` and `<` on text follow the database's collation (not folded, not by code point): the oracle does not speak for them there. */
const oracleSpeaksFor = (filters: Record<string, unknown>) =>
  backend === 'sqlite' || Object.keys(filters).every((name) => !(FILTERS[name]!.type === 'string' && ['gt', 'lt'].includes(FILTERS[name]!.op)));

const queryOf = (filters: Record<string, (string | number)[]>) =>
  Object.entries(filters).map(([name, values]) => {
    const text = FILTERS[name]!.list && values.length > 1 ? `[${values.join(',')}]` : String(values[0]);
    return `${name}=${encodeURIComponent(text)}`;
  });

/** The same request on each way: status, body, X-Total-Count and Link (with the path) must agree, and agree with the oracle. */
async function compare(params: string[], expected?: { rows: Row[]; offset: number; limit: number }) {
  const query = params.join('&');
  const answers = await Promise.all(['/__meaning/summary', '/__meaning/plain'].map((path) => api.get(`${path}?${query}`)));
  const [summary, plain] = answers.map((res) => ({
    status: res.statusCode,
    body: res.json<Json>(),
    total: res.headers['x-total-count'],
    link: Object.fromEntries(Object.entries(links(res.headers.link)).map(([rel, url]) => [rel, url.replace(/^\/__meaning\/\w+/, '')])),
  }));
  expect({ query, ...summary }).toEqual({ query, ...plain });
  if (expected) {
    expect([query, summary!.status]).toEqual([query, 200]);
    expect([query, (summary!.body as Row[]).map((u) => u.id)]).toEqual([
      query,
      expected.rows.slice(expected.offset, expected.offset + expected.limit).map((u) => u.id),
    ]);
    expect([query, summary!.total]).toEqual([query, String(expected.rows.length)]);
  }
  return summary!;
}

describe('a filter added the way the docs say, on a column a summary holds folded', () => {
  it('an exact country filter lists exactly the users of that spelling, with their total', async () => {
    const brazil = users.filter((u) => u.country === 'Brazil');
    expect(brazil.length).toBeGreaterThan(3);
    const res = await api.get('/__meaning/summary?country=Brazil&size=100');
    expect(res.statusCode).toBe(200);
    expect(res.json<Row[]>().map((u) => u.id)).toEqual(brazil.map((u) => u.id));
    expect(res.headers['x-total-count']).toBe(String(brazil.length));
    // Sorted by a key the summary counts by, and deep: the ways that read it.
    for (const q of ['country=Brazil&sort=age:desc&page=2&size=2', 'country=brazil&status=active&sort=country,age&page=3&size=3']) {
      const [filter] = q.split('&');
      const value = decodeURIComponent(filter!.split('=')[1]!);
      const params = new URLSearchParams(q);
      const sort = (params.get('sort') ?? '').split(',').map((s) => ({ field: s.split(':')[0]!, dir: (s.split(':')[1] ?? 'asc') as 'asc' | 'desc' }));
      const all = oracle({ country: [value], ...(params.get('status') ? { status: [params.get('status')!] } : {}) }, sort);
      const size = Number(params.get('size'));
      await compare([q], { rows: all, offset: (Number(params.get('page')) - 1) * size, limit: size });
    }
  });

  it('filters that differ only in what they compare (the text, its key, its fold) are different statements', async () => {
    // Each list shape's SQL is compiled once and kept: two filters read as one shape would run each other's SQL.
    for (const path of ['/__meaning/plain', '/__meaning/summary']) {
      for (const [name, value] of [
        ['lives_in', 'BRAZIL'],
        ['country', 'BRAZIL'],
        ['country_exact', 'BRAZIL'],
        ['countries', 'brazil'],
        ['lives_in', 'éire'],
        ['country_exact', 'E\u0301ire'],
        ['last_name', 'Silva'],
        ['last_name_stored', 'Silva'],
        ['first_names', 'ana'],
        ['first_name', 'ana'],
      ] as const) {
        const all = oracle({ [name]: [value] }, []);
        const res = await api.get(`${path}?${name}=${value}&size=100`);
        expect([path, name, value, res.statusCode]).toEqual([path, name, value, 200]);
        expect([path, name, value, res.json<Row[]>().map((u) => u.id)]).toEqual([path, name, value, all.map((u) => u.id)]);
        expect(res.headers['x-total-count']).toBe(String(all.length));
      }
    }
  });
});

// Values a filter may be given: the rows' own, in other cases, decomposed, without their accents, and some no row has.
const textValues = (column: 'first_name' | 'last_name' | 'country' | 'status') => {
  const seen = [...new Set(users.map((u) => u[column]))];
  const bare = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '');
  return [
    ...seen,
    ...seen.map((s) => s.toUpperCase()),
    ...seen.map((s) => s.toLowerCase()),
    ...seen.map((s) => s.normalize('NFD')),
    ...seen.map(bare),
    'Mars',
    'b',
    'É',
    'e\u0301',
  ];
};

const valueArb = (def: FilterDef): fc.Arbitrary<string | number> => {
  if (def.type === 'integer') return fc.integer({ min: 15, max: 32 });
  if (def.values) return fc.constantFrom(...def.values);
  const column = def.column as 'first_name' | 'last_name' | 'country' | 'status';
  const whole = fc.constantFrom(...textValues(column));
  // A prefix: the start of a value (one to three characters).
  return def.op === 'prefix' ? fc.tuple(whole, fc.integer({ min: 1, max: 3 })).map(([v, n]) => [...v].slice(0, n).join('')) : whole;
};

const filtersArb = fc
  .uniqueArray(fc.constantFrom(...Object.keys(FILTERS).filter((n) => FILTERS[n]!.op !== 'match')), { minLength: 1, maxLength: 3 })
  .chain((names) =>
    fc.tuple(
      ...names.map((name) => {
        const def = FILTERS[name]!;
        const values = def.list ? fc.uniqueArray(valueArb(def), { minLength: 1, maxLength: 3 }) : valueArb(def).map((v) => [v]);
        return values.map((v) => [name, v] as const);
      }),
    ),
  )
  .map((pairs) => Object.fromEntries(pairs) as Record<string, (string | number)[]>);
const sortArb = fc.uniqueArray(
  fc.record({ field: fc.constantFrom(...Object.keys(usersCollection.sortable)), dir: fc.constantFrom('asc' as const, 'desc' as const) }),
  { maxLength: 2, selector: (k) => k.field },
);
const pageArb = fc.record({ style: fc.constantFrom('page', 'offset'), n: fc.integer({ min: 0, max: 12 }), size: fc.integer({ min: 1, max: 6 }) });

describe('every filter, declared or added, answered by the summaries and through the index path alike (property)', () => {
  it('gives the same page, total and links both ways, and the oracle’s', async () => {
    // Which way the summary route took: summed (the summary declares it answers every filter) or the index path.
    const ways = { summed: 0, indexPath: 0 };
    const { summary, prefixSummary } = usersListSource(ctx.app.db);
    await fc.assert(
      fc.asyncProperty(filtersArb, sortArb, pageArb, async (filters, sort, page) => {
        const params = [...queryOf(filters)];
        if (sort.length > 0) params.push(`sort=${sort.map((s) => `${s.field}:${s.dir}`).join(',')}`);
        const offset = page.style === 'page' ? page.n * page.size : page.n * 2;
        params.push(page.style === 'page' ? `page=${page.n + 1}&size=${page.size}` : `offset=${offset}&limit=${page.size}`);
        await compare(params, oracleSpeaksFor(filters) ? { rows: oracle(filters, sort), offset, limit: page.size } : undefined);
        const plan = listQuery(EXTENDED, `/?${params.join('&')}`);
        ways[summaryCovers(summary, plan.filters) || prefixSummaryCovers(prefixSummary, plan.filters) ? 'summed' : 'indexPath']++;
      }),
      { numRuns: 300, seed: 20261131 },
    );
    expect(ways.summed).toBeGreaterThan(60);
    expect(ways.indexPath).toBeGreaterThan(60);
  });

  it('GET /users (the declared filters) answers as the index path does', async () => {
    const declared = Object.keys(usersCollection.filters);
    await fc.assert(
      fc.asyncProperty(filtersArb, sortArb, async (all, sort) => {
        const filters = Object.fromEntries(Object.entries(all).filter(([name]) => declared.includes(name)));
        const params = [...queryOf(filters), ...(sort.length ? [`sort=${sort.map((s) => `${s.field}:${s.dir}`).join(',')}`] : []), 'page=2&size=4'];
        const users = await api.get(`/users?${params.join('&')}`);
        const plain = await api.get(`/__meaning/plain?${params.join('&')}`);
        expect([params, users.statusCode, users.json(), users.headers['x-total-count']]).toEqual([
          params,
          plain.statusCode,
          plain.json(),
          plain.headers['x-total-count'],
        ]);
      }),
      { numRuns: 100, seed: 20261132 },
    );
  });
});
