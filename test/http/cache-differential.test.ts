import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { makeConfig } from '../../src/config.js';
import { ADMIN_TOKEN, seeded, type Seeded } from '../helpers.js';
import { backend, freshDatabase, type TestDatabase } from '../database.js';

// The response cache (http/response-cache.ts) must never change an answer: two instances on one
// database, one with the cache and one without (RESPONSE_CACHE_MB=0), answer every GET of the route
// table alike after random writes of every kind. Every GET route of the app is asked (the list comes
// from the app's own route table, and a route without a case generator below fails the test), each
// URL on the cached instance until it is answered from the cache (stored at its second ask, served
// from its third on; then asked again after the next writes) and once on the other. Status, body, X-Total-Count, Link and
// ETag must agree. The PRNG is seeded (CACHE_DIFF_SEED): a failure names its seed and reproduces.

const SEED = Number(process.env.CACHE_DIFF_SEED ?? 3101);
const STEPS = 30;
const FIRST_WRITES = 40;
const MAX_WRITES_PER_STEP = 3;
/** URLs kept per route: asked again step after step, so an answer stored before a write is asked after it. */
const KEPT_PER_ROUTE = 3;
const COMPARED = ['x-total-count', 'link', 'etag'] as const;

type Rnd = Seeded;

/** What the test has written and not deleted: where URLs point. */
interface State {
  artists: Map<number, Map<number, Set<number>>>;
  users: Set<number>;
  aliases: Set<string>;
  /** Tokens made to be listed and revoked (never the ones the test reads with). */
  tokens: Set<number>;
  /** The tokens the test reads with. */
  readers: { read: string; admin: string };
  /** Writes made so far: about where the event feed ends. */
  lastSequence: number;
}

interface Case {
  path: string;
  token: string;
}
/** The URLs to ask of one route, or why it is not compared (said here, so no route is left out silently). */
type Generator = ((s: State, r: Rnd) => Case[]) | { notCompared: string };

const NAMES = ['Alpha', 'alpha beta', 'Beta', 'Gamma Ray', 'Delta', 'Ålpha', 'beta two'];
const COUNTRIES = ['Norway', 'Chile', 'Brazil', 'norway', 'Japan'];
const FIRST = ['Ana', 'Bo', 'Cy', 'ana'];
const ALIAS_QUERIES = ['status=active', 'lives_in=[norway,chile]', 'older_than=40&status=inactive', 'first_name_starts_with=a', 'younger_than=30'];

const join = (parts: (string | undefined | false)[]) => {
  const kept = parts.filter((p): p is string => typeof p === 'string' && p !== '');
  return kept.length ? `?${kept.join('&')}` : '';
};
const ids = <K>(m: Map<K, unknown> | Set<K>) => [...m.keys()];
/** An id that exists (when any does), sometimes one that does not. */
function someId<K>(r: Rnd, m: Map<K, unknown> | Set<K>, missing: K): K {
  const all = ids(m);
  return all.length === 0 || r.chance(0.1) ? missing : r.pick(all);
}
const page = (r: Rnd) => r.pick(['', '', 'size=2', 'size=2&page=2', 'page=2&size=3', 'offset=1&limit=2', 'after=&size=2', 'page=9&size=5']);
const catalogueToken = (s: State, r: Rnd) => (r.chance(0.8) ? s.readers.read : ADMIN_TOKEN);

function artistList(s: State, r: Rnd): Case[] {
  const embed = r.chance(0.6);
  const q = join([
    embed && 'embed=albums',
    r.chance(0.3) && r.pick(['name_starts_with=al', 'q=alpha', 'name=Beta', 'name_starts_with=b']),
    r.chance(0.4) && r.pick(['sort=name:desc', 'sort=id:desc', 'sort=name']),
    page(r),
    r.chance(0.25) && (embed ? r.pick(['fields=id,albums.name', 'fields=albums', 'fields=name,albums.year']) : 'fields=name'),
  ]);
  return [{ path: `/artists${q}`, token: catalogueToken(s, r) }];
}

function albumList(s: State, r: Rnd): Case[] {
  const artist = someId(r, s.artists, 999999);
  const embed = r.chance(0.6);
  const q = join([
    embed && 'embed=songs',
    r.chance(0.3) && r.pick(['year=2001', 'released_after=1999', 'released_before=2003', 'name_starts_with=a', 'q=beta']),
    r.chance(0.4) && r.pick(['sort=year:desc', 'sort=name', 'sort=id:desc']),
    page(r),
    r.chance(0.25) && (embed ? r.pick(['fields=albums.songs', 'fields=name,albums.id']) : 'fields=albums.name'),
  ]);
  return [{ path: `/artists/${artist}/albums${q}`, token: catalogueToken(s, r) }];
}

/** An album that exists, as [artist, album] (sometimes one that does not). */
function albumOf(s: State, r: Rnd): [number, number] {
  const all = [...s.artists].flatMap(([artist, albums]) => [...albums.keys()].map((album): [number, number] => [artist, album]));
  if (all.length === 0 || r.chance(0.1)) return [someId(r, s.artists, 999999), 999998];
  return r.pick(all);
}

/** A song that exists, as [artist, album, song] (sometimes one that does not). */
function songOf(s: State, r: Rnd): [number, number, number] {
  const all = [...s.artists].flatMap(([artist, albums]) =>
    [...albums].flatMap(([album, songs]) => [...songs].map((song): [number, number, number] => [artist, album, song])),
  );
  if (all.length === 0 || r.chance(0.1)) return [...albumOf(s, r), 999997];
  return r.pick(all);
}

function songList(s: State, r: Rnd): Case[] {
  const [artist, album] = albumOf(s, r);
  const q = join([
    r.chance(0.3) && r.pick(['longer_than=02:00', 'shorter_than=03:30', 'name_starts_with=g', 'q=ray']),
    r.chance(0.4) && r.pick(['sort=time:desc', 'sort=name', 'sort=id:desc']),
    page(r),
    r.chance(0.2) && 'fields=name,songs.time',
  ]);
  return [{ path: `/artists/${artist}/albums/${album}/songs${q}`, token: catalogueToken(s, r) }];
}

function userList(s: State, r: Rnd): Case[] {
  const q = join([
    r.chance(0.5) &&
      r.pick([
        'status=active',
        'lives_in=norway',
        'lives_in=[chile,brazil]',
        'older_than=40',
        'younger_than=35&status=inactive',
        'first_name_starts_with=a',
        'last_name=Lee',
      ]),
    r.chance(0.5) && r.pick(['sort=age:desc', 'sort=country,first_name', 'sort=status:desc,id', 'sort_by=last_name&order=desc']),
    page(r),
    r.chance(0.2) && 'fields=id,age',
  ]);
  return [{ path: `/users${q}`, token: r.chance(0.8) ? s.readers.admin : ADMIN_TOKEN }];
}

const GENERATORS: Record<string, Generator> = {
  '/artists': artistList,
  '/artists/:artist_id': (s, r) => [{ path: `/artists/${someId(r, s.artists, 999999)}${r.chance(0.2) ? '?fields=name' : ''}`, token: catalogueToken(s, r) }],
  '/artists/:artist_id/albums': albumList,
  '/artists/:artist_id/albums/:album_id': (s, r) => {
    const [artist, album] = albumOf(s, r);
    return [{ path: `/artists/${artist}/albums/${album}${r.chance(0.2) ? '?fields=year' : ''}`, token: catalogueToken(s, r) }];
  },
  '/artists/:artist_id/albums/:album_id/songs': songList,
  '/artists/:artist_id/albums/:album_id/songs/:song_id': (s, r) => {
    const [artist, album, song] = songOf(s, r);
    return [{ path: `/artists/${artist}/albums/${album}/songs/${song}`, token: catalogueToken(s, r) }];
  },
  '/users': userList,
  '/users/:id': (s, r) => {
    if (r.chance(0.5)) return [{ path: `/users/${someId(r, s.users, 999999)}`, token: s.readers.admin }];
    const alias = someId(r, s.aliases, 'nobody-here');
    return [{ path: `/users/${alias}${join([r.chance(0.3) && 'sort=age', r.chance(0.3) && 'status=active', page(r)])}`, token: s.readers.admin }];
  },
  '/aliases': (s, r) => [
    { path: `/aliases${join([r.chance(0.3) && 'collection=users', r.chance(0.3) && 'sort=name:desc', page(r)])}`, token: catalogueToken(s, r) },
  ],
  '/tokens': (s, r) => [
    {
      path: `/tokens${join([r.chance(0.3) && 'sort=id:desc', page(r), r.chance(0.2) && 'fields=id,name'])}`,
      token: r.chance(0.7) ? s.readers.admin : ADMIN_TOKEN,
    },
  ],
  '/tokens/:token_id': (s, r) => [{ path: `/tokens/${someId(r, s.tokens, 999999)}`, token: s.readers.admin }],
  '/search': (s, r) => [{ path: `/search${join([`q=${r.pick(['alpha', 'beta', 'ray', 'gamma', 'delta two'])}`, page(r)])}`, token: catalogueToken(s, r) }],
  '/events': (s, r) => [
    {
      path: `/events${join([`after=${r.int(s.lastSequence + 2)}`, r.chance(0.5) && `size=${1 + r.int(6)}`, r.chance(0.3) && 'types=artist.created,album.updated'])}`,
      token: r.chance(0.5) ? s.readers.read : s.readers.admin,
    },
  ],
  '/events/stream': { notCompared: 'an endless stream, never a stored answer (the SSE tests cover it)' },
  // The test writes no webhooks: their deliveries are background writes, whose timing alone would make
  // two reads differ. Their reads are compared as they are (none, 404).
  '/webhooks': (s) => [{ path: '/webhooks', token: s.readers.admin }],
  '/webhooks/:webhook_id': (s) => [{ path: '/webhooks/1', token: s.readers.admin }],
  '/webhooks/:webhook_id/deliveries': (s) => [{ path: '/webhooks/1/deliveries', token: s.readers.admin }],
  '/health': (s) => [{ path: '/health', token: s.readers.read }],
  '/ready': (s) => [{ path: '/ready', token: s.readers.read }],
  '/metrics': { notCompared: "this process's own counters: two instances differ by design" },
  '/openapi.json': (s) => [{ path: '/openapi.json', token: s.readers.read }],
  '/docs': (s) => [{ path: '/docs', token: s.readers.read }],
  '/docs/json': (s) => [{ path: '/docs/json', token: s.readers.read }],
  '/docs/yaml': (s) => [{ path: '/docs/yaml', token: s.readers.read }],
  '/docs/static/index.html': (s) => [{ path: '/docs/static/index.html', token: s.readers.read }],
  '/docs/static/swagger-initializer.js': (s) => [{ path: '/docs/static/swagger-initializer.js', token: s.readers.read }],
  '/docs/static/*': (s) => [{ path: '/docs/static/swagger-ui.css', token: s.readers.read }],
};

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | null>;
}

async function ask(base: string, c: Case): Promise<Answer> {
  const res = await fetch(base + c.path, { headers: { authorization: `Bearer ${c.token}` } });
  return { status: res.status, body: await res.text(), headers: Object.fromEntries(COMPARED.map((h) => [h, res.headers.get(h)])) };
}

async function listening(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

describe(`response cache differential (${backend}, seed ${SEED})`, () => {
  let database: TestDatabase;
  let cachedApp: FastifyInstance;
  let plainApp: FastifyInstance;
  const bases: string[] = [];

  beforeAll(async () => {
    database = await freshDatabase();
    const config = (cacheBytes?: number) =>
      makeConfig({
        databaseUrl: database.url,
        logLevel: 'silent',
        adminToken: ADMIN_TOKEN,
        rateLimitPerMinute: 0,
        ...(cacheBytes === undefined ? {} : { responseCacheBytes: cacheBytes }),
      });
    cachedApp = await buildApp(config());
    plainApp = await buildApp(config(0));
    bases.push(await listening(cachedApp), await listening(plainApp));
  });
  afterAll(async () => {
    await cachedApp?.close();
    await plainApp?.close();
    await database?.drop();
  });

  it('every GET route of the route table has a case generator, and every generator a route', () => {
    const routes = cachedApp.responseCache.routes().map((r) => r.url);
    expect(routes.filter((url) => !(url in GENERATORS))).toEqual([]);
    expect(Object.keys(GENERATORS).filter((url) => !routes.includes(url))).toEqual([]);
    expect(cachedApp.responseCache.stats().enabled).toBe(true);
    expect(plainApp.responseCache.stats().enabled).toBe(false);
  });

  it('after random writes of every kind, every GET answers the same with the cache as without it', async () => {
    const r = seeded(SEED);
    const [cachedBase, plainBase] = bases as [string, string];
    const send = async (method: string, path: string, body?: unknown, token = ADMIN_TOKEN) => {
      const res = await fetch((r.chance(0.5) ? cachedBase : plainBase) + path, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, json: text ? (JSON.parse(text) as unknown) : undefined };
    };
    const created = async (method: string, path: string, body: unknown) => {
      const res = await send(method, path, body);
      if (res.status !== 201 && res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
      return res.json;
    };
    const reader = async (scope: string) => ((await created('POST', '/tokens', { scopes: [scope], name: `reader ${scope}` })) as { token: string }).token;
    const s: State = {
      artists: new Map(),
      users: new Set(),
      aliases: new Set(),
      tokens: new Set(),
      readers: { read: await reader('read'), admin: await reader('admin') },
      lastSequence: 0,
    };
    let emails = 0;
    const time = () => `0${r.int(6)}:${String(r.int(60)).padStart(2, '0')}`;

    /** One random write of one kind; the state follows what the service answered. */
    const writes: (() => Promise<void>)[] = [
      async () => {
        const bulk = r.chance(0.3);
        const item = () => ({ name: r.pick(NAMES), image: 'https://img.example.com/a.jpg' });
        const made = await created('POST', '/artists', bulk ? [item(), item()] : item());
        for (const a of (Array.isArray(made) ? made : [made]) as { id: number }[]) s.artists.set(a.id, new Map());
      },
      async () => {
        if (s.artists.size) await send('PATCH', `/artists/${r.pick(ids(s.artists))}`, { name: r.pick(NAMES) });
      },
      async () => {
        if (s.artists.size < 3) return;
        const id = r.pick(ids(s.artists));
        if ((await send('DELETE', `/artists/${id}`)).status === 204) s.artists.delete(id);
      },
      async () => {
        if (!s.artists.size) return;
        const artist = r.pick(ids(s.artists));
        const item = () => ({ name: r.pick(NAMES), year: 1998 + r.int(8), image: 'https://img.example.com/b.jpg' });
        const made = await created('POST', `/artists/${artist}/albums`, r.chance(0.3) ? [item(), item()] : item());
        for (const a of (Array.isArray(made) ? made : [made]) as { id: number }[]) s.artists.get(artist)!.set(a.id, new Set());
      },
      async () => {
        const [artist, album] = albumOf(s, r);
        await send('PATCH', `/artists/${artist}/albums/${album}`, r.chance(0.5) ? { name: r.pick(NAMES) } : { year: 1998 + r.int(8) });
      },
      async () => {
        const [artist, album] = albumOf(s, r);
        if ((await send('DELETE', `/artists/${artist}/albums/${album}`)).status === 204) s.artists.get(artist)!.delete(album);
      },
      async () => {
        const [artist, album] = albumOf(s, r);
        if (!s.artists.get(artist)?.has(album)) return;
        const item = () => ({ name: r.pick(NAMES), time: time() });
        const made = await created('POST', `/artists/${artist}/albums/${album}/songs`, r.chance(0.3) ? [item(), item()] : item());
        for (const x of (Array.isArray(made) ? made : [made]) as { id: number }[]) s.artists.get(artist)!.get(album)!.add(x.id);
      },
      async () => {
        const [artist, album, song] = songOf(s, r);
        await send('PATCH', `/artists/${artist}/albums/${album}/songs/${song}`, r.chance(0.5) ? { name: r.pick(NAMES) } : { time: time() });
      },
      async () => {
        const [artist, album, song] = songOf(s, r);
        if ((await send('DELETE', `/artists/${artist}/albums/${album}/songs/${song}`)).status === 204) s.artists.get(artist)!.get(album)!.delete(song);
      },
      async () => {
        const item = () => ({
          first_name: r.pick(FIRST),
          last_name: r.pick(['Lee', 'Silva', 'Berg']),
          email: `user${++emails}@example.com`,
          age: 18 + r.int(60),
          status: r.pick(['active', 'inactive']),
          country: r.pick(COUNTRIES),
        });
        const made = await created('POST', '/users', r.chance(0.3) ? [item(), item()] : item());
        for (const u of (Array.isArray(made) ? made : [made]) as { id: number }[]) s.users.add(u.id);
      },
      async () => {
        if (!s.users.size) return;
        const patch = r.pick([
          { country: r.pick(COUNTRIES) },
          { status: r.pick(['active', 'inactive']) },
          { age: 18 + r.int(60) },
          { first_name: r.pick(FIRST) },
        ]);
        await send('PATCH', `/users/${r.pick(ids(s.users))}`, patch);
      },
      async () => {
        if (!s.users.size) return;
        const id = r.pick(ids(s.users));
        if ((await send('DELETE', `/users/${id}`)).status === 204) s.users.delete(id);
      },
      async () => {
        const name = r.pick(['young-ones', 'northern', 'quiet-folk', 'a-names']);
        await created('PUT', `/aliases/users/${name}`, { query: r.pick(ALIAS_QUERIES) });
        s.aliases.add(name);
      },
      async () => {
        if (!s.aliases.size) return;
        const name = r.pick(ids(s.aliases));
        if ((await send('DELETE', `/aliases/users/${name}`)).status === 204) s.aliases.delete(name);
      },
      async () => {
        const body = { scopes: [r.pick(['read', 'write'])], name: `listed ${s.tokens.size}`, ...(r.chance(0.5) ? { expires_at: '2099-01-01T00:00:00Z' } : {}) };
        s.tokens.add(((await created('POST', '/tokens', body)) as { id: number }).id);
      },
      async () => {
        if (!s.tokens.size) return;
        const id = r.pick(ids(s.tokens));
        if ((await send('DELETE', `/tokens/${id}`)).status === 204) s.tokens.delete(id);
      },
    ];

    const routes = cachedApp.responseCache.routes();
    const kept = new Map<string, Case[]>();
    const servedFromCache = new Map<string, number>();
    const failures: string[] = [];
    for (let step = 0; step < STEPS && failures.length === 0; step++) {
      // A few writes at a time: an answer stored before them is asked right after them, while most
      // other tables have not moved (a whole round of writes would move every table anyway).
      const count = step === 0 ? FIRST_WRITES : 1 + r.int(MAX_WRITES_PER_STEP);
      for (let i = 0; i < count; i++) await r.pick(writes)();
      s.lastSequence += count;
      for (const route of routes) {
        const generate = GENERATORS[route.url]!;
        // Routes whose answers are never stored are compared too, less often (they cannot go stale).
        if (typeof generate !== 'function' || (!route.cached && step % 10 !== 0)) continue;
        const fresh = generate(s, r).filter((c) => !(kept.get(route.url) ?? []).some((k) => k.path === c.path && k.token === c.token));
        const cases = [...(kept.get(route.url) ?? []), ...fresh].slice(-KEPT_PER_ROUTE);
        kept.set(route.url, cases);
        for (const c of cases) {
          const truth = await ask(plainBase, c);
          // Asked until answered from the cache (stored at its second ask, served from its third), at most 3 times.
          for (let n = 1; n <= 3; n++) {
            const hitsBefore = cachedApp.responseCache.stats().hits;
            const got = await ask(cachedBase, c);
            const fromCache = cachedApp.responseCache.stats().hits > hitsBefore;
            if (fromCache) servedFromCache.set(route.url, (servedFromCache.get(route.url) ?? 0) + 1);
            const same = got.status === truth.status && got.body === truth.body && COMPARED.every((h) => got.headers[h] === truth.headers[h]);
            if (!same) {
              failures.push(
                `seed ${SEED}, step ${step}, ask ${n}${fromCache ? ' (from the cache)' : ''}: GET ${c.path}\n` +
                  `  with cache:    ${got.status} ${JSON.stringify(got.headers)} ${got.body.slice(0, 300)}\n` +
                  `  without cache: ${truth.status} ${JSON.stringify(truth.headers)} ${truth.body.slice(0, 300)}`,
              );
            }
            if (fromCache) break;
          }
        }
      }
    }
    expect(failures).toEqual([]);
    // Not vacuous: every route whose answers may be stored was answered from the cache, and no other was.
    const cacheable = routes.filter((route) => route.cached).map((route) => route.url);
    expect(cacheable.length).toBeGreaterThan(5);
    expect(cacheable.filter((url) => !servedFromCache.has(url))).toEqual([]);
    expect([...servedFromCache.keys()].filter((url) => !cacheable.includes(url))).toEqual([]);
  }, 240_000);
});
