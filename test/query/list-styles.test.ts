import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createArtist, errorBody, type Client, type TestContext } from '../helpers.js';
import { links } from './fixtures.js';

// /search, /tokens and /aliases take the pagination styles of every list: page+size, offset+limit,
// page+pagesize and after+size, with X-Total-Count and Link.

let ctx: TestContext;
let admin: Client;

beforeAll(async () => {
  ctx = await buildTestApp();
  admin = client(ctx.app, ctx.tokens.admin);
  const writer = client(ctx.app, ctx.tokens.write);
  for (let i = 1; i <= 7; i++) await createArtist(writer, `Styles Band ${i}`);
  await createArtist(writer, 'Styles');
  for (let i = 1; i <= 4; i++) expect((await admin.post('/tokens', { scopes: ['read'], name: `t${i}` })).statusCode).toBe(201);
  for (const name of ['zeta', 'alpha', 'mid']) expect((await admin.put(`/aliases/users/${name}`, { query: 'status=active' })).statusCode).toBe(201);
});
afterAll(() => ctx.close());

/** Every item of a list, by following Link next from `first`. */
async function walk(first: string): Promise<unknown[]> {
  const out: unknown[] = [];
  let url: string | undefined = first;
  while (url) {
    const res = await admin.get(url);
    expect(res.statusCode, res.body).toBe(200);
    out.push(...res.json<unknown[]>());
    url = links(res.headers.link).next;
    if (out.length > 1000) throw new Error('the walk does not end');
  }
  return out;
}

describe.each([
  ['/search', 'q=styles'],
  ['/tokens', ''],
  ['/aliases', ''],
])('GET %s', (path, query) => {
  const url = (page: string) => `${path}?${[query, page].filter(Boolean).join('&')}`;

  it('gives the same list in every pagination style, with the exact total', async () => {
    const all = (await admin.get(url('size=100'))).json<unknown[]>();
    expect(all.length).toBeGreaterThan(3);
    const total = String(all.length);
    for (const first of ['page=1&size=2', 'offset=0&limit=3', 'page=1&pagesize=2', 'after=&size=2', 'size=3&after=']) {
      expect(await walk(url(first)), first).toEqual(all);
    }
    const res = await admin.get(url('offset=1&limit=2'));
    expect(res.json()).toEqual(all.slice(1, 3));
    expect(res.headers['x-total-count']).toBe(total);
    const cursorPage = await admin.get(url('after=&size=2'));
    expect(cursorPage.headers['x-total-count']).toBe(total);
    expect(Object.keys(links(cursorPage.headers.link))).toEqual(['first', 'next']);
  });

  it('rejects two styles at once and a tampered cursor', async () => {
    const mixed = await admin.get(url('page=1&limit=2'));
    expect(mixed.statusCode).toBe(400);
    expect(errorBody(mixed).details).toEqual([
      { field: 'limit', invalid: 'Cannot be combined with page; use one style: page+size, offset+limit, page+pagesize or after+size.' },
    ]);
    const next = links((await admin.get(url('after=&size=1'))).headers.link).next!;
    const bad = await admin.get(next.replace(/after=([A-Za-z0-9_-])/, (_, c: string) => `after=${c === 'A' ? 'B' : 'A'}`));
    expect(bad.statusCode).toBe(400);
    expect(errorBody(bad).details).toEqual([{ field: 'after', invalid: expect.stringContaining('Not a cursor') }]);
  });
});

it('GET /aliases keeps its order by collection and name by default', async () => {
  const names = (await admin.get('/aliases')).json<{ name: string }[]>().map((a) => a.name);
  expect(names).toEqual([...names].sort());
  expect(names).toEqual(expect.arrayContaining(['alpha', 'mid', 'zeta']));
});

it('a search cursor belongs to its q', async () => {
  const next = links((await admin.get('/search?q=styles&after=&size=1')).headers.link).next!;
  const res = await admin.get(next.replace('q=styles', 'q=band'));
  expect(res.statusCode).toBe(400);
});
