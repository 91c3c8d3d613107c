import type { SelectQueryBuilder } from 'kysely';
import type { VersionedTable } from '../../db/table-stamps.js';
import type { FilterIndex, OrderIndexes, PinnedIndex } from '../page-strategy.js';
import type { PrefixSummary, Summary } from '../summary.js';
import { filterValues, type ListPlan } from '../sql.js';

// What every list read is given (the collection's source and the plan) and gives back (ListResult).

/** What a list reads from: the base query (table, scope such as album_id) and the values it binds. */
export interface ListSource<DB, TB extends keyof DB, O> {
  /** Names the base query: two sources with one key must build the same SQL. */
  key: string;
  /** The table listed: its version stamps what is remembered about the list. */
  table: VersionedTable;
  /** The values the base query binds, by the names it gives them with param() (the album of a songs list). */
  values: Readonly<Record<string, unknown>>;
  /** The base query with its select list: the page. */
  rows: () => SelectQueryBuilder<DB, TB, O>;
  /** The base query without a select list: the count. */
  base: () => SelectQueryBuilder<DB, TB, object>;
  /** Where totals come from without counting rows, for the filters it covers (query/summary.ts). */
  summary?: Summary;
  /** Where the total of a lone prefix filter comes from without counting rows (query/summary.ts). */
  prefixSummary?: PrefixSummary;
  /**
   * SQLite: per sort field, the indexes that read the table in that field's order, ascending then
   * descending (ties by id ascending), with the filtered columns in them; null: the table itself
   * (id order). See pageRoute.
   */
  orderIndexes?: OrderIndexes;
  /**
   * SQLite: indexes that find the rows a filter on their first column selects, in order of
   * preference; the one for the first filtered column is used when finding and sorting the matching
   * rows is the cheaper way (pageRoute), so that the planner does not walk an order index instead.
   */
  filterIndexes?: readonly FilterIndex[];
  /** SQLite: indexes led by a filtered column and then in a sort field's order (see pageRoute). */
  pinnedIndexes?: readonly PinnedIndex[];
  /**
   * SQLite: the stored columns every order and pinned index carries, when declared: a filter on any
   * other column is checked on the row for each entry walked (see pageRoute).
   */
  carriedColumns?: readonly string[];
  /**
   * PostgreSQL: one plan serves every page of this list, so its page statements hide the window
   * (limit, offset) from the planner and keep their generic plan instead of being planned again on
   * every run (list/postgres.ts unplanned). Only where every window is well served by the plan made
   * without knowing it: the catalogue (10,000 artists, each sort with its index; an artist's albums,
   * an album's songs). Not users: on a million, a first-name prefix sorted by last name, planned for
   * an unknown window, sorted the prefix's 56,000 matches (26 ms) instead of walking the last-name
   * index to the page (0.6 ms).
   */
  onePlan?: true;
  /**
   * PostgreSQL: the row the list belongs to (an album, for its songs), read in each page's own
   * statement instead of one of its own before it (a round trip per request, issue 32): one row of
   * these columns, or none when it does not exist (the list's answer is then a 404, its rows unused).
   * It binds names of `values`. The page's result carries it (ListResult.parent).
   */
  parent?: { columns: readonly string[]; row: () => SelectQueryBuilder<DB, keyof DB, object> };
  /**
   * PostgreSQL: each page's statement counts the filters' total too (one snapshot with the page), so
   * no count follows a full page. Only where that count is always a few index entries (an album's songs).
   */
  countWithPage?: true;
}

/** A page of a list: its rows, the total the filters select and, cursor style, the cursor of the next page when rows follow. */
export interface ListResult<O> {
  rows: O[];
  total: number;
  next?: string;
  /** With ListSource.parent, when the page's statement read it: its row, or null when there is none. */
  parent?: Record<string, unknown> | null;
}

/** A page's rows and the version of the listed table they were read at. */
export interface StampedRows<O> {
  rows: O[];
  stamp: string;
  /** ListSource.parent's row as the page's statement read it (null: none); undefined when not read. */
  parent?: Record<string, unknown> | null;
  /** ListSource.countWithPage: the total, counted in the page's statement. */
  total?: number;
}

/** The values a list's statements bind: the base query's (the album of a songs list) and the plan's filters'. */
export function whereValuesOf(source: { values: Readonly<Record<string, unknown>> }, plan: ListPlan): Record<string, unknown> {
  return { ...source.values, ...filterValues(plan.filters) };
}

/** The plan with its full-text conditions marked for the backend that runs them (sql.ts writes them in its syntax). */
export function forDialect(plan: ListPlan, postgres: boolean): ListPlan {
  if (!plan.filters.some((c) => c.def.op === 'match')) return plan;
  return { ...plan, filters: plan.filters.map((c) => (c.def.op === 'match' ? { ...c, postgres } : c)) };
}
