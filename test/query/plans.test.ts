import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { backend } from '../database.js';
import { buildTestApp, client, type Client, type TestContext } from '../helpers.js';
import { directSqlite, preparedTexts } from '../../src/db/precompiled.js';
import { usersCollection } from '../../src/modules/users/users.collection.js';

// Every offered sort of the users list is read from an index in its order (SQLite's EXPLAIN QUERY
// PLAN of the statements the service prepared for the requests below): with a broad filter the page
// walks the sort key's own index (INDEXED BY, query/page-strategy.ts) and never sorts the filtered
// set in a temporary B-tree; with a narrow one it searches a filter index (no full scan) and sorts the
// few matching rows. id order is the table's own (a rowid walk that stops at the page).
// PostgreSQL plans for itself (no hints); its plans are not checked here.

let ctx: TestContext;
let api: Client;
const COUNTRIES = ['Brazil', 'Chile', 'Japan', 'Italy', 'Spain', 'Peru', 'Kenya', 'Nepal', 'Oman', 'Fiji'];
const SORTABLE = Object.keys(usersCollection.sortable);

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.admin);
  if (backend !== 'sqlite') return;
  // 6,000 users in a few statements (the summary's triggers count them as any write would).
  for (let start = 0; start < 6000; start += 500) {
    const rows = Array.from({ length: 500 }, (_, k) => {
      const n = start + k;
      return sql`(${`First${n % 37}`}, ${`Last${n % 41}`}, ${`u${n}@example.com`}, ${n % 90}, ${n % 3 === 0 ? 'inactive' : 'active'}, ${COUNTRIES[n % COUNTRIES.length]!})`;
    });
    await sql`insert into users (first_name, last_name, email, age, status, country) values ${sql.join(rows)}`.execute(ctx.app.db);
  }
  await sql`analyze`.execute(ctx.app.db);
});
afterAll(() => ctx.close());

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

/** The page statements prepared for `run()`'s requests (not the by-id fetch, the summary or the version read). */
async function pageStatements(run: () => Promise<void>): Promise<{ text: string; plan: string }[]> {
  const handle = directSqlite(ctx.app.db)!;
  const before = new Set(preparedTexts(handle));
  await run();
  return plansOf(preparedTexts(handle).filter((t) => !before.has(t) && /from "users"/.test(t) && /order by/.test(t) && !/json_each/.test(t)));
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

  it('searches a filter index, never scans the table, when the filter is narrow', async () => {
    const statements = await pageStatements(async () => {
      for (const field of SORTABLE.filter((f) => f !== 'country')) {
        const res = await api.get(`/users?lives_in=nepal&older_than=80&sort_by=${field}&order=desc&page=3&size=10`);
        expect(res.statusCode).toBe(200);
      }
    });
    expect(statements.length).toBeGreaterThan(0);
    for (const { text, plan } of statements) {
      expect(plan, text).toMatch(/SEARCH users USING (COVERING )?INDEX users_country_idx/);
      expect(plan, text).not.toMatch(/SCAN users/);
    }
  });
});
