import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, client, type TestContext } from '../helpers.js';
import { documentChecker } from '../openapi-check.js';

// The served OpenAPI document against the service's behaviour, both ways:
// - every answer below is checked against the document (status documented for the operation, the
//   headers a client reads documented on that response, the body matching its schema);
// - every documented query parameter of every list is sent with a value its schema allows (accepted)
//   and with one its schema forbids (400 naming it), so a rule the engine enforces cannot be missing
//   from the document, nor a documented one be missing from the engine.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let ctx: TestContext;
let doc: Json;
let problems: ReturnType<typeof documentChecker>;
const ids = { artist: 0, album: 0, song: 0, user: 0 };

beforeAll(async () => {
  // Rate limiting on (high enough never to refuse here), so RateLimit-* headers are sent and checked.
  ctx = await buildTestApp({ rateLimitPerMinute: 100_000 });
  doc = (await client(ctx.app).get('/openapi.json')).json<Json>();
  problems = documentChecker(doc);
  const api = client(ctx.app, ctx.tokens.admin);
  ids.artist = (await api.post('/artists', { name: 'OK Artist', image: 'https://a.example/a.jpg' })).json().id;
  ids.album = (await api.post(`/artists/${ids.artist}/albums`, { name: 'OK Computer', year: 1997, image: 'https://a.example/b.jpg' })).json().id;
  ids.song = (await api.post(`/artists/${ids.artist}/albums/${ids.album}/songs`, { name: 'Airbag', time: '04:44' })).json().id;
  ids.user = (
    await api.post('/users', { first_name: 'Ana', last_name: 'Lima', email: 'ana@example.com', age: 25, status: 'active', country: 'Brazil' })
  ).json().id;
});
afterAll(() => ctx.close());

type Token = keyof TestContext['tokens'] | null;
interface Call {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  template: string;
  url: string;
  token?: Token;
  body?: unknown;
  headers?: Record<string, string>;
}

async function call(c: Call): Promise<LightMyRequestResponse> {
  const token = c.token === undefined ? 'admin' : c.token;
  const res = await client(ctx.app, token ? ctx.tokens[token] : undefined).send(c.method, c.url, c.body, c.headers);
  expect(problems(c.method, c.template, res)).toEqual([]);
  return res;
}

describe('answers of the service match the OpenAPI document', () => {
  it('catalogue: create, read, conditional requests, edit and delete', async () => {
    const A = '/artists/{artist_id}';
    const AL = '/artists/{artist_id}/albums/{album_id}';
    const S = '/artists/{artist_id}/albums/{album_id}/songs/{song_id}';
    const a = `/artists/${ids.artist}`;
    const al = `${a}/albums/${ids.album}`;
    const s = `${al}/songs/${ids.song}`;
    expect(
      (await call({ method: 'POST', template: '/artists', url: '/artists', token: 'write', body: { name: 'Portishead', image: 'https://a.example/p.jpg' } }))
        .statusCode,
    ).toBe(201);
    expect((await call({ method: 'POST', template: '/artists', url: '/artists', token: 'write', body: { name: 'No image' } })).statusCode).toBe(400);
    expect((await call({ method: 'POST', template: '/artists', url: '/artists', token: null, body: {} })).statusCode).toBe(401);
    expect((await call({ method: 'POST', template: '/artists', url: '/artists', token: 'read', body: {} })).statusCode).toBe(403);
    const keyed = {
      method: 'POST',
      template: '/artists',
      url: '/artists',
      token: 'write',
      body: { name: 'Keyed', image: 'https://a.example/k.jpg' },
      headers: { 'idempotency-key': 'doc-check-1' },
    } as const;
    await call(keyed);
    expect((await call(keyed)).headers['idempotent-replayed']).toBe('true');
    const list = await call({ method: 'GET', template: '/artists', url: '/artists?sort=name&size=2', token: 'read' });
    expect(list.statusCode).toBe(200);
    const notModified = await call({
      method: 'GET',
      template: '/artists',
      url: '/artists?sort=name&size=2',
      token: 'read',
      headers: { 'if-none-match': String(list.headers.etag) },
    });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.headers['x-total-count']).toBe('3');
    expect((await call({ method: 'HEAD', template: '/artists', url: '/artists', token: 'read' })).statusCode).toBe(200);
    const one = await call({ method: 'GET', template: A, url: a, token: 'read' });
    expect((await call({ method: 'GET', template: A, url: a, token: 'read', headers: { 'if-none-match': String(one.headers.etag) } })).statusCode).toBe(304);
    expect((await call({ method: 'GET', template: A, url: '/artists/424242', token: 'read' })).statusCode).toBe(404);
    expect((await call({ method: 'GET', template: A, url: `${a}?x=1`, token: 'read' })).statusCode).toBe(400);
    expect((await call({ method: 'PATCH', template: A, url: a, token: 'write', body: { name: 'OK Artist!' } })).statusCode).toBe(200);
    expect(
      (await call({ method: 'PATCH', template: A, url: a, token: 'write', body: { name: 'Lost' }, headers: { 'if-match': String(one.headers.etag) } }))
        .statusCode,
    ).toBe(412);
    for (const [template, url] of [
      ['/artists/{artist_id}/albums', `${a}/albums`],
      [AL, al],
      ['/artists/{artist_id}/albums/{album_id}/songs', `${al}/songs`],
      [S, s],
    ]) {
      expect((await call({ method: 'GET', template: template!, url: url!, token: 'read' })).statusCode).toBe(200);
      expect((await call({ method: 'HEAD', template: template!, url: url!, token: 'read' })).statusCode).toBe(200);
    }
    expect((await call({ method: 'PATCH', template: S, url: s, token: 'write', body: { time: '05:00' } })).statusCode).toBe(200);
    expect((await call({ method: 'DELETE', template: S, url: s, token: 'write' })).statusCode).toBe(204);
    expect((await call({ method: 'DELETE', template: AL, url: al, token: 'write', headers: { 'if-match': '"album-1-v999"' } })).statusCode).toBe(412);
  });

  it('users, aliases and search', async () => {
    const u = `/users/${ids.user}`;
    expect((await call({ method: 'GET', template: '/users', url: '/users?status=active&sort_by=age&order=desc' })).statusCode).toBe(200);
    expect((await call({ method: 'GET', template: '/users', url: '/users', token: 'write' })).statusCode).toBe(403);
    expect((await call({ method: 'GET', template: '/users/{id}', url: u })).statusCode).toBe(200);
    expect((await call({ method: 'GET', template: '/users/{id}', url: '/users/young-brazilians?size=5' })).statusCode).toBe(200);
    expect((await call({ method: 'GET', template: '/users/{id}', url: `${u}?size=5` })).statusCode).toBe(400);
    expect((await call({ method: 'PATCH', template: '/users/{id}', url: u, body: { age: 26 } })).statusCode).toBe(200);
    const N = '/aliases/{collection}/{name}';
    expect((await call({ method: 'PUT', template: N, url: '/aliases/users/adults', body: { query: 'older_than=17' } })).statusCode).toBe(201);
    expect((await call({ method: 'PUT', template: N, url: '/aliases/users/adults', body: { query: 'older_than=18' } })).statusCode).toBe(200);
    expect((await call({ method: 'GET', template: '/aliases', url: '/aliases', token: 'read' })).statusCode).toBe(200);
    expect((await call({ method: 'DELETE', template: N, url: '/aliases/users/adults', headers: { 'if-match': '"any-tag"' } })).statusCode).toBe(412);
    expect((await call({ method: 'DELETE', template: N, url: '/aliases/users/adults', headers: { 'if-match': '*' } })).statusCode).toBe(204);
    expect((await call({ method: 'DELETE', template: N, url: '/aliases/users/adults', headers: { 'if-match': '*' } })).statusCode).toBe(404);
    expect((await call({ method: 'GET', template: '/search', url: '/search?q=ok', token: 'read' })).statusCode).toBe(200);
    expect((await call({ method: 'GET', template: '/search', url: '/search?q=%2A%2A', token: 'read' })).statusCode).toBe(400);
    expect((await call({ method: 'DELETE', template: '/users/{id}', url: u })).statusCode).toBe(204);
  });

  it('tokens, metrics, health: the Location of a new token can be fetched; If-Match on a resource without ETags', async () => {
    const created = await call({ method: 'POST', template: '/tokens', url: '/tokens', body: { scopes: ['read'], name: 'doc check' } });
    expect(created.statusCode).toBe(201);
    const location = String(created.headers.location);
    const fetched = await call({ method: 'GET', template: '/tokens/{token_id}', url: location });
    expect(fetched.statusCode).toBe(200);
    expect(fetched.json()).toEqual({ id: created.json().id, name: 'doc check', scopes: ['read'], created_at: expect.any(String), expires_at: null });
    expect(fetched.body).not.toContain(created.json().token);
    expect(
      (await call({ method: 'DELETE', template: '/tokens/{token_id}', url: location, headers: { 'if-match': String(fetched.headers.etag) } })).statusCode,
    ).toBe(412);
    expect((await call({ method: 'GET', template: '/tokens/{token_id}', url: location })).statusCode).toBe(200); // not revoked
    expect((await call({ method: 'DELETE', template: '/tokens/{token_id}', url: location })).statusCode).toBe(204);
    expect((await call({ method: 'GET', template: '/tokens/{token_id}', url: location })).statusCode).toBe(404);
    expect((await call({ method: 'GET', template: '/tokens', url: '/tokens' })).statusCode).toBe(200);
    expect((await call({ method: 'GET', template: '/tokens', url: '/tokens?all=1' })).statusCode).toBe(400);
    expect((await call({ method: 'GET', template: '/metrics', url: '/metrics?format=json' })).statusCode).toBe(400);
    expect((await call({ method: 'GET', template: '/metrics', url: '/metrics' })).statusCode).toBe(200);
    expect((await call({ method: 'GET', template: '/health', url: '/health', token: null })).statusCode).toBe(200);
    expect((await call({ method: 'HEAD', template: '/ready', url: '/ready', token: null })).statusCode).toBe(200);
  });
});

/** A value the parameter's schema allows, and one it forbids (undefined: the schema forbids nothing we can write). */
function valuesFor(param: Json): { good: string; bad?: string } {
  const s = param.schema as Json;
  if (s.type === 'integer') {
    const good = String(s.minimum ?? 1);
    if (s.maximum !== undefined) return { good, bad: String(s.maximum + 1) };
    return { good, bad: s.minimum !== undefined ? String(s.minimum - 1) : 'x' };
  }
  if (s.enum) return { good: String(s.enum[0]), bad: 'not-one-of-them' };
  if (String(param.description).includes('A list `[a,b]`')) return { good: '[a,b]', bad: '[a,b' };
  // A pattern that is a choice of names (fields=) and has no example: its first name.
  const firstChoice = s.pattern ? /\((\w+)\|/.exec(s.pattern)?.[1] : undefined;
  if (s.pattern) return { good: String(param.example ?? s.examples?.[0] ?? firstChoice ?? 'a'), bad: '*' };
  if (s.maxLength !== undefined) return { good: 'a', bad: 'a'.repeat(s.maxLength + 1) };
  return { good: 'a' };
}

const LISTS: Record<string, () => string> = {
  '/artists': () => '/artists',
  '/artists/{artist_id}/albums': () => `/artists/${ids.artist}/albums`,
  '/artists/{artist_id}/albums/{album_id}/songs': () => `/artists/${ids.artist}/albums/${ids.album}/songs`,
  '/users': () => '/users',
  '/users/{id}': () => '/users/young-brazilians',
  '/search': () => '/search',
};

describe('documented query parameters against what the service accepts', () => {
  it.each(Object.keys(LISTS))('GET %s: each parameter takes what its schema allows and is 400 for what it forbids', async (template) => {
    const params = (doc.paths[template].get.parameters as Json[]).filter((p) => p.in === 'query');
    expect(params.length).toBeGreaterThan(0);
    const required = params.filter((p) => p.required).map((p) => `${p.name}=${encodeURIComponent(valuesFor(p).good)}`);
    let checked = 0;
    for (const param of params) {
      const { good, bad } = valuesFor(param);
      // `order` is documented as needing sort_by.
      const extra = [...required.filter((r) => !r.startsWith(`${param.name}=`)), ...(param.name === 'order' ? ['sort_by=id'] : [])];
      const url = (value: string) => `${LISTS[template]!()}?${[...extra, `${param.name}=${encodeURIComponent(value)}`].join('&')}`;
      const ok = await call({ method: 'GET', template, url: url(good) });
      expect([param.name, good, ok.statusCode]).toEqual([param.name, good, 200]);
      if (bad === undefined) continue;
      const refused = await call({ method: 'GET', template, url: url(bad) });
      expect([param.name, bad, refused.statusCode]).toEqual([param.name, bad, 400]);
      expect((refused.json().details as { field: string }[]).map((d) => d.field)).toContain(param.name);
      checked += 1;
    }
    expect(checked).toBeGreaterThan(2);
  });

  it('every GET of the API refuses a parameter its operation does not document', async () => {
    const templates = Object.entries(doc.paths as Record<string, Json>)
      .filter(([, item]) => item.get?.security?.length)
      .map(([t]) => t);
    expect(templates.length).toBeGreaterThan(10);
    for (const template of templates) {
      const url = template
        .replace('{artist_id}', String(ids.artist))
        .replace('{album_id}', String(ids.album))
        .replace('{song_id}', '1')
        .replace('{token_id}', '1')
        .replace('{webhook_id}', '1')
        .replace('{id}', 'young-brazilians');
      const query = template === '/search' ? '?q=ok&undocumented=1' : '?undocumented=1';
      const res = await client(ctx.app, ctx.tokens.admin).get(url + query);
      expect([template, res.statusCode]).toEqual([template, 400]);
      expect(res.json().details).toContainEqual({ field: 'undocumented', unknown: 'Unknown query parameter.' });
      expect(problems('GET', template, res)).toEqual([]);
    }
  });
});
