import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, client, createAlbum, createArtist, createSong, errorBody, type Client, type TestContext } from '../helpers.js';

// Names a client sends are data, never property lookups: a query parameter's name, a `fields` item,
// a sort field, an embed, a path segment naming an alias and the filters of an alias definition are
// compared with what the route declares, and a name that happens to be a property of every JavaScript
// object (`constructor`, `__proto__`, `toString`...) is unknown like any other. The routes and their
// parameters are read from the OpenAPI document the app serves (generated from its route table), so a
// new GET route or parameter is attacked without being listed here.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Properties of Object.prototype (and one of functions), as written by an attacker. */
const HOSTILE = [
  'constructor',
  '__proto__',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__defineGetter__',
  '__lookupGetter__',
  'prototype',
];
/** A name nobody declares, without anything special about it: what a hostile name must be treated as. */
const PLAIN = 'zzplainname';

let ctx: TestContext;
let api: Client;
let doc: Json;
const values: Record<string, string> = {};

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.admin);
  doc = (await api.get('/openapi.json')).json<Json>();
  const artist = await createArtist(api, 'Hostile Band');
  const album = await createAlbum(api, artist.id, 'Hostile Album', 1999);
  const song = await createSong(api, artist.id, album.id, 'Hostile Song', '03:10');
  await api.post('/users', { first_name: 'Ana', last_name: 'Silva', email: 'ana@example.com', age: 30, status: 'active', country: 'Brazil' });
  const hook = await api.post('/webhooks', { url: 'https://hooks.example.com/x', types: ['album.created'], secret: 'a-long-random-shared-secret' });
  const token = (await api.get('/tokens')).json<{ id: number }[]>()[0]!;
  Object.assign(values, {
    artist_id: String(artist.id),
    album_id: String(album.id),
    song_id: String(song.id),
    token_id: String(token.id),
    webhook_id: String(hook.json<{ id: number }>().id),
    id: 'young-brazilians',
  });
});
afterAll(() => ctx.close());

interface Operation {
  template: string;
  /** The template with every path parameter filled in with an existing resource. */
  path: string;
  query: Json[];
  /** Required query parameters, with a value their schema allows. */
  required: string[];
  stream: boolean;
}

/** Every GET of the document: what the route table serves. */
function operations(): Operation[] {
  return Object.entries(doc.paths as Record<string, Json>)
    .filter(([, item]) => item.get)
    .map(([template, item]) => {
      const parameters = (item.get.parameters ?? []) as Json[];
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
        if (!(name in values)) throw new Error(`no value for path parameter ${name} of ${template}: add one above`);
        return values[name]!;
      });
      const query = parameters.filter((p) => p.in === 'query');
      const required = query.filter((p) => p.required).map((p) => `${p.name}=${encodeURIComponent(String(p.schema.minLength ? 'ok' : '1'))}`);
      const stream = Object.keys(item.get.responses?.['200']?.content ?? {}).includes('text/event-stream');
      return { template, path, query, required, stream };
    });
}

const url = (op: Operation, ...params: string[]) => `${op.path}?${[...op.required, ...params].join('&')}`;

/** The answer, where a 500 or anything but the standard error body fails with the URL. */
async function get(target: string): Promise<LightMyRequestResponse> {
  const res = await api.get(target);
  expect([target, res.statusCode < 500]).toEqual([target, true]);
  if (res.statusCode >= 400) errorBody(res);
  return res;
}

/** The error details of a 400, with the URL in the message of a failure. */
async function refused(target: string) {
  const res = await get(target);
  expect([target, res.statusCode]).toEqual([target, 400]);
  return errorBody(res).details ?? [];
}

/** `text` with the plain name standing for the hostile one (to compare two answers). */
const as = (text: string, name: string) => text.split(name).join(PLAIN);

describe('hostile names on every GET route', () => {
  it('the route table has the GETs this test attacks', () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(15);
    expect(ops.filter((op) => op.query.some((p) => p.name === 'fields')).length).toBeGreaterThan(10);
    expect(ops.filter((op) => op.query.some((p) => p.name === 'sort')).length).toBeGreaterThan(4);
    expect(ops.filter((op) => op.query.some((p) => p.name === 'embed')).length).toBe(2);
  });

  it.each(HOSTILE)('a query parameter named %s is unknown, exactly as any unknown name is', async (name) => {
    for (const op of operations()) {
      const hostile = await get(url(op, `${encodeURIComponent(name)}=1`));
      const plain = await get(url(op, `${PLAIN}=1`));
      expect([op.template, hostile.statusCode, as(hostile.body, name)]).toEqual([op.template, plain.statusCode, plain.body]);
      // A route that reads a query string refuses what it does not document.
      if (op.query.length > 0 || doc.paths[op.template].get.security?.length) {
        expect(await refused(url(op, `${encodeURIComponent(name)}=1`))).toContainEqual({ field: name, unknown: 'Unknown query parameter.' });
      }
    }
  });

  it.each(HOSTILE)('fields=%s (alone, with a property after it, and after an embedded list) is 400 naming it', async (name) => {
    let checked = 0;
    for (const op of operations().filter((o) => o.query.some((p) => p.name === 'fields'))) {
      // The names the route offers, from its own fields pattern: the lists of items are those with a dot.
      const pattern = String(op.query.find((p) => p.name === 'fields')!.schema.pattern);
      const offered = /\(([^)]*)\)/
        .exec(pattern)![1]!
        .split('|')
        .map((n) => n.replace(/\\\./g, '.'));
      const lists = [...new Set(offered.filter((n) => n.includes('.')).map((n) => n.split('.')[0]!))];
      const items = [name, `${name}.x`, `${name}.id`, `${name}.${name}`, ...lists.map((l) => `${l}.${name}`)];
      for (const item of items) {
        const details = await refused(url(op, `fields=${encodeURIComponent(item)}`));
        expect(details).toHaveLength(1);
        expect(details[0]).toMatchObject({ field: 'fields' });
        expect(String(details[0]!.enum)).toMatch(`Unknown field "${item}".`);
        // With a name the route offers before it: the same refusal, not a partial answer.
        expect(await refused(url(op, `fields=${encodeURIComponent(`${offered[0]},${item}`)}`))).toEqual(details);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(40);
  });

  it.each(HOSTILE)('sort, sort_by, order and embed given %s are 400 naming the parameter', async (name) => {
    const n = encodeURIComponent(name);
    for (const op of operations()) {
      const takes = (param: string) => op.query.some((p) => p.name === param);
      if (takes('sort')) {
        for (const sort of [`${n}:asc`, n, `id:${n}`, `id:asc,${n}:desc`]) {
          expect((await refused(url(op, `sort=${sort}`))).map((d) => d.field)).toContain('sort');
        }
      }
      if (takes('sort_by')) {
        expect((await refused(url(op, `sort_by=${n}`))).map((d) => d.field)).toContain('sort_by');
        expect((await refused(url(op, `sort_by=id&order=${n}`))).map((d) => d.field)).toContain('order');
      }
      if (takes('embed')) expect((await refused(url(op, `embed=${n}`))).map((d) => d.field)).toEqual(['embed']);
    }
  });

  it.each(HOSTILE)('%s as the value of every query parameter is answered as any value that matches nothing', async (name) => {
    for (const op of operations().filter((o) => !o.stream)) {
      for (const param of op.query) {
        const others = op.required.filter((r) => !r.startsWith(`${param.name}=`));
        const extra = param.name === 'order' ? ['sort_by=id'] : [];
        const hostile = await get(`${op.path}?${[...others, ...extra, `${param.name}=${encodeURIComponent(name)}`].join('&')}`);
        const plain = await get(`${op.path}?${[...others, ...extra, `${param.name}=${PLAIN}`].join('&')}`);
        const label = `${op.template}?${param.name}=${name}`;
        // A value is echoed in messages and Link: read with the plain name in its place.
        expect([label, hostile.statusCode, as(hostile.body, name)]).toEqual([label, plain.statusCode, plain.body]);
        expect([label, hostile.headers['x-total-count']]).toEqual([label, plain.headers['x-total-count']]);
      }
    }
  });

  it.each(HOSTILE)('%s as a path segment is 400 or 404 in the standard body, never a resource', async (name) => {
    for (const op of operations()) {
      for (const param of op.template.match(/\{\w+\}/g) ?? []) {
        const target = op.template.replace(/\{(\w+)\}/g, (p, key: string) => (p === param ? encodeURIComponent(name) : values[key]!));
        if (op.stream) continue;
        const res = await get(target);
        expect([target, [400, 404].includes(res.statusCode)]).toEqual([target, true]);
      }
    }
  });
});

describe('hostile names as aliases', () => {
  const lowerCase = HOSTILE.filter((n) => /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(n));

  it('a hostile alias name that is not stored is 404 Alias, as any missing alias', async () => {
    expect(lowerCase.length).toBeGreaterThan(0);
    for (const name of lowerCase) {
      const res = await get(`/users/${name}`);
      expect([name, res.statusCode, errorBody(res).message]).toEqual([name, 404, errorBody(await get(`/users/${PLAIN}`)).message]);
    }
  });

  it('an alias may be named like a property: it is stored, listed and answers its own filters', async () => {
    for (const name of lowerCase) {
      const put = await api.put(`/aliases/users/${name}`, { query: 'status=active&lives_in=brazil' });
      expect([name, put.statusCode]).toEqual([name, 201]);
      expect(put.headers.location).toBe(`/users/${name}`);
      const list = await get(`/users/${name}?fields=first_name`);
      expect([name, list.statusCode, list.json()]).toEqual([name, 200, [{ first_name: 'Ana' }]]);
      expect(list.headers['x-total-count']).toBe('1');
    }
    const listed = (await get('/aliases?size=100')).json<{ name: string }[]>().map((a) => a.name);
    for (const name of lowerCase) expect(listed).toContain(name);
    for (const name of lowerCase) expect((await api.delete(`/aliases/users/${name}`)).statusCode).toBe(204);
    for (const name of lowerCase) expect((await get(`/users/${name}`)).statusCode).toBe(404);
  });

  it.each(HOSTILE)('an alias definition filtering on %s is 400 naming it under query., and no collection is called so', async (name) => {
    const put = await api.put('/aliases/users/hostile-filter', { query: `${encodeURIComponent(name)}=1` });
    expect(put.statusCode).toBe(400);
    expect(errorBody(put).details).toEqual([{ field: `query.${name}`, unknown: 'Unknown query parameter.' }]);
    const mixed = await api.put('/aliases/users/hostile-filter', { query: `status=active&${encodeURIComponent(name)}=x` });
    expect(errorBody(mixed).details).toEqual([{ field: `query.${name}`, unknown: 'Unknown query parameter.' }]);
    const collection = await api.put(`/aliases/${encodeURIComponent(name)}/x`, { query: 'status=active' });
    expect(collection.statusCode).toBe(400);
    expect(errorBody(collection).details?.map((d) => d.field)).toEqual(['collection']);
    expect((await get('/users/hostile-filter')).statusCode).toBe(404);
  });
});

describe('hostile event type names', () => {
  it.each(HOSTILE)('a webhook for events of type %s is 400', async (name) => {
    const res = await api.post('/webhooks', { url: 'https://hooks.example.com/y', types: [name], secret: 'a-long-random-shared-secret' });
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details?.[0]?.field).toMatch(/^types/);
  });
});

describe('hostile keys in a JSON body', () => {
  // `__proto__`, and `constructor` holding `prototype`, are the keys of prototype pollution: refused
  // before any code sees the object, and answered as the unknown field they are (the JSON is well formed).
  const post = (url: string, body: string) => api.post(url, body, { 'content-type': 'application/json' });
  const artistBody = '"name":"Polluter","image":"https://img.example.com/p.png"';
  const unknown = (field: string) => [{ field, unknown: 'Unknown field.' }];

  it('a __proto__ key is 400 naming it as an unknown field, as any undeclared key, and nothing is stored', async () => {
    const before = (await get('/artists?size=1')).headers['x-total-count'];
    const plain = await post('/artists', `{${artistBody},"${PLAIN}":{"admin":true}}`);
    const res = await post('/artists', `{${artistBody},"__proto__":{"admin":true}}`);
    expect([plain.statusCode, errorBody(plain).message, errorBody(plain).details]).toEqual([400, 'Request validation failed.', unknown(PLAIN)]);
    expect([res.statusCode, errorBody(res).code, errorBody(res).message]).toEqual([400, 'BAD_REQUEST', 'Request validation failed.']);
    expect(errorBody(res).details).toEqual(unknown('__proto__'));
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect((await get('/artists?size=1')).headers['x-total-count']).toBe(before);
  });

  it('constructor.prototype is named, nested keys by their dotted path, every one of them', async () => {
    const res = await post('/artists', `{${artistBody},"constructor":{"prototype":{"admin":true}}}`);
    expect([res.statusCode, errorBody(res).details]).toEqual([400, unknown('constructor')]);
    const nested = await post(
      '/webhooks',
      '{"url":"https://hooks.example.com/z","secret":"a-long-random-shared-secret","types":[{"__proto__":1}],"x":{"constructor":{"prototype":1},"__proto__":2}}',
    );
    expect([nested.statusCode, errorBody(nested).details]).toEqual([
      400,
      [
        { field: 'types.0.__proto__', unknown: 'Unknown field.' },
        { field: 'x.constructor', unknown: 'Unknown field.' },
        { field: 'x.__proto__', unknown: 'Unknown field.' },
      ],
    ]);
    const patch = await api.patch(`/artists/${values.artist_id}`, '{"__proto__":{"name":"x"}}', { 'content-type': 'application/json' });
    expect([patch.statusCode, errorBody(patch).details]).toEqual([400, unknown('__proto__')]);
    expect((await get(`/artists/${values.artist_id}`)).json()).toMatchObject({ name: 'Hostile Band' });
  });

  it('a constructor key that is a plain field name is validated as any field, and malformed JSON is still malformed', async () => {
    const res = await post('/artists', `{${artistBody},"constructor":1}`);
    expect([res.statusCode, errorBody(res).details]).toEqual([400, unknown('constructor')]);
    const broken = await post('/artists', `{${artistBody},"__proto__":`);
    expect([broken.statusCode, errorBody(broken).message, errorBody(broken).details]).toEqual([400, 'Malformed JSON in request body.', undefined]);
  });
});
