import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend } from '../database.js';
import { buildTestApp, client, createAlbum, createArtist, createSong, type Client, type TestContext } from '../helpers.js';
import { links, seedUsers } from './fixtures.js';
import { shapeStatements } from '../../src/query/shapes.js';

// docs/queries/<backend>.sql: every statement the list engine builds for the requests below, per
// dialect, as immich keeps server/src/queries/*.sql: checked in, so that a change to a list's SQL
// shows in the diff of the change that made it. Generated here, from the engine itself: a fresh app
// on a fresh database with the data below, each request sent in turn, and the statements (shapes,
// src/query/shapes.ts) it built for the first time written under it. `npm run queries:generate`
// writes the files (QUERIES_WRITE=1); `npm test` fails while they differ from what the engine builds.

const WRITE = process.env.QUERIES_WRITE === '1';
const FILE = new URL(`../../docs/queries/${backend}.sql`, import.meta.url);
const REGENERATE = 'npm run queries:generate (with TEST_DATABASE_URL set: it writes both dialects)';

/**
 * Per collection, requests that reach each strategy and statement of the engine (list/page.ts), whose
 * statements are written out; `next`: then its Link next too. A request that builds nothing new says so.
 */
const REQUESTS: { what: string; url: string; next?: true }[] = [
  { what: 'users, no filter', url: '/users' },
  { what: 'users, a filter the summary answers, page 2', url: '/users?status=active&sort=last_name:asc&page=2&size=5' },
  { what: 'users, page 3 of the same list, after page 2', url: '/users?status=active&sort=last_name:asc&page=3&size=5' },
  { what: 'users, two countries by age', url: '/users?lives_in=[brazil,chile]&sort=age:asc&page=2&size=5' },
  { what: 'users, two countries by last name', url: '/users?lives_in=[brazil,chile]&sort=last_name:asc&page=2&size=5' },
  { what: 'users, sorted by a column the summary counts by, then a name', url: '/users?sort=status:asc,first_name:desc&page=2&size=5' },
  { what: 'users, sorted by a name, then a column the summary counts by', url: '/users?sort=first_name:asc,country:desc&page=2&size=5' },
  { what: 'users, a page in the back half', url: '/users?older_than=20&sort=age:desc&page=9&size=5' },
  { what: 'users, past the end', url: '/users?status=inactive&page=999&size=5' },
  { what: 'users, a lone name prefix', url: '/users?first_name_starts_with=an&sort=last_name:asc&page=2&size=2' },
  { what: 'users, an exact name (no summary answers it)', url: '/users?first_name=Ana&sort=age:asc&page=2&size=1' },
  { what: 'users, cursor pages', url: '/users?sort=age:desc&after=&size=5', next: true },
  { what: 'users alias', url: '/users/young-brazilians?sort_by=country&order=desc&page=2&size=1' },
  { what: 'artists by name, page 2', url: '/artists?sort=name:desc&page=2&size=5' },
  { what: 'artists, name prefix', url: '/artists?name_starts_with=al&sort=name:asc&page=2&size=2' },
  { what: 'artists, full text', url: '/artists?q=alpha&page=2&size=2' },
  { what: 'artists, exact name', url: '/artists?name=Alpha%201' },
  { what: 'artists, cursor pages', url: '/artists?sort=name:asc&after=&size=5', next: true },
  { what: "an artist's albums, year range", url: '/artists/1/albums?released_after=1990&released_before=2025&sort=year:desc&page=2&size=2' },
  { what: "an album's songs, by time", url: '/artists/1/albums/1/songs?sort=time:desc&page=2&size=2' },
  { what: "an album's songs, longer than", url: '/artists/1/albums/1/songs?longer_than=02:00&sort=name:asc' },
  { what: 'tokens', url: '/tokens?sort=id:desc&page=1&size=2' },
  { what: 'aliases', url: '/aliases?collection=users' },
];

const NAMES = ['Ana', 'ana', 'Bruno', 'Carla', 'Élodie', 'João', 'Joao', 'Dan'];
const LAST = ['Silva', 'Souza', 'Lima', 'Díaz', 'Müller'];
const COUNTRIES = ['Brazil', 'brazil', 'Chile', 'Perú', 'Japan'];

let ctx: TestContext;
let api: Client;

beforeAll(async () => {
  // The SQL path's statements: without the users index (USERS_INDEX=off), which answers the users lists
  // of its family from memory once loaded (so which statements were built would depend on when it was).
  ctx = await buildTestApp({ usersIndex: false });
  api = client(ctx.app, ctx.tokens.admin);
  const people = Array.from({ length: 80 }, (_, n) => ({
    first_name: NAMES[n % NAMES.length]!,
    last_name: LAST[(n * 7) % LAST.length]!,
    age: 15 + ((n * 13) % 60),
    status: n % 3 === 0 ? ('inactive' as const) : ('active' as const),
    country: COUNTRIES[(n * 3) % COUNTRIES.length]!,
  }));
  await seedUsers(api, people, 'q');
  for (let n = 0; n < 12; n++) await createArtist(api, `${['Alpha', 'beta', 'Gamma'][n % 3]} ${n}`);
  for (let n = 0; n < 5; n++) await createAlbum(api, 1, `Album ${n}`, 1985 + n * 5);
  for (let n = 0; n < 6; n++) await createSong(api, 1, 1, `Song ${n}`, `0${n}:3${n}`);
});
afterAll(() => ctx.close());

/** SQL on several lines: a clause per line, indented by its depth in parentheses (quoted text left alone). */
function formatSql(text: string): string {
  const clause = /^(select|from|where|order by|group by|having|limit|union all|left join lateral|left join|cross join lateral|join) /i;
  let out = '';
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '(') {
      depth++;
    } else if (c === ')') {
      depth--;
    } else if (text[i - 1] === ' ' && clause.test(text.slice(i))) {
      out = `${out.trimEnd()}\n${'  '.repeat(depth)}`;
    }
    out += c;
  }
  return out.trim();
}

/** The statements built for `url` (the shapes that were not kept before it), each under its kind. */
async function statementsOf(url: string): Promise<{ text: string; next?: string }> {
  const before = new Set(shapeStatements(ctx.app.db).map((s) => s.key));
  const res = await api.get(url);
  expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
  const built = shapeStatements(ctx.app.db).filter((s) => !before.has(s.key));
  // The key: the source, the kind of statement and the shape (list/*.ts); the kind says which read it is.
  const text = built.map((s) => `-- ${s.key.split('|').slice(0, 2).join(' ')}\n${formatSql(s.sql)};`).join('\n\n');
  return { text, next: links(res.headers.link).next };
}

async function generated(): Promise<string> {
  const sections = [
    `-- The list engine's statements on ${backend === 'sqlite' ? 'SQLite' : 'PostgreSQL'}: every statement it builds for each request`,
    '-- below, on a fresh database (test/query/queries.test.ts says which data). Generated: do not edit;',
    `-- ${REGENERATE}.`,
  ];
  for (const { what, url, next } of REQUESTS) {
    const first = await statementsOf(url);
    sections.push(`\n-- ${what}: GET ${url}\n${first.text || '-- (no statement the earlier requests had not built)'}`);
    if (next) {
      expect(first.next, `${url} has a next page`).toBeDefined();
      const then = await statementsOf(first.next!);
      sections.push(`\n-- ${what}, the next one: GET ${first.next}\n${then.text || '-- (no statement the earlier requests had not built)'}`);
    }
  }
  return `${sections.join('\n')}\n`;
}

describe('the list statements, per dialect (docs/queries)', () => {
  it(`are those checked in as docs/queries/${backend}.sql`, async () => {
    const text = await generated();
    if (WRITE) {
      if (backend === 'sqlite' && !process.env.TEST_DATABASE_URL)
        throw new Error(`QUERIES_WRITE without TEST_DATABASE_URL would write SQLite's only: ${REGENERATE}`);
      writeFileSync(FILE, text);
      return;
    }
    const checkedIn = existsSync(FILE) ? readFileSync(FILE, 'utf8') : '';
    expect(text, `docs/queries/${backend}.sql is not what the list engine builds now: ${REGENERATE}, and commit it`).toBe(checkedIn);
  });

  it('writes SQL on several lines, a clause per line, quoted text untouched', () => {
    expect(formatSql(`select "id" from (select "a from b" from "t" where x = 'order by y') as s order by "id" limit ?`)).toBe(
      `select "id"\nfrom (select "a from b"\n  from "t"\n  where x = 'order by y') as s\norder by "id"\nlimit ?`,
    );
  });
});
