import { CompiledQuery } from 'kysely';
import type { ListPlan } from './sql.js';

// How a page is read, decided per request from what is known before reading it (the exact total,
// the filters): which index a SQLite statement reads through, and which sort keys actually order it.

/** Per sort field, the indexes that read a table in that field's order, ascending then descending; null: the table itself (id order). */
export type OrderIndexes = Readonly<Record<string, readonly [asc: string | null, desc: string | null]>>;

/**
 * Walking one entry of an index that holds the filtered columns costs about a twentieth of fetching
 * one matching row and sorting it (measured on a million users: 1M entries walked in ~75 ms, 64k
 * rows found by a filter index and sorted in ~140 ms).
 */
export const WALK_VS_SORT = 20;

/**
 * SQLite: the index to read a page through, chosen from the exact total (known before the page
 * when a summary covers the filters). Reading in sort order walks about (offset + limit) x rows /
 * total index entries and stops; the other way finds all `total` matching rows and sorts them. The
 * planner cannot weigh the two (it does not know how many rows match), and for a broad filter it
 * sorts tens of thousands of rows to return twenty, so the choice is made here and written into
 * the statement (INDEXED BY). `walkVsSort`: WALK_VS_SORT when the index holds the filtered columns;
 * 1 when each entry walked visits its row to check a filter (about the cost of finding a match).
 * Undefined: leave it to the planner.
 */
export function orderIndex(
  source: { orderIndexes?: OrderIndexes; filterIndexes?: readonly FilterIndex[] },
  plan: ListPlan,
  total: number,
  rows: number,
  walkVsSort = WALK_VS_SORT,
): string | null | undefined {
  const first = plan.request.sort[0] ?? { field: 'id', direction: 'asc' };
  const indexes = source.orderIndexes?.[first.field];
  if (!indexes || total === 0) return undefined;
  const filtered = new Set(plan.filters.map((c) => c.def.column));
  const filterIndex = source.filterIndexes?.find((f) => filtered.has(f.column) && (f.also === undefined || filtered.has(f.also)));
  // Entered at the one filtered value, such an index is already in the sort's order: neither a walk
  // past the non-matching rows nor a sort.
  const single = plan.filters.filter((c) => c.def.column === filterIndex?.column).every((c) => c.def.op === 'eq' && c.values.length === 1);
  if (filterIndex?.ordersBy === first.field && plan.request.sort.length <= 1 && single) return filterIndex.index;
  const { limit, offset } = plan.request.page;
  if (((offset + limit) * rows) / total <= walkVsSort * total) return first.direction === 'asc' ? indexes[0] : indexes[1];
  return filterIndex?.index;
}

/** An index that finds the rows a filter on `column` selects. */
export interface FilterIndex {
  column: string;
  index: string;
  /** Chosen only when this column is filtered too (the index holds both before the rest). */
  also?: string;
  /** Entered at one value of `column`, the index lists the rows in this field's order (either direction). */
  ordersBy?: string;
}

/** The statement with its reads of `table` through `index` (null: the table itself, in id order). */
export function throughIndex(query: CompiledQuery, table: string, index: string | null | undefined): CompiledQuery {
  if (index === undefined) return query;
  const from = `from "${table}"`;
  const through = index === null ? `${from} not indexed` : `${from} indexed by "${index}"`;
  return CompiledQuery.raw(query.sql.split(from).join(through), [...query.parameters]);
}

/**
 * The plan without the sort keys a filter fixes to one value (status=active&sort=status:desc,age:asc
 * is ordered by age alone: every row ties on status). Same rows, same order; the index choice then
 * sees the key that actually orders the page.
 */
export function withoutFixedKeys(plan: ListPlan): ListPlan {
  const fixed = (column: string) => plan.filters.some((c) => c.def.op === 'eq' && c.values.length === 1 && c.def.column === column);
  if (!plan.request.sort.some((k) => fixed(k.def.column))) return plan;
  return { ...plan, request: { ...plan.request, sort: plan.request.sort.filter((k) => !fixed(k.def.column)) } };
}
