import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, errorBody, type Client, type TestContext } from '../helpers.js';
import { ids, links, seedUsers, type SeedUser } from '../query/fixtures.js';

let ctx: TestContext;
let api: Client;
let users: SeedUser[];

const youngBrazilian = (u: SeedUser) => u.status === 'active' && u.country.toLowerCase() === 'brazil' && u.age > 18 && u.age < 35;

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.admin);
  users = await seedUsers(api);
});
afterAll(() => ctx.close());

describe('GET /users/{alias}', () => {
  it('young-brazilians ships by default and returns what its filters return', async () => {
    const res = await api.get('/users/young-brazilians');
    expect(res.statusCode).toBe(200);
    const expected = users.filter(youngBrazilian).map((u) => u.id);
    expect(expected.length).toBeGreaterThan(1);
    expect(ids(res.json())).toEqual(expected);
    const same = await api.get('/users?status=active&lives_in=brazil&older_than=18&younger_than=35');
    expect(res.json()).toEqual(same.json());
    expect(res.headers['x-total-count']).toBe(String(expected.length));
  });

  it('adds extra filters to its own, and applies sort and paging, with Link on the alias path', async () => {
    const res = await api.get('/users/young-brazilians?first_name=Ana&sort=age:desc&page=1&size=1');
    const expected = users.filter((u) => youngBrazilian(u) && u.first_name === 'Ana').sort((a, b) => b.age - a.age);
    expect(ids(res.json())).toEqual(expected.slice(0, 1).map((u) => u.id));
    expect(res.headers['x-total-count']).toBe(String(expected.length));
    expect(links(res.headers.link).first).toBe('/users/young-brazilians?first_name=Ana&sort=age:desc&page=1&size=1');
  });

  it('an extra filter narrows, never widens (filters combine with AND)', async () => {
    const res = await api.get('/users/young-brazilians?lives_in=chile');
    expect(res.json()).toEqual([]);
    expect(res.headers['x-total-count']).toBe('0');
  });

  it('pages through the alias with offset+limit', async () => {
    const all = users.filter(youngBrazilian).sort((a, b) => b.age - a.age || a.id - b.id);
    const res = await api.get('/users/young-brazilians?sort_by=age&order=desc&offset=1&limit=1');
    expect(ids(res.json())).toEqual([all[1]!.id]);
    expect(links(res.headers.link).prev).toBe('/users/young-brazilians?sort_by=age&order=desc&offset=0&limit=1');
  });

  it('answers 404 "Alias not found." for an unknown alias', async () => {
    const res = await api.get('/users/old-martians');
    expect(res.statusCode).toBe(404);
    expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Alias not found.' });
  });

  it('rejects bad query parameters on an alias path', async () => {
    const res = await api.get('/users/young-brazilians?size=0&bogus=1');
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([
      { field: 'bogus', unknown: 'Unknown query parameter.' },
      { field: 'size', minimum: 'Must be at least 1.' },
    ]);
  });
});

describe('GET /aliases', () => {
  it('lists [{name, collection, query}] to an admin token', async () => {
    const res = await api.get('/aliases');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toContainEqual({
      name: 'young-brazilians',
      collection: 'users',
      query: 'status=active&lives_in=brazil&older_than=18&younger_than=35',
    });
  });

  it('shows alias definitions to exactly the tokens that see alias events: admin (a users filter is personal data)', async () => {
    let head = 0;
    for (let page = [{ sequence: 0 }]; page.length; page = (await api.get(`/events?after=${head}&size=1000`)).json<{ sequence: number }[]>()) {
      head = page.at(-1)!.sequence;
    }
    expect((await api.put('/aliases/users/scope-check', { query: 'status=active&lives_in=chile' })).statusCode).toBe(201);
    for (const [scope, token] of Object.entries(ctx.tokens)) {
      const reader = client(ctx.app, token);
      const events = await reader.get(`/events?after=${head}`);
      expect(events.statusCode).toBe(200);
      const seesEvent = events.json<{ type: string }[]>().some((e) => e.type === 'alias.created');
      for (const url of ['/aliases', '/aliases?collection=users&size=100']) {
        const listed = await reader.get(url);
        expect(listed.statusCode, `${scope} ${url}`).toBe(200);
        const seesDefinition = listed.json<{ name: string }[]>().some((a) => a.name === 'scope-check');
        expect(seesDefinition, `${scope} ${url}`).toBe(seesEvent);
        expect(seesDefinition, `${scope} ${url}`).toBe(scope === 'admin');
        if (!seesDefinition) {
          expect(listed.json()).toEqual([]);
          expect(listed.headers['x-total-count']).toBe('0');
        }
      }
      // Asking for alias events outright is refused where the definitions are left out.
      expect((await reader.get('/events?types=alias.created')).statusCode, scope).toBe(seesEvent ? 200 : 403);
    }
  });

  it('needs a token', async () => {
    expect((await client(ctx.app).get('/aliases')).statusCode).toBe(401);
  });
});

describe('PUT /aliases/{collection}/{name}', () => {
  it('creates (201) then replaces (200) an alias that GET /users/{alias} then serves', async () => {
    const created = await api.put('/aliases/users/south-americans', { query: 'lives_in=[argentina,chile]' });
    expect(created.statusCode).toBe(201);
    expect(created.headers.location).toBe('/users/south-americans');
    expect(created.json()).toEqual({ name: 'south-americans', collection: 'users', query: 'lives_in=[argentina,chile]' });
    const argentinaOrChile = (u: SeedUser) => ['argentina', 'chile'].includes(u.country.toLowerCase());
    expect(ids((await api.get('/users/south-americans')).json())).toEqual(users.filter(argentinaOrChile).map((u) => u.id));

    const replaced = await api.put('/aliases/users/south-americans', { query: 'lives_in=chile' });
    expect(replaced.statusCode).toBe(200);
    expect(ids((await api.get('/users/south-americans')).json())).toEqual(users.filter((u) => u.country === 'Chile').map((u) => u.id));
    expect((await api.get('/aliases')).json()).toContainEqual({ name: 'south-americans', collection: 'users', query: 'lives_in=chile' });
  });

  it('checks the query like a request and stores nothing when it fails', async () => {
    const res = await api.put('/aliases/users/broken-one', { query: 'status=gone&older_than=x&hair=red&sort=age:asc' });
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([
      { field: 'query.status', enum: 'Must be one of: active, inactive.' },
      { field: 'query.older_than', type: 'Must be integer.' },
      { field: 'query.hair', unknown: 'Unknown query parameter.' },
      { field: 'query.sort', invalid: 'An alias holds filters only; sort and page are given with each request.' },
    ]);
    expect((await api.get('/users/broken-one')).statusCode).toBe(404);
  });

  it.each([
    ['/aliases/users/Bad_Name', { field: 'name', pattern: 'Must be lower-case words (letters, digits) joined by hyphens, starting with a letter.' }],
    ['/aliases/artists/some-name', { field: 'collection', enum: 'Must be one of: users.' }],
  ])('rejects %s', async (path, detail) => {
    const res = await api.put(path, { query: 'status=active' });
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([detail]);
  });

  it('rejects an empty query and unknown body fields', async () => {
    const res = await api.put('/aliases/users/empty-one', { query: '', extra: 1 });
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual(
      expect.arrayContaining([
        { field: 'query', minLength: 'Must be at least 1 character.' },
        { field: 'extra', unknown: 'Unknown field.' },
      ]),
    );
  });

  it('needs the admin scope', async () => {
    const res = await client(ctx.app, ctx.tokens.write).put('/aliases/users/nope', { query: 'status=active' });
    expect(res.statusCode).toBe(403);
  });
});

describe('DELETE /aliases/{collection}/{name}', () => {
  it('deletes: 204, then the alias path is 404', async () => {
    await api.put('/aliases/users/the-old', { query: 'older_than=60' });
    expect((await api.get('/users/the-old')).statusCode).toBe(200);
    const res = await api.delete('/aliases/users/the-old');
    expect(res.statusCode).toBe(204);
    expect((await api.get('/users/the-old')).statusCode).toBe(404);
    const again = await api.delete('/aliases/users/the-old');
    expect(again.statusCode).toBe(404);
    expect(errorBody(again).message).toBe('Alias not found.');
  });

  it('needs the admin scope', async () => {
    expect((await client(ctx.app, ctx.tokens.read).delete('/aliases/users/young-brazilians')).statusCode).toBe(403);
  });
});
