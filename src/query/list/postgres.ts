import { run, shapeOf, shapeQuery, type Executor } from '../shapes.js';
import {
  boundariesFor,
  boundaryKey,
  lastBoundaries,
  LADDER_MAX,
  LADDER_RUNGS,
  nearestBoundary,
  pageOf,
  rememberRungs,
  seekWindow,
  type Boundaries,
} from '../seek.js';
import { postgresSplit } from '../page-strategy.js';
import { sql, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { postgresTableStampSql } from '../../db/table-stamps.js';
import { param } from '../../db/named-params.js';
import { applyToSelect, applyWhere, armsOf, keyExpr, orderKeys, pastBoundary, windowValues, type ListPlan } from '../sql.js';
import { whereValuesOf, type ListSource, type StampedRows } from './source.js';

// PostgreSQL: its page statement (built from the plan with the SQL every dialect shares, ../sql.ts)
// and its page reads. Reading the version first would cost a round trip, so each page's statement
// returns the version of the listed table it read the rows at (stampedPageQuery).

/**
 * PostgreSQL pages: the page's boundaries are remembered under the version its statement read, as
 * on SQLite, and a later request seeks from the nearest one in a statement whose stamp says whether
 * that boundary still holds. When it does not (a write in between), the answer is thrown away and
 * the page read by offset. A filter of a few values that an index leads (page-strategy.ts
 * postgresSplit) is read one arm per value, merged. Returns the rows and their stamp.
 */
export async function postgresPage<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
  split: number | undefined = postgresSplit(source, plan),
): Promise<StampedRows<O>> {
  const { limit, offset } = plan.request.page;
  const shape = shapeOf(plan);
  const whereValues = whereValuesOf(source, plan);
  const keys = orderKeys(plan);
  if (split !== undefined) {
    // One arm per value, merged (no remembered boundaries).
    const compiled = shapeQuery(db, `${source.key}|stamped-split:${split}|${shape}`, { ...whereValues, ...windowValues(undefined, { limit, offset }) }, () =>
      stampedPageQuery(source, plan, false, split).compile(db),
    );
    const found = await run<Record<string, unknown>>(db, compiled);
    return { rows: rowsOf<O>(stampedEntries(found), keys.length, source), stamp: stampOf(found), ...alongside(source, found) };
  }

  const query = boundaryKey(source, shape, whereValues);
  const read = async (boundaries: Boundaries | undefined) => {
    const { after, lead, window } = seekWindow(boundaries, offset, limit, keys.length);
    const compiled = shapeQuery(db, `${source.key}|stamped${after ? '-seek' : ''}|${shape}`, { ...whereValues, ...windowValues(after, window) }, () =>
      stampedPageQuery(source, plan, after !== undefined).compile(db),
    );
    const found = await run<Record<string, unknown>>(db, compiled);
    return { found, lead, stamp: stampOf(found) };
  };

  let known = lastBoundaries(db, query);
  // A deep page of a catalogue list far from every remembered boundary: first a ladder of them.
  if (source.onePlan && offset - nearestBoundary(known, offset) >= LADDER_FROM) known = await ladder(db, source, plan, shape, whereValues, query, offset);
  let result = await read(known);
  if (known && result.stamp !== known.stamp) result = await read(undefined);
  const boundaries = boundariesFor(db, query, result.stamp);
  const rows = rowsOf<O>(pageOf(boundaries, stampedEntries(result.found), result.lead, offset, limit, keys.length), keys.length, source);
  return { rows, stamp: result.stamp, ...alongside(source, result.found) };
}

/**
 * A page at least this many entries past the nearest remembered boundary of a catalogue list
 * (ListSource.onePlan) has a ladder read first. Walking an index costs PostgreSQL about 0.1 us an
 * entry; deep artists pages, half of the bench's artists lists, walked 2,400 entries on average
 * (issue 32). A ladder walks as far as the page once; then later pages of the list walk at most a
 * rung's spacing.
 */
const LADDER_FROM = 1000;

/**
 * Reads a ladder of boundaries for the list up to `offset` (at most LADDER_RUNGS, evenly spaced),
 * in one statement with the list's version, and remembers them under it (seek.ts): the pages that
 * seek from them then check that version as every seek does. Returns the list's boundaries.
 */
async function ladder<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
  shape: string,
  whereValues: Record<string, unknown>,
  query: string,
  offset: number,
): Promise<Boundaries> {
  const step = Math.ceil(offset / LADDER_RUNGS);
  const compiled = shapeQuery(db, `${source.key}|ladder|${shape}`, { ...whereValues, reach: offset, step }, () => ladderQuery(source, plan).compile(db));
  const found = await run<Record<string, unknown>>(db, compiled);
  const boundaries = boundariesFor(db, query, stampOf(found), LADDER_MAX);
  rememberRungs(boundaries, found, orderKeys(plan).length);
  return boundaries;
}

/**
 * PostgreSQL: every `step`-th entry of the list up to `reach` entries, with its position (`n`) and
 * sort-key values (k0, k1, ...), and the version of the listed table (PAGE_STAMP), in one snapshot;
 * one row of nulls with the stamp when there are none. Reads the keys alone (an index holds them).
 */
function ladderQuery<DB, TB extends keyof DB, O>(source: Pick<ListSource<DB, TB, O>, 'base' | 'table'>, plan: ListPlan): RawBuilder<Record<string, unknown>> {
  const keys = orderKeys(plan);
  let entries = applyWhere(source.base(), plan.filters).select(keys.map((k, i) => keyExpr(k).as(`k${i}`)) as never);
  for (const k of keys) entries = entries.orderBy(keyExpr(k), k.direction);
  const order = sql.join(keys.map((k, i) => sql`${sql.ref(`o.k${i}`)} ${sql.raw(k.direction)}`));
  const rungs = sql`select * from (select o.*, row_number() over (order by ${order}) as n from (${entries.limit(unplanned('reach'))}) as o) as r where r.n % ${param<number>('step')} = 0`;
  return sql`select s.${sql.ref(PAGE_STAMP)}, l.* from (select ${postgresTableStampSql(source.table)} as ${sql.ref(PAGE_STAMP)}) as s left join lateral (${rungs}) as l on true`;
}

/**
 * PostgreSQL, cursor style: the entries (sort-key values k0, k1, ...) of the rows past the cursor,
 * up to `limit + 1`, with the rows of the first `limit`, read in one statement with its version.
 */
export async function postgresCursorEntries<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
): Promise<StampedRows<O> & { entries: Record<string, unknown>[] }> {
  const { limit, after } = plan.request.page;
  const seeking = after !== undefined;
  const values = { ...whereValuesOf(source, plan), ...windowValues(after, { limit: limit + 1, offset: 0 }) };
  const query = shapeQuery(db, `${source.key}|cursor${seeking ? '-seek' : ''}|${shapeOf(plan)}`, values, () =>
    stampedPageQuery(source, plan, seeking).compile(db),
  );
  const found = await run<Record<string, unknown>>(db, query);
  const entries = stampedEntries(found);
  const keyCount = orderKeys(plan).length;
  return { entries, rows: rowsOf<O>(entries.slice(0, limit), keyCount, source), stamp: stampOf(found), ...alongside(source, found) };
}

/** The column carrying the total a stampedPageQuery counted (ListSource.countWithPage). */
const PAGE_TOTAL = 'page_total';
/** The column of a stampedPageQuery carrying column `column` of the list's parent row (ListSource.parent). */
const parentColumn = (column: string) => `parent_${column}`;

/**
 * What a stampedPageQuery read besides the page (its first row carries it, a page with no rows too):
 * the parent row (null when there is none), the total.
 */
function alongside(
  source: { parent?: { columns: readonly string[] }; countWithPage?: true },
  found: Record<string, unknown>[],
): Pick<StampedRows<unknown>, 'parent' | 'total'> {
  const first = found[0];
  const out: Pick<StampedRows<unknown>, 'parent' | 'total'> = {};
  if (source.parent) {
    // Its first column is never null in a row that exists (the album's name).
    const [key] = source.parent.columns;
    out.parent =
      first === undefined || key === undefined || first[parentColumn(key)] == null
        ? null
        : Object.fromEntries(source.parent.columns.map((column) => [column, first[parentColumn(column)]]));
  }
  if (source.countWithPage && first !== undefined) out.total = Number(first[PAGE_TOTAL]);
  return out;
}

/** The version a stampedPageQuery read its rows at. */
function stampOf(found: Record<string, unknown>[]): string {
  return String((found[0]?.[PAGE_STAMP] as string | number | null | undefined) ?? '');
}

/** A stampedPageQuery's rows: none when the page is empty (one row of nulls with the stamp). */
function stampedEntries(found: Record<string, unknown>[]): Record<string, unknown>[] {
  return found[0]?.id === null ? [] : found;
}

/** The columns of a stampedPageQuery that are not the row's: the stamp and the sort-key values (k0, k1, ...), by key count. */
const notRowColumns: Set<string>[] = [];
/** The same, per source with a parent row or a total (ListSource.parent, countWithPage): those columns too. By the source's key (one key, one SQL). */
const notRowColumnsOf = new Map<string, Set<string>[]>();

/** What rowsOf needs of a list's source. */
type RowSource = Pick<ListSource<unknown, never, unknown>, 'key' | 'parent' | 'countWithPage'>;

/**
 * The rows of a stampedPageQuery without the stamp, the sort-key values (and the parent's columns and
 * the total): each a new object with the row's columns only (a copy with them deleted was a
 * dictionary-mode object, slower for every property the answer's serialiser reads). The columns to
 * skip are found once per page, not per row.
 */
function rowsOf<O>(entries: Record<string, unknown>[], keyCount: number, source: RowSource): O[] {
  if (entries.length === 0) return [];
  const skip = notRowColumnsFor(keyCount, source);
  return entries.map((entry) => {
    const row: Record<string, unknown> = {};
    for (const key in entry) if (!skip.has(key)) row[key] = entry[key];
    return row as O;
  });
}

/** The columns of a stampedPageQuery of `source` with `keyCount` sort keys that are not the row's (memoised). */
function notRowColumnsFor(keyCount: number, source: RowSource): Set<string> {
  let sets = notRowColumns;
  if (source.parent || source.countWithPage) {
    sets = notRowColumnsOf.get(source.key) ?? [];
    notRowColumnsOf.set(source.key, sets);
  }
  return (sets[keyCount] ??= new Set([
    PAGE_STAMP,
    ...(source.parent?.columns.map(parentColumn) ?? []),
    ...(source.countWithPage ? [PAGE_TOTAL] : []),
    ...Array.from({ length: keyCount }, (_, i) => `k${i}`),
  ]));
}

/**
 * A window value (`limit`, `offset`, `reach`) as a scalar subquery, which no plan knows the value of
 * (ListSource.onePlan). Bound as the parameter itself, each run's custom plan of an artists page was
 * priced for its own window (25 rows from offset 50) far below the generic plan (a tenth of the
 * table), so PostgreSQL planned every run of the named statement again: 0.3-1.4 ms of planning for a
 * page read in 0.07 ms (10 of 10 runs custom; pg_prepared_statements). Unknown to every plan, custom
 * and generic are priced alike and the generic plan is kept from the sixth run on: the same plan
 * (the sort's index, the page's rows by id), planned once per connection.
 */
function unplanned(name: 'limit' | 'offset' | 'reach'): number {
  return sql<number>`(select ${param<number>(name)}::int8)` as unknown as number;
}

/** The column carrying the table version a stampedPageQuery was read at. */
const PAGE_STAMP = 'page_stamp';

/**
 * PostgreSQL: one page of rows with their sort-key values (k0, k1, ...) and the version of the table
 * the statement read (PAGE_STAMP, db/table-stamps.ts: one snapshot for the whole statement), so the
 * page and the boundaries it shows are known to belong to one state of the table, the state the
 * totals are cached under (count-cache.ts). A page with no rows is one row of nulls with the stamp.
 * With `after`, the arms of pageKeysQuery (ids and keys); PostgreSQL does not promise to run
 * UNION ALL arms in turn, so the union (at most `limit + offset` entries per arm) is ordered by the
 * keys before LIMIT/OFFSET, and only then are the page's rows read. With `split` (page-strategy.ts
 * postgresSplit), one arm per value of that filter instead, each cut to `reach` entries in the whole
 * sort order, which PostgreSQL merges (Merge Append) without sorting. Binds the names pageKeysQuery
 * binds (`reach` too when seeking or split).
 */
function stampedPageQuery<DB, TB extends keyof DB, O>(
  source: Pick<ListSource<DB, TB, O>, 'rows' | 'base' | 'table' | 'onePlan' | 'parent' | 'countWithPage'>,
  plan: ListPlan,
  seeking: boolean,
  split?: number,
): RawBuilder<Record<string, unknown>> {
  const keys = orderKeys(plan);
  const window = source.onePlan ? unplanned : param<number>;
  const expr = (i: number) => keyExpr(keys[i]!);
  const withKeys = () => source.rows().select(keys.map((_, i) => expr(i).as(`k${i}`)) as never) as SelectQueryBuilder<DB, TB, O>;
  const order = (alias: string) => sql.join(keys.map((k, i) => sql`${sql.ref(`${alias}.k${i}`)} ${sql.raw(k.direction)}`));
  const id = sql.ref(`${source.table}.id`);
  /** Selects the id and the keys (an index holds them), ordered by the keys from `from` on, cut to `reach` entries. */
  const keysOnly = (qb: SelectQueryBuilder<DB, TB, object>, from = 0) => {
    let out = qb.select([id.as('id'), ...keys.map((_, j) => expr(j).as(`k${j}`))] as never);
    for (let j = from; j < keys.length; j++) out = out.orderBy(expr(j), keys[j]!.direction);
    return sql`${out.limit(window('reach'))}`;
  };
  const merged = (arms: RawBuilder<unknown>[]) =>
    sql`(select arms.id from (${sql.join(arms, sql` union all `)}) as arms order by ${order('arms')} limit ${window('limit')} offset ${window('offset')})`;
  let ids: RawBuilder<unknown>;
  if (split !== undefined) {
    // One arm per value of filter `split`, each in the whole sort order: a Merge Append.
    ids = merged(armsOf(source.base, plan, split).map((qb) => keysOnly(qb)));
  } else if (!seeking) {
    ids = sql`${applyToSelect(source.base().select(id.as('id')) as SelectQueryBuilder<DB, TB, object>, plan, window)}`;
  } else {
    // Each arm selects the id and the keys only, so that it too is read from an index alone: with
    // whole rows, a boundary 40,000 matches before the page fetched 40,000 rows (96 ms).
    ids = merged(keys.map((_, i) => keysOnly(pastBoundary(applyWhere(source.base(), plan.filters), keys, i), i)).reverse());
  }
  // The page's ids first, then their rows: the ids (and the keys and filters) can be read from an
  // index alone, walking it through the offset, where whole rows would visit the table for every
  // entry walked (or have the planner sort the matches instead); the rows are the page's only. As an
  // array: a generic plan, which does not know the limit, then still fetches the rows by id (with
  // `in (select ...)` it hashed the ids and scanned the table: 182 ms).
  const page = sql`select * from ${withKeys().where(sql<SqlBool>`${id} = any(array(select id from ${ids} as ids))` as never)} as page`;
  // With the list's parent row (ListSource.parent) and its total (countWithPage), in the same snapshot.
  const parent = source.parent
    ? sql`, par.* from (select ${postgresTableStampSql(source.table)} as ${sql.ref(PAGE_STAMP)}) as s left join (${source.parent
        .row()
        .select(source.parent.columns.map((column) => sql.ref(column).as(parentColumn(column))) as never)}) as par on true`
    : sql` from (select ${postgresTableStampSql(source.table)} as ${sql.ref(PAGE_STAMP)}) as s`;
  const total = source.countWithPage
    ? sql`, (${applyWhere(source.base(), plan.filters).select(sql<number>`count(*)`.as('n') as never)}) as ${sql.ref(PAGE_TOTAL)}`
    : sql``;
  return sql`select s.${sql.ref(PAGE_STAMP)}${total}, p.*${parent} left join lateral (${page}) as p on true order by ${order('p')}`;
}
