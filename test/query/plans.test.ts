import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CompiledQuery, sql } from 'kysely';
import { backend } from '../database.js';
import { buildTestApp, client, type Client, type TestContext } from '../helpers.js';
import { directSqlite } from '../../src/db/precompiled.js';
import { forgetLists } from '../../src/query/list/page.js';
import { usersCollection } from '../../src/modules/users/users.collection.js';
import { artistsCollection } from '../../src/modules/artists/artists.collection.js';
import { shapeStatements } from '../../src/query/shapes.js';
import { collationKey, fold, storedName } from '../../src/db/collation.js';

// Every offered sort of the users list is read from an index in its order (SQLite's EXPLAIN QUERY
// PLAN of the statements the service prepared for the requests below): with a broad filter the page
// walks the sort key's own index (INDEXED BY, query/page-strategy.ts) and never sorts the filtered
// set in a temporary B-tree; with a narrow one it searches a filter index (no full scan) and sorts the
// few matching rows. id order is the table's own (a rowid walk that stops at the page).
// PostgreSQL plans for itself (no hints), by costs that on 6,000 rows are not those of a million (it
// may sort 117 tying rows rather than walk an index). So its test asks whether an index serves each
// order as the statement is written: EXPLAIN of the statements the lists ran, with the values they
// ran with, with sorts, sequential and bitmap scans priced out (enable_* = off, which only makes them
// the last resort). A sequential scan of users, or a sort of more than a page's worth of rows, still
// in the plan means no index can serve it (the outer sort of a page's few rows by their keys is
// expected).

let ctx: TestContext;
let api: Client;
/** What a list orders by for `field` (query/sql.ts): a name's collation key, other text by code point. */
const orderOf = (field: string) =>
  field === 'age' || field === 'id' ? sql.ref(field) : field === 'status' ? sql`${sql.ref(field)} collate "binary"` : sql.ref(`${field}_key`);
const COUNTRIES = ['Brazil', 'Chile', 'Japan', 'Italy', 'Spain', 'Peru', 'Kenya', 'Nepal', 'Oman', 'Fiji'];
const SORTABLE = Object.keys(usersCollection.sortable);

beforeAll(async () => {
  // The SQL path's plans: without the users index (USERS_INDEX=off), which would answer these lists from memory.
  ctx = await buildTestApp({ usersIndex: false });
  api = client(ctx.app, ctx.tokens.admin);
  // 6,000 users in a few statements (the summary's triggers count them as any write would).
  for (let start = 0; start < 6000; start += 500) {
    const rows = Array.from({ length: 500 }, (_, k) => {
      const n = start + k;
      const [first, last, country] = [`First${n % 37}`, `Last${n % 41}`, COUNTRIES[n % COUNTRIES.length]!];
      // Written by hand, so with the keys every writer stores beside the names (src/db/collation.ts).
      const keys = [collationKey(first), collationKey(last), collationKey(country), fold(country)];
      return sql`(${first}, ${last}, ${`u${n}@example.com`}, ${n % 90}, ${n % 3 === 0 ? 'inactive' : 'active'}, ${country}, ${sql.join(keys)})`;
    });
    await sql`insert into users (first_name, last_name, email, age, status, country, first_name_key, last_name_key, country_key, country_fold)
      values ${sql.join(rows)}`.execute(ctx.app.db);
  }
  // 3,000 artists, a few hundred of them sharing a name (ties are ordered by id).
  const artists = Array.from({ length: 3000 }, (_, n) => {
    const { name, name_key } = storedName(`${['Alpha', 'beta', 'Gamma', 'delta'][n % 4]} ${n % 700}`);
    return sql`(${name}, ${name_key}, ${'https://img.example.com/a.jpg'})`;
  });
  await sql`insert into artists (name, name_key, image) values ${sql.join(artists)}`.execute(ctx.app.db);
  await sql`analyze artists`.execute(ctx.app.db);
  await sql`analyze users`.execute(ctx.app.db);
  await sql`analyze users_counts`.execute(ctx.app.db);
});
afterAll(() => ctx.close());
// Each test starts from what a fresh start keeps (no statements, boundaries, totals or summaries held),
// so the statements it sees and how they are planned are those of its own requests, whatever ran before.
beforeEach(() => forgetLists(ctx.app.db));

function plansOf(texts: string[]): { text: string; plan: string }[] {
  const handle = directSqlite(ctx.app.db)!;
  // The plan does not depend on the values (the index is named in the statement): bind nulls.
  const plan = (text: string) =>
    handle.prepare(`explain query plan ${text}`).all(new Array((text.match(/\?/g) ?? []).length).fill(null)) as { detail: string }[];
  return texts.map((text) => ({
    text,
    plan: plan(text)
      .map((r) => r.detail)
      .join(' | '),
  }));
}

/** The page statements the lists built for `run()`'s requests (not the by-id fetch, the summary or the version read). */
async function pageStatements(run: () => Promise<void>, table = 'users'): Promise<{ text: string; plan: string }[]> {
  const before = new Set(shapeStatements(ctx.app.db).map((s) => s.key));
  await run();
  const built = shapeStatements(ctx.app.db).filter((s) => !before.has(s.key));
  return plansOf([...new Set(built.map((s) => s.sql))].filter((t) => t.includes(`from "${table}"`) && /order by/.test(t) && !/json_each/.test(t)));
}

describe.runIf(backend === 'sqlite')('users list plans (SQLite)', () => {
  it("walks the sort key's own index for every sortable field and direction under a broad filter, pages 1 and 3, sorting nothing", async () => {
    const statements = await pageStatements(async () => {
      for (const field of SORTABLE) {
        for (const dir of ['asc', 'desc']) {
          for (const page of [1, 3]) {
            const res = await api.get(`/users?older_than=5&sort_by=${field}&order=${dir}&page=${page}&size=20`);
            expect(res.statusCode).toBe(200);
          }
        }
      }
    });
    expect(statements.length).toBeGreaterThanOrEqual(SORTABLE.length * 2);
    for (const { text, plan } of statements) {
      expect(plan, text).not.toMatch(/USE TEMP B-TREE/);
      if (/indexed by/.test(text)) expect(plan, text).toMatch(/USING (COVERING )?INDEX users_\w+_(asc|desc)/);
      else expect(text, plan).toMatch(/not indexed/); // id order: the table's own rowid order
    }
  });

  it('reads a field then id in either direction from an index in that order (the other direction, backward), sorting nothing', async () => {
    const statements = await pageStatements(async () => {
      for (const field of SORTABLE.filter((f) => f !== 'id')) {
        for (const dir of ['asc', 'desc']) {
          for (const tie of ['asc', 'desc']) {
            const res = await api.get(`/users?older_than=5&sort=${field}:${dir},id:${tie}&page=2&size=20`);
            expect(res.statusCode).toBe(200);
            // Ties really are in the id order asked for: the page is the database's own unaided ORDER BY.
            const rows = res.json<{ id: number }[]>();
            const folded = orderOf(field);
            const expected = await sql<{ id: number }>`select id from users not indexed where age > 5
              order by ${folded} ${sql.raw(dir)}, id ${sql.raw(tie)} limit 20 offset 20`.execute(ctx.app.db);
            expect(rows.map((u) => u.id)).toEqual(expected.rows.map((r) => r.id));
          }
        }
      }
    });
    expect(statements.length).toBeGreaterThan(0);
    for (const { text, plan } of statements) {
      expect(plan, text).not.toMatch(/USE TEMP B-TREE/);
      // An order index; or, for one value of a field the summary counts by (a by-value split), the
      // table in id order or an index pinned at that value.
      expect(text, plan).toMatch(/indexed by "users_\w+_(asc|desc)"|not indexed/);
    }
  });

  it('drops the sort keys after id (no two rows tie on it): the table is read in id order, sorting nothing', async () => {
    const statements = await pageStatements(async () => {
      for (const dir of ['asc', 'desc']) {
        const res = await api.get(`/users?older_than=5&sort=id:${dir},last_name:desc,age:asc&page=3&size=20`);
        expect(res.statusCode).toBe(200);
        const expected = await sql<{ id: number }>`select id from users where age > 5 order by id ${sql.raw(dir)} limit 20 offset 40`.execute(ctx.app.db);
        expect(res.json<{ id: number }[]>().map((u) => u.id)).toEqual(expected.rows.map((r) => r.id));
      }
    });
    expect(statements.length).toBeGreaterThan(0);
    for (const { text, plan } of statements) {
      expect(text, plan).toMatch(/not indexed/);
      expect(text, plan).not.toMatch(/last_name/);
      expect(plan, text).not.toMatch(/USE TEMP B-TREE/);
    }
  });

  it('reads a sort led by a name and then another key as keys from its index (each name group sorted in it), page 1 too', async () => {
    const statements = await pageStatements(async () => {
      for (const name of ['first_name', 'last_name']) {
        for (const other of SORTABLE.filter((f) => f !== 'id' && f !== name)) {
          for (const page of [1, 2]) {
            const res = await api.get(`/users?older_than=5&sort=${name}:asc,${other}:desc&page=${page}&size=20`);
            expect(res.statusCode).toBe(200);
            const folded = orderOf;
            const expected = await sql<{ id: number }>`select id from users not indexed where age > 5
              order by ${folded(name)} asc, ${folded(other)} desc, id limit 20 offset ${(page - 1) * 20}`.execute(ctx.app.db);
            expect(res.json<{ id: number }[]>().map((u) => u.id)).toEqual(expected.rows.map((r) => r.id));
          }
        }
      }
    });
    expect(statements.length).toBeGreaterThan(0);
    // The name's index, or (a name then country) each country's range of its index in the name's order.
    // Not covering since migration 20261127T0100: no users index holds age (nor status), which the filter
    // (older_than) and a second key of age or status read from the row; the page's keys are still those
    // of the index's walk, sorted within each name's group.
    for (const { text, plan } of statements) expect(plan, text).toMatch(/USING (COVERING )?INDEX users_(country_)?(first|last)_name_(asc|desc)/);
  });

  it('reads a name then status or country as one arm per value (a country: its own range of its name index), sorting only what the page reaches', async () => {
    const statements = await pageStatements(async () => {
      for (const name of ['first_name', 'last_name']) {
        for (const [other, dir] of [
          ['status', 'asc'],
          ['country', 'desc'],
        ] as const) {
          for (const page of [1, 3]) {
            const res = await api.get(`/users?younger_than=85&sort=${name}:desc,${other}:${dir}&page=${page}&size=10`);
            expect(res.statusCode).toBe(200);
            const expected = await sql<{ id: number }>`select id from users not indexed where age < 85
              order by ${orderOf(name)} desc, ${orderOf(other)} ${sql.raw(dir)}, id limit 10 offset ${(page - 1) * 10}`.execute(ctx.app.db);
            expect(res.json<{ id: number }[]>().map((u) => u.id)).toEqual(expected.rows.map((r) => r.id));
          }
        }
      }
    });
    expect(statements).toHaveLength(4);
    for (const { text, plan } of statements) {
      // 2 statuses: one walk of the name's index per status. 10 countries: one range of the country's
      // index in the name's order per country, each walking its own country's entries only. None
      // sorts a name's group.
      const arms = text.match(/ union all /g)!.length + 1;
      expect([2, COUNTRIES.length], text).toContain(arms);
      // Each entry's row is visited for the age (younger_than) and the status: no index holds them
      // (migration 20261127T0100), so the walks are not covering.
      const walk =
        arms === 2 ? /SCAN users USING INDEX users_(first|last)_name_desc/g : /SEARCH users USING (COVERING )?INDEX users_country_(first|last)_name_desc/g;
      expect(plan.match(walk), text).toHaveLength(arms);
      expect(plan, text).not.toMatch(/USE TEMP B-TREE FOR (LAST|RIGHT)/);
    }
  });

  it("reads one country sorted by a name and then age or status from the country's index in that name's order", async () => {
    const statements = await pageStatements(async () => {
      for (const name of ['first_name', 'last_name']) {
        for (const other of ['age', 'status']) {
          for (const page of [1, 3]) {
            const res = await api.get(`/users?lives_in=nepal&sort=${name}:desc,${other}:asc&page=${page}&size=10`);
            expect(res.statusCode).toBe(200);
            const expected = await sql<{ id: number }>`select id from users not indexed where country_fold = 'nepal'
              order by ${orderOf(name)} desc, ${orderOf(other)} asc, id limit 10 offset ${(page - 1) * 10}`.execute(ctx.app.db);
            expect(res.json<{ id: number }[]>().map((u) => u.id)).toEqual(expected.rows.map((r) => r.id));
          }
        }
      }
    });
    expect(statements.length).toBeGreaterThan(0);
    // Entered at the country, in the name's order: only that country's name groups are sorted (or, per
    // value of age or status, one arm each). Not covering: the age or status is read from the row.
    for (const { text, plan } of statements) expect(plan, text).toMatch(/SEARCH users USING (COVERING )?INDEX users_country_(first|last)_name_desc/);
  });

  it('searches a filter index, never scans the table, when the filter is narrow', async () => {
    const statements = await pageStatements(async () => {
      for (const field of SORTABLE.filter((f) => f !== 'country')) {
        const res = await api.get(`/users?lives_in=nepal&older_than=80&sort_by=${field}&order=desc&page=3&size=10`);
        expect(res.statusCode).toBe(200);
      }
    });
    expect(statements.length).toBeGreaterThan(0);
    for (const { text, plan } of statements) {
      // Entered at the country through an index led by it. Since migration 20261127T0100 no index holds
      // the age, so walking the country's index in a name's order visits each entry's row for it, and so
      // does finding the matches through it (every one of Nepal's 600 users, for its 67 older than 80):
      // the page walks, as far as it reaches. Sorted by age or status, the page is read per value of that
      // key (byValue), each through the country's index; sorted by status, each status's page from
      // the SQLite index that holds status and age (users_country_status_age), its entries alone.
      expect(plan, text).toMatch(
        /SEARCH users USING (COVERING )?INDEX users_country_\w+ \(country_fold=\?\)|SEARCH users USING COVERING INDEX users_country_status_age \(country_fold=\? AND status=\? AND age>\?\)/,
      );
      expect(plan, text).not.toMatch(/SCAN users/);
    }
  });

  it('reads a country, a status and an age range (young-brazilians) deep in any order from the index that holds them, visiting no row but the page', async () => {
    // Since migration 20261127T0100 no index held status or age, so such a page walked the country's
    // name index (or the table) fetching each entry's row to check them: at 1M users, page 478 of 20
    // of the alias sorted by first name walked 85,000 entries of Brazil's 120,000 (50-220 ms). On
    // SQLite the index users_country_status_age (migration 20261127T0340) holds every column compared:
    // the matches are read from its entries alone, sorted there, and only the page's rows fetched.
    const filters = 'lives_in=brazil&status=active&older_than=18&younger_than=70';
    const sorts = [
      'first_name:asc',
      'last_name:desc',
      'first_name:desc,last_name:asc',
      'age:desc',
      'age:asc,last_name:asc',
      'id:desc',
      'country:asc,first_name:desc',
    ];
    const statements = await pageStatements(async () => {
      for (const sort of sorts) {
        const res = await api.get(`/users?${filters}&sort=${sort}&page=5&size=20`);
        expect(res.statusCode, sort).toBe(200);
        const order = sort.split(',').map((k) => {
          const [field, dir] = k.split(':') as [string, string];
          return sql`${orderOf(field)} ${sql.raw(dir)}`;
        });
        const expected = await sql<{ id: number }>`select id from users not indexed
          where country_fold = 'brazil' and status = 'active' and age > 18 and age < 70
          order by ${sql.join(order)}, id limit 20 offset 80`.execute(ctx.app.db);
        expect(expected.rows, sort).toHaveLength(20);
        expect(
          res.json<{ id: number }[]>().map((u) => u.id),
          sort,
        ).toEqual(expected.rows.map((r) => r.id));
      }
    });
    expect(statements.length).toBeGreaterThanOrEqual(sorts.length);
    for (const { text, plan } of statements) {
      expect(plan, text).toMatch(/SEARCH users USING COVERING INDEX users_country_status_age \(country_fold=\? AND status=\?/);
      expect(plan, text).not.toMatch(/SCAN users|users_country_(fold|first_name|last_name)_/);
    }
  });

  it("reads one age of a few countries sorted by a name as a merge of the countries' name ranges, not every row of the countries", async () => {
    // Sorted by age and then a name, the page is read per age (byValue), each part one age of the
    // countries sorted by the name. No index holds the age (migration 20261127T0100), so finding a
    // part's 20 matches through the country's index fetches every row of the three countries (1,800
    // here; 200,000 at 1M users: 216 ms), where one range per country of its name index, merged, walks
    // about what the page reaches (10,000 entries at 1M users: 23 ms).
    const statements = await pageStatements(async () => {
      for (const name of ['first_name', 'last_name']) {
        const res = await api.get(`/users?lives_in=[nepal,oman,fiji]&younger_than=60&sort=age:desc,${name}:asc&page=1&size=10`);
        expect(res.statusCode).toBe(200);
        const expected = await sql<{ id: number }>`select id from users not indexed
          where country_fold in ('nepal', 'oman', 'fiji') and age < 60 order by age desc, ${orderOf(name)} asc, id limit 10`.execute(ctx.app.db);
        expect(res.json<{ id: number }[]>().map((u) => u.id)).toEqual(expected.rows.map((r) => r.id));
      }
    });
    expect(statements).toHaveLength(2);
    for (const { text, plan } of statements) {
      expect(plan.match(/SEARCH users USING INDEX users_country_(first|last)_name_asc \(country_fold=\?\)/g), text).toHaveLength(3);
      expect(plan, text).not.toMatch(/users_country_fold_asc/);
    }
  });

  it('reads a name prefix sorted by age or status one value at a time, each through the table in id order, not every match sorted', async () => {
    // No index orders by age or status (migration 20261127T0100), and the summary that counts by them
    // does not hold names: without this the page fetched every row the prefix selects and sorted them
    // (83,000 rows for first_name_starts_with=a at 1M users: 116-180 ms). Page 5 of 50 reaches 250 rows:
    // more than an age's share of the prefix (20), fewer than a status's.
    const statements = await pageStatements(async () => {
      for (const field of ['age', 'status']) {
        for (const dir of ['asc', 'desc']) {
          for (const [page, size] of [
            [1, 10],
            [2, 10],
            [5, 50],
          ] as const) {
            const res = await api.get(`/users?first_name_starts_with=first1&sort=${field}:${dir}&page=${page}&size=${size}`);
            expect(res.statusCode).toBe(200);
            // The names are ASCII: SQLite's LIKE ignores their case, as the prefix filter does.
            const expected = await sql<{ id: number }>`select id from users not indexed where first_name like 'first1%'
              order by ${orderOf(field)} ${sql.raw(dir)}, id limit ${size} offset ${(page - 1) * size}`.execute(ctx.app.db);
            expect(
              res.json<{ id: number }[]>().map((u) => u.id),
              `${field} ${dir} ${page}`,
            ).toEqual(expected.rows.map((r) => r.id));
          }
        }
      }
    });
    // Then by a name: each age's rows through the name's index, in its order (page 1 of 5: about 1,500
    // entries an age, each row fetched, against every one of the prefix's 1,780 rows fetched and sorted).
    const named = await pageStatements(async () => {
      for (const dir of ['asc', 'desc']) {
        const res = await api.get(`/users?first_name_starts_with=first1&sort=age:${dir},last_name:desc&page=1&size=5`);
        expect(res.statusCode).toBe(200);
        const expected = await sql<{ id: number }>`select id from users not indexed where first_name like 'first1%'
          order by age ${sql.raw(dir)}, last_name_key desc, id limit 5`.execute(ctx.app.db);
        expect(
          res.json<{ id: number }[]>().map((u) => u.id),
          dir,
        ).toEqual(expected.rows.map((r) => r.id));
      }
    });
    expect(named.length).toBeGreaterThan(0);
    for (const { text, plan } of named) {
      expect(text).toMatch(/indexed by "users_last_name_desc" where .*"age" = \?/);
      expect(plan, text).not.toMatch(/USE TEMP B-TREE/);
    }
    const walks = statements.filter(({ text }) => /not indexed/.test(text));
    for (const { text, plan } of walks) expect(plan, text).toMatch(/^SCAN users$/);
    expect(walks.filter(({ text }) => /"age" = \?/.test(text)).length).toBeGreaterThan(0);
    expect(walks.filter(({ text }) => /"status" collate "binary" = \?/.test(text)).length).toBeGreaterThan(0);
    // Only page 5 of 50 by age is read the other way: the 250 rows it reaches are more than the 20 of
    // an age the prefix selects, so the walk would run through the table for several ages.
    const others = statements.filter(({ text }) => !/not indexed/.test(text));
    expect(others.length).toBeGreaterThan(0);
    for (const { text } of others) expect(text).toMatch(/order by "age" (asc|desc), "id" asc limit/);
  });

  it('reads a few countries sorted by id or a name as an ordered merge of one index range per country, sorting nothing', async () => {
    const pages: { countries: string; field: string; dir: 'asc' | 'desc'; ids: number[] }[] = [];
    const statements = await pageStatements(async () => {
      for (const field of ['id', 'first_name', 'last_name']) {
        for (const dir of ['asc', 'desc'] as const) {
          for (const countries of ['nepal,oman,fiji', 'nepal,NEPAL,oman']) {
            // A broad age filter: with a narrow one (older_than=80, 67 users a country) sorting the few
            // matches costs less than the merge's walk, which visits each entry's row for the age (no
            // index holds it since migration 20261127T0100; the test above).
            const res = await api.get(`/users?lives_in=[${countries}]&older_than=5&sort_by=${field}&order=${dir}&page=3&size=10`);
            expect(res.statusCode).toBe(200);
            pages.push({ countries, field, dir, ids: res.json<{ id: number }[]>().map((u) => u.id) });
          }
        }
      }
    });
    const merged = statements.filter(({ text }) => /union all/.test(text));
    expect(merged).toHaveLength(6); // a country named twice is not read twice: no merge for it
    for (const { text, plan } of merged) {
      expect(plan, text).toMatch(/MERGE \(UNION ALL\)/);
      expect(plan.match(/SEARCH users USING (COVERING )?INDEX users_country_\w+ \(country_fold=\?\)/g), text).toHaveLength(3);
      expect(plan, text).not.toMatch(/USE TEMP B-TREE|SCAN users/);
    }
    // Each page as the database orders it unaided.
    for (const { countries, field, dir, ids } of pages) {
      const key = orderOf(field);
      const expected = await sql<{ id: number }>`select id from users
        where country_fold in (${sql.join(countries.toLowerCase().split(','))}) and age > 5
        order by ${key} ${sql.raw(dir)}, id limit 10 offset 20`.execute(ctx.app.db);
      expect(ids, `${countries} ${field} ${dir}`).toEqual(expected.rows.map((r) => r.id));
    }
  });

  it('reads a few countries sorted by country one country at a time, each from its own index range only', async () => {
    const pages: { dir: 'asc' | 'desc'; ids: number[] }[] = [];
    const statements = await pageStatements(async () => {
      for (const dir of ['asc', 'desc'] as const) {
        // 133 matches per country: page 3 of 50 spans the first two.
        const res = await api.get(`/users?lives_in=[nepal,oman,fiji]&status=active&younger_than=30&sort=country:${dir}&page=3&size=50`);
        expect(res.statusCode).toBe(200);
        pages.push({ dir, ids: res.json<{ id: number }[]>().map((u) => u.id) });
      }
    });
    // A country's page filtered by the other countries too would read their ranges, matching nothing.
    expect(statements.length).toBeGreaterThan(0);
    for (const { text, plan } of statements) {
      expect(text).not.toMatch(/union all/);
      expect(text.match(/"country_fold" (=|in)/g), text).toHaveLength(1);
      // A country's range of an order index in id order, or its matches (a status, an age range) from
      // the index that holds status and age, sorted by id there (a few, no row visited).
      expect(plan, text).not.toMatch(/SCAN users/);
      if (!/COVERING INDEX users_country_status_age/.test(plan)) expect(plan, text).not.toMatch(/USE TEMP B-TREE/);
    }
    for (const { dir, ids } of pages) {
      const expected = await sql<{ id: number }>`select id from users
        where country_fold in ('nepal', 'oman', 'fiji') and status = 'active' and age < 30
        order by country_key ${sql.raw(dir)}, id limit 50 offset 100`.execute(ctx.app.db);
      expect(ids, dir).toHaveLength(50);
      expect(ids, dir).toEqual(expected.rows.map((r) => r.id));
    }
  });
});

interface PgPlanNode {
  'Node Type': string;
  'Index Cond'?: string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Plan Rows': number;
  'Sort Key'?: string[];
  Plans?: PgPlanNode[];
}

function* nodes(node: PgPlanNode): Generator<PgPlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodes(child);
}

/** The first column (or expression) of index `name` of the current schema. */
async function leadingColumn(name: string): Promise<string> {
  const { rows } = await sql<{ column: string }>`
    select pg_get_indexdef(c.oid, 1, true) as column from pg_class c
    where c.relname = ${name} and c.relnamespace = current_schema()::regnamespace`.execute(ctx.app.db);
  return rows[0]?.column ?? '';
}

/** The users page statements the lists ran since `run()` began, each with its plan as run. */
async function pgPageStatements(
  run: () => Promise<void>,
  { pricedOut, table = 'users' }: { pricedOut: boolean; table?: string },
): Promise<{ text: string; plan: PgPlanNode }[]> {
  const db = ctx.app.db;
  const before = new Set(shapeStatements(db).map((s) => s.sql));
  await run();
  return db.transaction().execute(async (trx) => {
    if (pricedOut)
      for (const setting of ['enable_sort', 'enable_seqscan', 'enable_bitmapscan']) await sql`select set_config(${setting}, 'off', true)`.execute(trx);
    const out: { text: string; plan: PgPlanNode }[] = [];
    for (const { sql: text, parameters } of shapeStatements(db)) {
      if (before.has(text) || !text.includes(`from "${table}"`) || !/order by/.test(text)) continue;
      const { rows } = await trx.executeQuery<{ 'QUERY PLAN': { Plan: PgPlanNode }[] }>(CompiledQuery.raw(`explain (format json) ${text}`, [...parameters]));
      out.push({ text, plan: rows[0]!['QUERY PLAN'][0]!.Plan });
    }
    return out;
  });
}

describe.runIf(backend === 'postgres')('users list plans (PostgreSQL)', () => {
  it('reads every sortable field and direction through an index in its order under a broad filter, pages 1 and 3, sorting no more than a page', async () => {
    const statements = await pgPageStatements(
      async () => {
        for (const field of SORTABLE) {
          for (const dir of ['asc', 'desc']) {
            for (const page of [1, 3]) {
              const res = await api.get(`/users?older_than=5&sort_by=${field}&order=${dir}&page=${page}&size=20`);
              expect(res.statusCode).toBe(200);
              expect(res.json()).toHaveLength(20);
            }
          }
        }
      },
      { pricedOut: true },
    );
    expect(statements.length).toBeGreaterThanOrEqual(SORTABLE.length * 2);
    for (const { text, plan } of statements) {
      const all = [...nodes(plan)];
      const described = JSON.stringify(plan);
      expect(
        all.filter((n) => n['Relation Name'] === 'users' && n['Node Type'] === 'Seq Scan'),
        `${text}\n${described}`,
      ).toEqual([]);
      // A page of 20 at page 3 is at most 60 rows before the cut: a sort of more sorts the filtered set.
      // An incremental sort sorts each run of ties on the first key (thousands of users share a first name).
      expect(
        all.filter((n) => (n['Node Type'] === 'Sort' && n['Plan Rows'] > 100) || n['Node Type'] === 'Incremental Sort'),
        `${text}\n${described}`,
      ).toEqual([]);
      expect(
        all.some((n) => n['Relation Name'] === 'users' && /Index/.test(n['Node Type'])),
        `${text}\n${described}`,
      ).toBe(true);
    }
  });

  it('finds the rows through an index led by a filtered column, never scanning the table, when the filter is narrow (its own costs)', async () => {
    const statements = await pgPageStatements(
      async () => {
        for (const field of SORTABLE.filter((f) => f !== 'country')) {
          const res = await api.get(`/users?lives_in=nepal&older_than=80&sort_by=${field}&order=desc&page=2&size=10`);
          expect(res.statusCode).toBe(200);
        }
      },
      { pricedOut: false },
    );
    expect(statements.length).toBeGreaterThan(0);
    for (const { text, plan } of statements) {
      const all = [...nodes(plan)];
      expect(
        all.filter((n) => n['Relation Name'] === 'users' && n['Node Type'] === 'Seq Scan'),
        `${text}\n${JSON.stringify(plan)}`,
      ).toEqual([]);
      // Searched: entered through an index led by a filtered column, the country (a condition on a
      // later column of an index walks all of it). Sorted by id, PostgreSQL may instead walk the primary
      // key in id order, checking both filters on each row: no index holds the age since migration
      // 20261127T0100, so the country's index in id order visits each entry's row too, and at its costs
      // rows in their physical order cost less than the same matches fetched at random.
      const used = all.flatMap((n) => (n['Index Name'] ? [n['Index Name']] : []));
      const leading = await Promise.all(used.map(leadingColumn));
      const byId = /order by "id" (asc|desc) limit/.test(text);
      expect(
        leading.filter((column) => /\bcountry_fold\b/.test(column) || (byId && column === 'id')),
        `${text}\n${JSON.stringify(plan)}`,
      ).not.toEqual([]);
    }
  });

  it('walks a country in id order from the index alone (it carries the column it folds), a deep page too', async () => {
    // The visibility map, which an index-only scan needs to skip the table (seed and import refresh it).
    await sql`vacuum analyze users`.execute(ctx.app.db);
    const statements = await pgPageStatements(
      async () => {
        // A deep page first: no page boundaries are known yet, so it is read through the offset. Then
        // page 2, whose end is remembered, and page 14, which seeks from there past 220 matches.
        for (const page of [15, 2, 14]) {
          const res = await api.get(`/users?lives_in=nepal&sort_by=id&order=desc&page=${page}&size=20`);
          expect(res.statusCode).toBe(200);
          const expected = await sql<{
            id: number;
          }>`select id from users where country_fold = 'nepal' order by id desc limit 20 offset ${(page - 1) * 20}`.execute(ctx.app.db);
          expect(res.json<{ id: number }[]>().map((u) => u.id)).toEqual(expected.rows.map((r) => r.id));
        }
      },
      { pricedOut: true },
    );
    expect(statements.filter(({ text }) => / union all |"id" < \$/.test(text)).length, 'the seek from a boundary').toBe(1);
    for (const { text, plan } of statements) {
      const all = [...nodes(plan)];
      // The page's ids from the index alone; only the page's rows are read from the table (by id).
      expect(
        all.some((n) => n['Relation Name'] === 'users' && n['Node Type'] === 'Index Only Scan'),
        `${text}\n${JSON.stringify(plan)}`,
      ).toBe(true);
      expect(
        all.filter((n) => n['Relation Name'] === 'users' && n['Node Type'] !== 'Index Only Scan' && n['Index Name'] !== 'users_pkey'),
        `${text}\n${JSON.stringify(plan)}`,
      ).toEqual([]);
    }
  });

  it('reads a few countries sorted by id or a name as one index range per country, merged in order (Merge Append), sorting nothing', async () => {
    const countries = ['Chile', 'japan', 'ITALY'];
    const sorts = ['sort_by=id&order=desc', 'sort=first_name:asc', 'sort=last_name:desc,id:desc', 'sort=last_name:asc,id:desc'];
    const statements = await pgPageStatements(
      async () => {
        for (const sort of sorts) {
          const res = await api.get(`/users?lives_in=[${countries.join(',')}]&older_than=10&${sort}&page=7&size=20`);
          expect(res.statusCode).toBe(200);
          const [field, dir] = sort.startsWith('sort_by') ? ['id', 'desc'] : sort.slice('sort='.length).split(',')[0]!.split(':');
          const key = orderOf(field!);
          const tie = sort.endsWith('id:desc') ? sql`desc` : sql`asc`;
          const expected = await sql<{ id: number }>`select id from users
            where country_fold in (${sql.join(countries.map((c) => c.toLowerCase()))}) and age > 10
            order by ${key} ${sql.raw(dir!)}, id ${tie} limit 20 offset 120`.execute(ctx.app.db);
          expect(
            res.json<{ id: number }[]>().map((u) => u.id),
            sort,
          ).toEqual(expected.rows.map((r) => r.id));
        }
      },
      { pricedOut: true },
    );
    const merged = statements.filter(({ text }) => / union all /.test(text));
    expect(merged).toHaveLength(sorts.length);
    for (const { text, plan } of merged) {
      const all = [...nodes(plan)];
      const described = `${text}\n${JSON.stringify(plan)}`;
      expect(
        all.filter((n) => n['Node Type'] === 'Merge Append'),
        described,
      ).toHaveLength(1);
      // The only sort is the page's own rows (at most 21), after the cut.
      expect(
        all.filter((n) => (n['Node Type'] === 'Sort' && n['Plan Rows'] > 21) || n['Node Type'] === 'Incremental Sort'),
        described,
      ).toEqual([]);
      // Each arm an index walk in the sort's order: the country's index in a name's order, or in id
      // order the country's index or the primary key. Not index-only since migration 20261127T0100:
      // the age (older_than) is checked on each row, which no index holds.
      const arms = all.filter((n) => n['Relation Name'] === 'users' && n['Index Name'] !== 'users_pkey');
      expect(
        arms.filter((n) => n['Node Type'] !== 'Index Scan' || !/^users_country_/.test(n['Index Name'] ?? '')),
        described,
      ).toEqual([]);
      expect(
        all.filter((n) => n['Relation Name'] === 'users' && !/^Index (Only )?Scan$/.test(n['Node Type'])),
        described,
      ).toEqual([]);
    }
  });

  it('reads a name then country or status as one arm per value, merged in order (Merge Append), sorting no name group of the table', async () => {
    // Any list first: the arms are the values of the summary the pool holds.
    expect((await api.get('/users?size=1')).statusCode).toBe(200);
    const sorts = ['last_name:asc,country:asc', 'first_name:desc,country:desc', 'last_name:desc,status:asc'];
    const statements = await pgPageStatements(
      async () => {
        for (const sort of sorts) {
          const res = await api.get(`/users?older_than=10&sort=${sort}&page=4&size=20`);
          expect(res.statusCode).toBe(200);
          const [[name, nameDir], [other, otherDir]] = sort.split(',').map((k) => k.split(':')) as [[string, string], [string, string]];
          const expected = await sql<{ id: number }>`select id from users where age > 10
            order by ${orderOf(name)} ${sql.raw(nameDir)}, ${orderOf(other)} ${sql.raw(otherDir)}, id
            limit 20 offset 60`.execute(ctx.app.db);
          expect(
            res.json<{ id: number }[]>().map((u) => u.id),
            sort,
          ).toEqual(expected.rows.map((r) => r.id));
        }
      },
      { pricedOut: false },
    );
    const merged = statements.filter(({ text }) => / union all /.test(text));
    expect(merged, statements.map((s) => s.text).join('\n')).toHaveLength(sorts.length);
    for (const { text, plan } of merged) {
      const described = `${text}\n${JSON.stringify(plan)}`;
      const appends = [...nodes(plan)].filter((n) => n['Node Type'] === 'Merge Append');
      expect(appends, described).toHaveLength(1);
      // Below the merge: each arm cut at the page's reach, read from an index in order, sorting nothing.
      const below = [...nodes(appends[0]!)];
      expect(
        below.filter((n) => n['Node Type'] === 'Sort' || n['Node Type'] === 'Incremental Sort' || n['Node Type'] === 'Seq Scan'),
        described,
      ).toEqual([]);
      // Above it PostgreSQL may order the merged rows by the second key within each name (an
      // Incremental Sort of what the arms reached, each arm's value being one); no Sort of more than a page.
      expect(
        [...nodes(plan)].filter((n) => n['Node Type'] === 'Sort' && n['Plan Rows'] > 21),
        described,
      ).toEqual([]);
    }
  });

  it('seeks a sort of two keys from a remembered boundary only when it is near: PostgreSQL sorts what the arms read', async () => {
    const pages = async (list: number[]) =>
      pgPageStatements(
        async () => {
          for (const page of list) {
            const res = await api.get(`/users?status=active&sort=last_name:asc&page=${page}&size=20`);
            expect(res.statusCode).toBe(200);
            const expected = await sql<{ id: number }>`select id from users where status = 'active'
              order by last_name_key, id limit 20 offset ${(page - 1) * 20}`.execute(ctx.app.db);
            expect(res.json<{ id: number }[]>().map((u) => u.id)).toEqual(expected.rows.map((r) => r.id));
          }
        },
        { pricedOut: false },
      );
    const seeks = (statements: { text: string }[]) => statements.filter(({ text }) => / union all /.test(text));
    // Page 60 is 1,140 matches past page 2's end: sorting them costs more than walking the 40 before.
    const far = await pages([2, 60]);
    expect(far.length).toBeGreaterThan(0);
    expect(seeks(far)).toEqual([]);
    // Page 61 starts where page 60 ended: the seek reads the page and nothing before it.
    expect(seeks(await pages([61]))).toHaveLength(1);
  });
});

/** Every sort of the artists list, each direction, first and a later page. */
async function everyArtistsSort(): Promise<void> {
  for (const field of Object.keys(artistsCollection.sortable)) {
    for (const dir of ['asc', 'desc']) {
      for (const page of [1, 3]) {
        const res = await api.get(`/artists?sort_by=${field}&order=${dir}&page=${page}&size=20`);
        expect(res.statusCode).toBe(200);
        expect(res.json()).toHaveLength(20);
      }
    }
  }
}

describe('artists list plans', () => {
  it.runIf(backend === 'sqlite')('reads every sort of the artists list in index order, sorting nothing (SQLite)', async () => {
    const statements = await pageStatements(everyArtistsSort, 'artists');
    expect(statements.length).toBeGreaterThanOrEqual(Object.keys(artistsCollection.sortable).length * 2);
    for (const { text, plan } of statements) expect(plan, text).not.toMatch(/USE TEMP B-TREE/);
  });

  it.runIf(backend === 'sqlite')('searches the name index under a name prefix, in every sort, never scanning the table (SQLite)', async () => {
    const statements = await pageStatements(async () => {
      for (const field of Object.keys(artistsCollection.sortable)) {
        const res = await api.get(`/artists?name_starts_with=alpha%2012&sort_by=${field}&order=desc&page=1&size=5`);
        expect(res.statusCode).toBe(200);
        expect(res.json()).toHaveLength(5);
      }
    }, 'artists');
    expect(statements.length).toBeGreaterThan(0);
    for (const { text, plan } of statements) {
      expect(plan, text).toMatch(/SEARCH artists USING (COVERING )?INDEX artists_name(_desc)?_idx/);
      expect(plan, text).not.toMatch(/SCAN artists/);
    }
  });

  it.runIf(backend === 'postgres')('reads every sort of the artists list through an index in its order (PostgreSQL, sorts priced out)', async () => {
    const statements = await pgPageStatements(everyArtistsSort, { pricedOut: true, table: 'artists' });
    expect(statements.length).toBeGreaterThanOrEqual(Object.keys(artistsCollection.sortable).length * 2);
    for (const { text, plan } of statements) {
      const all = [...nodes(plan)];
      const described = `${text}\n${JSON.stringify(plan)}`;
      expect(
        all.filter((n) => n['Relation Name'] === 'artists' && n['Node Type'] === 'Seq Scan'),
        described,
      ).toEqual([]);
      expect(
        all.filter((n) => (n['Node Type'] === 'Sort' && n['Plan Rows'] > 100) || n['Node Type'] === 'Incremental Sort'),
        described,
      ).toEqual([]);
    }
  });
});

describe('users pages far from the start', () => {
  /** The users statements with an ORDER BY whose shapes were first compiled during `run()`. */
  async function newPageTexts(run: () => Promise<void>): Promise<string[]> {
    const db = ctx.app.db;
    const before = new Set(shapeStatements(db).map((s) => s.sql));
    await run();
    return shapeStatements(db)
      .map((s) => s.sql)
      .filter((text) => !before.has(text) && text.includes('from "users"') && /order by/.test(text));
  }
  const byFirstName = (dir: 'asc' | 'desc') => new RegExp(`order by "first_name_key" ${dir}`);
  // Kenya's 534 users younger than 80, by first name descending: the summary gives the total first.
  const list = 'lives_in=kenya&younger_than=80&sort=first_name:desc';
  const oracle = (offset: number) =>
    sql<{ id: number }>`select id from users where country_fold = 'kenya' and age < 80
      order by first_name_key desc, id asc limit 20 offset ${offset}`.execute(ctx.app.db);

  it('reads a page in the back half from the end: the same rows, by a statement in the opposite order', async () => {
    const { rows: counted } = await sql<{ n: number }>`select count(*) as n from users where country_fold = 'kenya' and age < 80`.execute(ctx.app.db);
    expect(Number(counted[0]!.n)).toBe(534);
    // Any list first, so that PostgreSQL holds the summary its choice is made from.
    expect((await api.get('/users?size=1')).statusCode).toBe(200);
    // Page 25 of 20 starts 480 rows in: 54 rows from the end.
    const texts = await newPageTexts(async () => {
      const res = await api.get(`/users?${list}&page=25&size=20`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-total-count']).toBe('534');
      expect(res.json<{ id: number }[]>().map((u) => u.id)).toEqual((await oracle(480)).rows.map((r) => r.id));
    });
    expect(texts.length, texts.join('\n')).toBeGreaterThan(0);
    expect(
      texts.filter((t) => byFirstName('desc').test(t)),
      texts.join('\n'),
    ).toEqual([]);
    expect(texts.filter((t) => byFirstName('asc').test(t)).length, texts.join('\n')).toBeGreaterThan(0);
    // The last page (14 rows), too.
    const last = await api.get(`/users?${list}&page=27&size=20`);
    expect(last.json<{ id: number }[]>().map((u) => u.id)).toEqual((await oracle(520)).rows.map((r) => r.id));
  });

  it('reads a page as of the summary held before a write only when no write came in between', async () => {
    const byAge = 'lives_in=kenya&younger_than=80&sort=age:asc,first_name:desc';
    const ids = (res: { json: <T>() => T }) => res.json<{ id: number }[]>().map((u) => u.id);
    const created: number[] = [];
    // One more of Kenya's users younger than 80, aged 30 and first in first-name descending order:
    // the later rows of both lists move one on. Each read below is the first list after a write.
    const kenyan = async (firstName: string) => {
      const res = await api.post('/users', {
        first_name: firstName,
        last_name: 'Z',
        email: `${firstName}-kenya@example.com`,
        age: 30,
        status: 'active',
        country: 'Kenya',
      });
      expect(res.statusCode).toBe(201);
      created.push(res.json<{ id: number }>().id);
    };
    try {
      // The summary held now (on PostgreSQL, per pool: read again when a list finds the version moved).
      expect((await api.get(`/users?${list}&page=1&size=1`)).headers['x-total-count']).toBe('534');
      await kenyan('Zz');
      // A page in the back half, read from the end with the total.
      const back = await api.get(`/users?${list}&page=25&size=20`);
      expect(back.headers['x-total-count']).toBe('535');
      expect(ids(back)).toEqual((await oracle(480)).rows.map((r) => r.id));
      // A sort led by a summary column, read one age at a time from each age's count. Three pages with no
      // write in between first: on PostgreSQL, reading as of the summary held is trusted again after them.
      const byAgeOracle = async (offset: number) =>
        (
          await sql<{ id: number }>`select id from users where country_fold = 'kenya' and age < 80
            order by age, first_name_key desc, id limit 20 offset ${offset}`.execute(ctx.app.db)
        ).rows.map((r) => r.id);
      for (const page of [13, 14, 15]) expect(ids(await api.get(`/users?${byAge}&page=${page}&size=20`))).toEqual(await byAgeOracle((page - 1) * 20));
      await kenyan('Zy');
      // The new users' age comes before this page.
      const ages = await api.get(`/users?${byAge}&page=16&size=20`);
      expect(ages.headers['x-total-count']).toBe('536');
      expect(ids(ages)).toEqual(await byAgeOracle(300));
      // A name then country, one arm per country the summary held: a user in a country it did not hold yet.
      for (const page of [10, 11, 12]) expect(ids(await api.get(`/users?${byAge}&page=${page}&size=20`))).toEqual(await byAgeOracle((page - 1) * 20));
      const tongan = await api.post('/users', {
        first_name: 'Ana',
        last_name: 'Aaa',
        email: 'aaa-tonga@example.com',
        age: 30,
        status: 'active',
        country: 'Tonga',
      });
      expect(tongan.statusCode).toBe(201);
      created.push(tongan.json<{ id: number }>().id);
      const byName = await api.get('/users?older_than=10&sort=last_name:asc,country:asc&page=1&size=20');
      const byNameOracle = await sql<{ id: number }>`select id from users where age > 10
        order by last_name_key, country_key, id limit 20`.execute(ctx.app.db);
      expect(ids(byName)[0]).toBe(tongan.json<{ id: number }>().id);
      expect(ids(byName)).toEqual(byNameOracle.rows.map((r) => r.id));
    } finally {
      for (const id of created) expect((await api.delete(`/users/${id}`)).statusCode).toBe(204);
    }
  });

  it('answers a page past the end from the total alone, reading no page', async () => {
    expect((await api.get('/users?size=1')).statusCode).toBe(200);
    const texts = await newPageTexts(async () => {
      const res = await api.get(`/users?lives_in=fiji&older_than=3&sort=first_name:asc&page=40&size=20`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual([]);
      expect(res.headers['x-total-count']).toBe(
        String(Number((await sql<{ n: number }>`select count(*) as n from users where country_fold = 'fiji' and age > 3`.execute(ctx.app.db)).rows[0]!.n)),
      );
    });
    expect(texts).toEqual([]);
  });
});
