import { CompiledQuery, sql, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type SQLite from 'better-sqlite3';
import { directSqlite } from '../db/precompiled.js';
import type { Database } from '../db/database.js';
import { asciiLower } from '../db/sql.js';
import { cachedTotal, dataStamp } from './count-cache.js';
import type { Condition } from './request.js';
import { applyToSelect, applyWhere, orderKeys, pageKeysQuery, totalFromPage, type ListPlan } from './sql.js';

// Step 4, fast: a list query is built and compiled by Kysely once per *shape* (which base query,
// which filters with how many values, which sort), then reused with the new values of each request.
// Building and compiling costs tens of microseconds per request, a prepared statement a few.
//
// The values a shape binds are computed here, in the order sql.ts puts them into the SQL: the base
// query's, each filter's, then LIMIT and OFFSET. The first time a shape is seen, that list is checked
// against the parameters Kysely compiled; a shape where they differ is never cached (it is built
// per request, as before), so a mistake here costs speed, never a wrong answer.
//
// Deep pages: OFFSET n walks n index entries (about 0.1 us each, so page 4000 of 20 costs
// milliseconds). On SQLite, where a data stamp says cheaply that nothing changed, the sort-key
// values of page boundaries are remembered per query (filters and sort with their values): a later
// request for an offset at or past a remembered boundary starts there with a keyset condition and
// walks only the difference. Every page served remembers where it starts and where the next one
// does, so repeated pages and forward paging (Link: next) both seek. page/offset stay exact: the
// boundaries are valid only for the stamp they were read under, and any write anywhere changes it.

/** What a list reads from: the base query (table, scope such as album_id) and the values it binds. */
export interface ListSource<DB, TB extends keyof DB, O> {
  /** Names the base query: two sources with one key must build the same SQL. */
  key: string;
  params: readonly unknown[];
  /** The base query with its select list: the page. */
  rows(): SelectQueryBuilder<DB, TB, O>;
  /** The base query without a select list: the count. */
  base(): SelectQueryBuilder<DB, TB, object>;
}

/** The parameters one filter binds, as sql.ts's condition() binds them. */
function filterParams(c: Condition): unknown[] {
  const values = c.values;
  if (c.def.op !== 'eq') return [values[0]];
  if (c.def.caseInsensitive) return values.map((v) => asciiLower(String(v)));
  if (c.def.lowerIndexed && values.length === 1) return [asciiLower(String(values[0])), values[0]];
  return [...values];
}

function shapeOf(plan: ListPlan): string {
  const filters = plan.filters.map((c) => `${c.def.column}:${c.def.op}:${c.values.length}`).join(',');
  const sort = plan.request.sort.map((k) => `${k.field}:${k.direction}`).join(',');
  return `${filters}|${sort}`;
}

const MAX_SHAPES = 1000;
/** SQL text by shape key, per dialect (adapter class); null: a shape that is not reused. */
const textsByAdapter = new WeakMap<object, Map<string, string | null>>();

function textsFor(db: Kysely<unknown>): Map<string, string | null> {
  const adapter = db.getExecutor().adapter.constructor;
  let texts = textsByAdapter.get(adapter);
  if (!texts) textsByAdapter.set(adapter, (texts = new Map()));
  return texts;
}

const sameValues = (a: readonly unknown[], b: readonly unknown[]) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));

/** The SQL text for `key`, compiling `build()` on first use; undefined when the shape is not reusable. */
function shapeText(db: Kysely<unknown>, key: string, params: unknown[], build: () => CompiledQuery): { text?: string; compiled?: CompiledQuery } {
  const texts = textsFor(db);
  const known = texts.get(key);
  if (known) return { text: known };
  const compiled = build();
  if (known === undefined) {
    if (texts.size >= MAX_SHAPES) texts.clear();
    texts.set(key, sameValues(compiled.parameters, params) ? compiled.sql : null);
  }
  return { compiled };
}

const statementsByHandle = new WeakMap<SQLite.Database, Map<string, SQLite.Statement>>();

function statement(handle: SQLite.Database, text: string): SQLite.Statement {
  let statements = statementsByHandle.get(handle);
  if (!statements) statementsByHandle.set(handle, (statements = new Map()));
  let stmt = statements.get(text);
  if (!stmt) {
    if (statements.size >= MAX_SHAPES) statements.clear();
    stmt = handle.prepare(text);
    statements.set(text, stmt);
  }
  return stmt;
}

async function run<R>(db: Kysely<unknown>, text: string, params: unknown[]): Promise<R[]> {
  const handle = directSqlite(db as unknown as Kysely<Database>);
  if (handle) return statement(handle, text).all(params) as R[];
  return (await db.executeQuery(CompiledQuery.raw(text, params))).rows as R[];
}

interface Boundaries {
  stamp: string;
  /** offset -> sort-key values of the row just before it. */
  at: Map<number, unknown[]>;
}

const MAX_QUERIES = 2000;
const MAX_BOUNDARIES = 64;
const boundariesByDb = new WeakMap<object, Map<string, Boundaries>>();

function boundariesFor(db: object, query: string, stamp: string): Boundaries {
  let all = boundariesByDb.get(db);
  if (!all) boundariesByDb.set(db, (all = new Map()));
  let entry = all.get(query);
  if (!entry || entry.stamp !== stamp) {
    if (all.size >= MAX_QUERIES) all.delete(all.keys().next().value as string);
    entry = { stamp, at: new Map() };
    all.set(query, entry);
  }
  return entry;
}

/** The nearest remembered boundary at or before `offset` (0 = the start, which needs none). */
function nearest(boundaries: Boundaries, offset: number): number {
  let best = 0;
  for (const at of boundaries.at.keys()) if (at <= offset && at > best) best = at;
  return best;
}

function remember(boundaries: Boundaries, offset: number, row: Record<string, unknown>, keyCount: number): void {
  if (offset <= 0 || boundaries.at.has(offset)) return;
  if (boundaries.at.size >= MAX_BOUNDARIES) boundaries.at.delete(boundaries.at.keys().next().value as number);
  boundaries.at.set(offset, Array.from({ length: keyCount }, (_, i) => row[`k${i}`]));
}

/**
 * The page rows. At offset 0, or where no data stamp exists (PostgreSQL), one query. Past the
 * first page on SQLite: first the page's ids from the index alone (seeking from a remembered
 * boundary where there is one), then those rows by id: OFFSET then skips index entries, never rows.
 */
async function pageRows<DB, TB extends keyof DB, O>(
  db: Kysely<DB>,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
  shape: string,
  whereParams: unknown[],
): Promise<O[]> {
  const untyped = db as unknown as Kysely<unknown>;
  const { limit, offset } = plan.request.page;
  const stamp = offset > 0 && directSqlite(db as unknown as Kysely<Database>) ? await dataStamp(db) : undefined;
  if (stamp === undefined) {
    const params = [...whereParams, limit, offset];
    const page = shapeText(untyped, `${source.key}|page|${shape}`, params, () => applyToSelect(source.rows(), plan).compile());
    return page.text !== undefined ? run<O>(untyped, page.text, params) : ((await db.executeQuery(page.compiled!)).rows as O[]);
  }
  const keys = orderKeys(plan);
  const boundaries = boundariesFor(db, `${source.key}|${shape}\u0000${JSON.stringify(whereParams)}`, stamp);
  const from = nearest(boundaries, offset);
  const after = from > 0 ? boundaries.at.get(from)! : undefined;
  // Read one entry before the page too (when there is one past `from`): its keys are the page's own boundary.
  const lead = offset > from ? 1 : 0;
  const window = { limit: limit + lead, offset: offset - from - lead };
  const params = after
    ? [...keys.flatMap((_, i) => [...whereParams, ...after.slice(0, keys.length - i), window.limit + window.offset]), window.limit, window.offset]
    : [...whereParams, window.limit, window.offset];
  const key = `${source.key}|ids${after ? '-seek' : ''}|${shape}`;
  const idsQuery = shapeText(untyped, key, params, () => pageKeysQuery(source.base, plan, after, window).compile(untyped));
  const handle = directSqlite(db as unknown as Kysely<Database>);
  if (!handle) {
    // Inside a transaction open on the connection: one query through Kysely, as on the first page.
    return (await db.executeQuery(applyToSelect(source.rows(), plan).compile())).rows as O[];
  }
  // Both statements run synchronously, back to back: no other request's write can come between them.
  const entries = (idsQuery.text !== undefined ? statement(handle, idsQuery.text).all(params) : statement(handle, idsQuery.compiled!.sql).all([...idsQuery.compiled!.parameters])) as Record<string, unknown>[];
  if (lead && entries.length > 0) remember(boundaries, offset, entries[0]!, keys.length);
  const page = lead ? entries.slice(1) : entries;
  if (page.length === limit) remember(boundaries, offset + limit, page[page.length - 1]!, keys.length);
  if (page.length === 0) return [];

  const ids = page.map((e) => e.id);
  const byIdsParams = [...source.params, JSON.stringify(ids)];
  const byIds = shapeText(untyped, `${source.key}|by-ids`, byIdsParams, () =>
    source.rows().where(sql<SqlBool>`${sql.ref('id')} in (select value from json_each(${JSON.stringify(ids)}))`).compile(),
  );
  const rows = (byIds.text !== undefined ? statement(handle, byIds.text).all(byIdsParams) : statement(handle, byIds.compiled!.sql).all([...byIds.compiled!.parameters])) as O[];
  const byId = new Map(rows.map((r) => [(r as { id: unknown }).id, r]));
  return ids.map((id) => byId.get(id)!);
}

/** One page of a collection and the total its filters select (exact; cached on SQLite while nothing changes). */
export async function listPage<DB, TB extends keyof DB, O>(
  db: Kysely<DB>,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
): Promise<{ rows: O[]; total: number }> {
  const untyped = db as unknown as Kysely<unknown>;
  const shape = shapeOf(plan);
  const whereParams = [...source.params, ...plan.filters.flatMap(filterParams)];
  const rows = await pageRows(db, source, plan, shape, whereParams);

  const known = totalFromPage(plan, rows.length);
  if (known !== undefined) return { rows, total: known };

  const counting = shapeText(untyped, `${source.key}|count|${shape}`, whereParams, () =>
    applyWhere(source.base(), plan.filters).select(sql<number | string | bigint>`count(*)`.as('total')).compile(),
  );
  const text = counting.text ?? counting.compiled!.sql;
  const params = counting.text !== undefined ? whereParams : [...counting.compiled!.parameters];
  const total = await cachedTotal(db, `${text}\u0000${JSON.stringify(params)}`, async () => {
    const [row] = await run<{ total?: unknown }>(untyped, text, params);
    return Number(row?.total ?? 0);
  });
  return { rows, total };
}

/** How many list shapes run from cached SQL and how many are built per request (tests: every shape should be reusable). */
export function shapeStats(db: Kysely<unknown>): { reused: number; rebuilt: number } {
  const texts = [...textsFor(db).values()];
  return { reused: texts.filter((t) => t !== null).length, rebuilt: texts.filter((t) => t === null).length };
}
