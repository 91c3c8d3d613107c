import type { CollectionDef } from './collection.js';
import { parseQueryString, queryStringOf } from './parse.js';
import { checkFilterQuery, checkListRequest, type Condition } from './request.js';
import type { ListPlan } from './sql.js';

// The collection query conventions, one pipeline for every collection:
//   raw query string -> pairs (parse.ts) -> typed request checked against the collection (request.ts)
//   -> plan (here: request filters + alias filters, frozen) -> SQL (sql.ts, and per dialect list/sqlite.ts,
//   list/postgres.ts) -> rows, total and next cursor (list/page.ts, per strategy) -> headers (links.ts).

export type { CollectionDef, FilterDef, SortDef } from './collection.js';
export { declared } from './collection.js';
export { declarePrefixSummary, declareSummary } from './summary.js';
export type { Condition, ListRequest } from './request.js';
export type { ListPlan } from './sql.js';
export { applyToSelect, applyWhere, totalFromPage } from './sql.js';
export { listPage } from './list/page.js';
export type { ListResult, ListSource } from './list/source.js';
export type { FilterIndex, OrderIndexes, PinnedIndex } from './page-strategy.js';
export { setListHeaders, linkHeader, type PageFound } from './links.js';
export { pathOf, queryStringOf } from './parse.js';
export { listQuerystring, LIST_HEADERS } from './schema.js';

/**
 * The plan for a list request. `url` is the request URL as sent (its query string is read here);
 * `fixed` are conditions that always apply (an alias's filters), ANDed with the request's own.
 */
export function listQuery(def: CollectionDef, url: string, fixed: readonly Condition[] = []): ListPlan {
  const { params, errors } = parseQueryString(queryStringOf(url));
  const request = checkListRequest(def, params, errors);
  // Frozen, as deep as a strategy could reach: the plan is data, read by every step and changed by none.
  Object.freeze(request.page);
  Object.freeze(request.sort);
  Object.freeze(request.filters);
  return Object.freeze({ request: Object.freeze(request), filters: Object.freeze(canonicalOrder([...fixed, ...request.filters])) });
}

/**
 * The filters in one order whatever order the request (or the alias) gave them in: they are ANDed,
 * so the order changes no answer, and a list's statements are built, compiled and kept once per
 * shape (shapes.ts), which lists the filters in plan order. Four filters could otherwise be
 * written 24 ways: in the benchmark's mix, a third of the shapes looked up were built again,
 * the kept ones having been dropped to make room for the same shapes in other orders.
 */
function canonicalOrder(filters: Condition[]): Condition[] {
  const key = (c: Condition) => `${c.def.column}\u0000${c.def.op}\u0000${c.param}`;
  return filters
    .map((c) => ({ c, k: key(c) }))
    .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0))
    .map(({ c }) => c);
}

/** The filters of a stored query string (an alias), checked as a request would be. */
export function filterQuery(def: CollectionDef, query: string, fieldPrefix = 'query.'): Condition[] {
  const { params, errors } = parseQueryString(query);
  return checkFilterQuery(def, params, errors, fieldPrefix);
}
