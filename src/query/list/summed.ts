import { directSqlite } from '../../db/precompiled.js';
import { isPostgres } from '../../db/dialect.js';
import type { VersionedTable } from '../../db/table-stamps.js';
import { filtersShapeOf, run, shapeQuery, type Executor, type Query } from '../shapes.js';
import { postgresHeld, sqliteHeld, totalsOf, type HeldSummary } from '../held-summary.js';
import { prefixSummaryCovers, prefixSummedQuery, summaryCovers, summedQuery, type Summary } from '../summary.js';
import { WALK_VS_SORT, fromTheEnd } from '../page-strategy.js';
import { filterValues, type ListPlan } from '../sql.js';
import { byValue, type ReadPart } from './by-value.js';
import type { ListResult, ListSource } from './source.js';

// Strategy: the exact total first, from a summary that covers the filters (query/summary.ts), then
// the page. A page past the end is then known to be empty without reading it, a page in the back
// half is read from the end, and the dialect's reader chooses how to read the page from the total.

/**
 * Where a list's total comes from without counting rows. `query`: the statement giving the total and
 * the rows of the listed table; `summary`: the summary that covers the filters (held in memory:
 * held-summary.ts); `byValue`: the summary also gives the values of a sort key it counts by
 * (by-value.ts); `walkVsSort`: what walking an order index costs against sorting, per entry
 * (pageRoute): an order index carries the country's fold, not the names, so a name prefix is
 * checked on the row (and status and age: pageRoute lowers it then, from the source's carriedColumns).
 */
export interface Summed {
  readonly query: () => Query;
  readonly byValue: boolean;
  readonly walkVsSort: number;
  readonly summary: Summary | undefined;
}

/** The total and the rows of the listed table. */
export interface Counts {
  total: number;
  allRows: number;
}

/**
 * How the total of the plan's filters comes from a summary; undefined when none covers them. The
 * summaries' rows carry the filtered columns, not a base query's scope: only unscoped lists have one.
 */
export function summedTotal<DB, TB extends keyof DB, O>(db: Executor, source: ListSource<DB, TB, O>, plan: ListPlan): Summed | undefined {
  if (Object.keys(source.values).length > 0) return undefined;
  // The statement sums by the filters alone (whatever the sort), and is built only when the summary
  // is not held (PostgreSQL inside a transaction): usually the held copy answers.
  const filters = filtersShapeOf(plan.filters);
  const values = () => filterValues(plan.filters);
  if (summaryCovers(source.summary, plan.filters)) {
    const summary = source.summary;
    const query = () => shapeQuery(db, `${source.key}|summed|${filters}`, values(), () => summedQuery(summary, plan.filters).compile(db));
    return { query, byValue: true, walkVsSort: WALK_VS_SORT, summary };
  }
  if (prefixSummaryCovers(source.prefixSummary, plan.filters)) {
    const summary = source.prefixSummary;
    const query = () => shapeQuery(db, `${source.key}|prefix-summed|${filters}`, values(), () => prefixSummedQuery(summary, plan.filters).compile(db));
    return { query, byValue: false, walkVsSort: 1, summary: undefined };
  }
  return undefined;
}

/**
 * A summary held in memory at the listed table's current version (held-summary.ts): on SQLite
 * through the direct handle (undefined inside a transaction, whose own writes it would not see), on
 * PostgreSQL per Kysely instance.
 */
export async function heldFor(db: Executor, summary: Summary, table: VersionedTable): Promise<HeldSummary | undefined> {
  if (isPostgres(db)) return postgresHeld(db, summary, table);
  const handle = directSqlite(db);
  return handle ? sqliteHeld(handle, summary, table) : undefined;
}

/** The total a summary gives and the listed table's row count: from the held summary when there is one, else summed in SQL. */
export async function summedCounts(db: Executor, plan: ListPlan, summed: Summed, held: HeldSummary | undefined): Promise<Counts> {
  const totals = held && summed.summary ? totalsOf(held, summed.summary, plan.filters) : undefined;
  if (totals) return totals;
  const [counts] = await run<{ total: unknown; all_rows: unknown }>(db, summed.query());
  return { total: Number(counts?.total ?? 0), allRows: Number(counts?.all_rows ?? 0) };
}

/** How a dialect reads the rows of a page whose exact total is known (and not read one value at a time). */
export type SummedRows<O> = (plan: ListPlan, counts: Counts, held: HeldSummary | undefined) => Promise<O[]>;

/**
 * A page whose total a summary gives: the total, then the rows, one value of the sort's first key at
 * a time when the summary counts by it (by-value.ts), else as the dialect's `rowsOf` reads them.
 */
export async function summedList<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
  summed: Summed,
  rowsOf: SummedRows<O>,
  readPart: ReadPart<O>,
): Promise<ListResult<O>> {
  const held = summed.summary && (await heldFor(db, summed.summary, source.table));
  const counts = await summedCounts(db, plan, summed, held);
  const { total } = counts;
  if (plan.request.page.offset >= total) return { rows: [], total };
  // A page in the back half is read from the end (fromTheEnd): the total is exact at the version read.
  const back = fromTheEnd(plan, total);
  const at = back ?? plan;
  const split = summed.byValue ? await byValue(db, source, at, total, held, readPart) : undefined;
  const rows = split ? split.rows : await rowsOf(at, counts, held);
  return { rows: back ? rows.reverse() : rows, total };
}
