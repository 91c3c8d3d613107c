import { CompiledQuery } from 'kysely';
import { sortColumnOf, type ListPlan } from './sql.js';
import type { Condition } from './request.js';
import { binaryOrder } from '../db/sql.js';
import { declared, type FilterDef, type SortDef } from './collection.js';
import { comparedValue, comparisonOf } from './comparison.js';

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

/** How a SQLite page is read: through which index (undefined: the planner's choice; null: the table in id order), and whether as a merge. */
export interface PageRoute {
  index: string | null | undefined;
  /**
   * The filter (its position in plan.filters) whose values the index is entered at one by one, when
   * there are several: the page is then an ordered merge of one index range per value
   * (list/sqlite.ts mergedKeysQuery).
   */
  split?: number;
  /**
   * The index gives the first sort key's order only: each group of rows tying on it is sorted by the
   * other keys (SQLite's temp B-tree for the right part of the ORDER BY), a whole group (a name's
   * thirty thousand users) even for the first page. Its entries are then read as keys only, which the
   * index holds, and only the page's rows fetched (instead of every row of the group).
   */
  sortsGroups?: true;
  /**
   * The filter (its position in plan.filters) on the second sort key whose values are read one arm
   * each (list/sqlite.ts groupSplitKeysQuery), where the index gives the first key's order only.
   */
  groupSplit?: number;
  /**
   * The index holds every filtered and sorted column (a FilterIndex with `holds`): the matches are
   * read and sorted as keys only from its entries, and only the page's rows fetched, a first page too.
   */
  keysOnly?: true;
}

/**
 * Finding and sorting a match from the entries of an index that holds every column compared costs
 * about this much of walking one index entry and checking a filter on its row (on a million users, the
 * 13,528 young Brazilians sorted by first name from users_country_status_age in 10-18 ms; 17,900
 * entries of Brazil's first-name index walked checking status and age on each row in 51 ms).
 */
export const HELD_VS_ROW = 0.4;

/** At most this many values of a second sort key are read one arm each (groupSplit). */
const MAX_GROUP_ARMS = 16;
/**
 * At most this many index entries walked by all the arms together: beyond it, sorting the groups
 * costs less (on a million users, first_name then country: page 1 of 10 as 15 arms, 4,500 entries,
 * 1.6 ms against 4.7 ms sorting the first name's group; page 5 of 100, 112,000 entries, 19 ms
 * against 5 ms).
 */
const MAX_GROUP_WALK = 10_000;

/**
 * A page sorted by a first key (through its index) and then a second key the summary counts by, as
 * one arm per value of the second key (groupSplitKeysQuery): the plan with the equality filter the
 * arms read (last in its filters, the values in the sort's order of that key), or undefined when
 * sorting the first key's groups costs less. `values`: the second key's values the filters select,
 * as the sort compares them (a name field's collation keys), with how many rows have each; `rows`: the table's rows;
 * `walkedPerKept(n)`: the index entries an arm whose value has `n` rows walks per entry it keeps
 * (through the first key's index, checking the value: about rows / n; through an index led by the
 * second key and then in the first key's order, a pinned one: 1).
 */
export function groupSplitPlan(
  plan: ListPlan,
  values: readonly { value: string | number; n: number }[] | undefined,
  rows: number,
  walkedPerKept: (n: number) => number = (n) => rows / n,
): ListPlan | undefined {
  const [, second, ...more] = plan.request.sort;
  if (!second || more.length > 0 || second.field === 'id' || !values) return undefined;
  // The values as the sort compares them (by code point; a name field's collation keys): one arm each.
  const counts = new Map<string | number, number>();
  for (const { value, n } of values) counts.set(value, (counts.get(value) ?? 0) + n);
  if (counts.size === 0 || counts.size > MAX_GROUP_ARMS) return undefined;
  const { limit, offset } = plan.request.page;
  // Arm v keeps at most limit + offset entries.
  const walk = [...counts.values()].reduce((sum, n) => sum + (limit + offset) * walkedPerKept(n), 0);
  if (walk > MAX_GROUP_WALK) return undefined;
  const sorted = [...counts.keys()].sort((a, b) => binaryOrder(a, b) * (second.direction === 'asc' ? 1 : -1));
  const arms: Condition = { param: second.field, def: equalToSortValue(second.def), values: sorted };
  return { ...plan, filters: [...plan.filters, arms] };
}

/** At most this many values of a filter are read as a merge of that many index ranges. */
const MAX_ARMS = 8;

/**
 * SQLite: how to read a page, chosen from exact counts known before it (from the summary that covers
 * the filters). The ways, by the index entries each walks:
 * - the sort field's order index, checking the filters in each entry: about (offset + limit) x
 *   rows / total entries, then it stops;
 * - an index led by a filtered column and then in the sort's order (`pinned`), entered at each of
 *   that filter's values: (offset + limit) x (rows with those values) / total, merged in order;
 * - finding every match through a filter index and sorting them: `total` rows, each about
 *   `walkVsSort` entries' worth.
 * The planner cannot weigh them (it does not know how many rows match), and for a broad filter it
 * sorts tens of thousands of rows to return twenty, so the choice is made here and written into the
 * statement (INDEXED BY). `walkVsSort`: WALK_VS_SORT when the indexes hold the filtered columns;
 * 1 when each entry walked visits its row to check a filter (about the cost of finding a match), as
 * it is whenever a filtered column is not among the source's `carriedColumns` (when it declares them).
 * With no filter index for the filters, finding the matches is a scan of every row (`rows`, not `total`).
 * `rowsWith(c)`: the rows filter `c` alone selects, when known (undefined: no pinned index is weighed).
 */
export function pageRoute(
  source: {
    orderIndexes?: OrderIndexes;
    filterIndexes?: readonly FilterIndex[];
    pinnedIndexes?: readonly PinnedIndex[];
    carriedColumns?: readonly string[];
  },
  plan: ListPlan,
  total: number,
  rows: number,
  walkVsSort = WALK_VS_SORT,
  rowsWith: (c: Condition) => number | undefined = () => undefined,
): PageRoute {
  const [first = { field: 'id', direction: 'asc' as const }, ...rest] = plan.request.sort;
  if (total === 0) return { index: undefined };
  const { limit, offset } = plan.request.page;
  const reach = offset + limit;
  const filtered = new Set(plan.filters.map((c) => comparisonOf(c).column));
  const carried = source.carriedColumns;
  /** A filtered column that no index entry holds: checked on each row an index walk or search visits. */
  const onTheRow = carried !== undefined && [...filtered].some((column) => !carried.includes(column));
  if (onTheRow) walkVsSort = Math.min(walkVsSort, 1);
  const filterIndex = source.filterIndexes?.find((f) => !f.holds && filtered.has(f.column) && (f.also === undefined || filtered.has(f.also)));
  const ways: { cost: number; route: PageRoute }[] = [];
  // Every index in a field's order has its ties by id ascending, so read backward it is in the other
  // direction with ties by id descending: a sort by the field then id descending reads the index of
  // the other direction (backward), and sorts nothing (name:asc,id:desc is users_name_desc backward).
  const tieBreak = tieBreakOf(rest);
  const direction = tieBreak === 'desc' ? (first.direction === 'asc' ? 'desc' : 'asc') : first.direction;
  /** Reading `index` in the first key's order: with other keys than the tie-break, each group is sorted. */
  const inOrder = (index: string | null): PageRoute => (tieBreak ? { index } : { index, sortsGroups: true });
  const indexes = declared(source.orderIndexes, first.field);
  if (indexes) ways.push({ cost: (reach * rows) / total, route: inOrder(direction === 'asc' ? indexes[0] : indexes[1]) });
  // A pinned index orders each value's rows by the field and then id. A sort with other keys than
  // that tie-break is in its order but for each group tying on the field (sortsGroups), which only
  // one value is read for: a merge of several needs each range in the whole order.
  for (const pinned of source.pinnedIndexes ?? []) {
    const orders = declared(pinned.orders, first.field);
    const at = pinnedFilter(pinned, plan);
    const filter = plan.filters[at];
    const arms = filter?.values.length ?? 0;
    const pinnedRows = filter && arms <= MAX_ARMS && (tieBreak || arms === 1) ? rowsWith(filter) : undefined;
    if (!orders || pinnedRows === undefined) continue;
    const index = direction === 'asc' ? orders[0] : orders[1];
    ways.push({ cost: (reach * pinnedRows) / total + arms, route: arms > 1 ? { index, split: at } : inOrder(index) });
  }
  // An index that holds every compared column, entered at its leading column's values: the matches
  // are read from its entries alone (no row visited) and sorted.
  const held = heldIndex(source.filterIndexes, plan);
  if (held && onTheRow) ways.push({ cost: HELD_VS_ROW * total, route: { index: held.index, keysOnly: true } });
  if (ways.length === 0) return { index: undefined };
  // Finding the matches: through the filter index, `total` of them when it holds every filtered column;
  // when one is checked on the row (not carried: status, age), every row the index's own filter selects
  // is fetched to check it (three countries' 200,000 users for the 2,000 of one age: 216 ms at 1M users,
  // where the merge of the countries' arms walks 10,000); without a filter index (the planner's scan),
  // every row.
  const indexFilter = filterIndex && plan.filters.find((c) => comparisonOf(c).column === filterIndex.column);
  const fetched = onTheRow && indexFilter ? (rowsWith(indexFilter) ?? total) : total;
  const found = filterIndex || !source.filterIndexes ? fetched : rows;
  ways.push({ cost: walkVsSort * found, route: { index: filterIndex?.index } });
  return ways.reduce((best, way) => (way.cost < best.cost ? way : best)).route;
}

/**
 * The direction of the id breaking the ties of a sort by one field (`rest`: the keys after it):
 * ascending when nothing follows, the id's own when only id follows, undefined when other keys do.
 */
function tieBreakOf(rest: readonly { field: string; direction: 'asc' | 'desc' }[]): 'asc' | 'desc' | undefined {
  if (rest.length === 0) return 'asc';
  return rest.length === 1 && rest[0]!.field === 'id' ? rest[0]!.direction : undefined;
}

/**
 * SQLite: the table rows an id-order walk visits for the next value of a sort key no index orders
 * (status, age since migration 20261127T0100) to give `need` rows, the filters checked on each row:
 * the value has `n` of the table's `rows` rows, and the filters select `total` of them, assumed spread
 * over the values alike (about need x rows / (total x n / rows)); the whole table when fewer are
 * expected. See list/sqlite-route.ts walkedByValue.
 */
export function valueWalkCost(need: number, n: number, total: number, rows: number): number {
  const expected = (total * n) / Math.max(1, rows);
  return expected >= need ? Math.min(rows, (need * rows) / expected) : rows;
}

/**
 * The filter a sort key's value is read through (list/by-value.ts, groupSplitPlan): an equality
 * of the stored value the sort compares, written as the sort writes it (a name field's collation key,
 * probing its fold where the field has one, so that the indexes led by the fold serve it; other text
 * `collate "binary"`, so that PostgreSQL sees the sort key constant in each arm).
 */
export function equalToSortValue(def: SortDef): FilterDef {
  if (def.key) return { column: def.column, op: 'eq', type: def.type, text: 'key', probe: def.fold === true, description: '' };
  return { column: def.column, op: 'eq', type: def.type, ...(def.type === 'string' ? { text: 'binary' as const } : {}), description: '' };
}

/**
 * The position in plan.filters of the equality filter whose comparison leads with `pinned`'s column
 * (its column, or the column it probes), with distinct values as compared; -1 when there is none.
 * One arm per value: a value given twice (lives_in=[chile,CHILE]: one fold) would list its rows twice.
 */
function pinnedFilter(pinned: PinnedIndex, plan: ListPlan): number {
  const at = plan.filters.findIndex((c) => {
    const comparison = comparisonOf(c);
    return (comparison.column === pinned.column || comparison.probe === pinned.column) && comparison.op === 'eq';
  });
  const filter = plan.filters[at];
  if (!filter) return -1;
  const comparison = comparisonOf(filter);
  return new Set(filter.values.map((v) => comparedValue(comparison, v))).size === filter.values.length ? at : -1;
}

/**
 * PostgreSQL: the filter (its position in plan.filters) whose values are read one arm each, merged
 * in the sort's order (list/postgres.ts stampedPageQuery), or undefined. Its planner reads several values of
 * an IN through an index led by that column in no useful order, so for a page it either sorts every
 * match or walks the sort field's index through all the rows the filter rejects (three countries of
 * fifteen by id, 9,000 deep: 72 ms). One arm per value, each that value's rows through the index led
 * by the column and then in the sort's order (a pinned index), is a Merge Append that walks about as
 * many entries as the page reaches (7 ms). For a sort by one field, or one field and then id, that a
 * pinned index orders (PostgreSQL reads it backward for the other directions), with 2 to MAX_ARMS values.
 */
export function postgresSplit(source: { pinnedIndexes?: readonly PinnedIndex[] }, plan: ListPlan): number | undefined {
  const [first = { field: 'id' }, ...rest] = plan.request.sort;
  if (!tieBreakOf(rest)) return undefined;
  for (const pinned of source.pinnedIndexes ?? []) {
    if (!declared(pinned.orders, first.field)) continue;
    const at = pinnedFilter(pinned, plan);
    const arms = plan.filters[at]?.values.length ?? 0;
    if (arms >= 2 && arms <= MAX_ARMS) return at;
  }
  return undefined;
}

/** An index that finds the rows a filter comparing the stored `column` selects (comparison.ts: `country_fold` for lives_in). */
export interface FilterIndex {
  column: string;
  index: string;
  /** Chosen only when this stored column is compared too (the index holds both before the rest). */
  also?: string;
  /**
   * Every stored column its entries hold: when each column the filters and the sort compare is among
   * them, a page is read from its entries alone (keysOnly), weighed against the walks that check a
   * filter on the row (HELD_VS_ROW); it is then not one of the indexes that find the rows to fetch.
   */
  holds?: readonly string[];
}

/**
 * The filter index with `holds` that serves the plan: an equality filter compares its leading column
 * (or probes it: a country's key), its `also` column is compared, and it holds every column the
 * filters and the sort keys compare. Undefined when none does.
 */
export function heldIndex(indexes: readonly FilterIndex[] | undefined, plan: ListPlan): FilterIndex | undefined {
  const comparisons = plan.filters.map(comparisonOf);
  const compared = new Set([...comparisons.map((c) => c.column), ...plan.request.sort.map((k) => sortColumnOf(k.def)), 'id']);
  return indexes?.find(
    (f) =>
      f.holds !== undefined &&
      comparisons.some((c) => c.op === 'eq' && (c.column === f.column || c.probe === f.column)) &&
      (f.also === undefined || comparisons.some((c) => c.column === f.also)) &&
      [...compared].every((column) => f.holds!.includes(column)),
  );
}

/**
 * An index led by the stored column `column` and then, per sort field, in that field's order (ties by
 * id ascending): entered at one value of an equality filter on `column` (`country_fold`: lives_in, or
 * a country's key probing its fold), it lists that value's rows in the sort's order. SQLite reads the
 * named index; PostgreSQL, whose planner picks it, only needs to know which sort fields such an index
 * serves (postgresSplit).
 */
export interface PinnedIndex {
  column: string;
  /** Per sort field, the index for an ascending and for a descending sort (the same one for id: read backward). */
  orders: Readonly<Record<string, readonly [asc: string, desc: string]>>;
}

/** The statement with its reads of `table` through `index` (null: the table itself, in id order). */
export function throughIndex(query: CompiledQuery, table: string, index: string | null | undefined): CompiledQuery {
  if (index === undefined) return query;
  const from = `from "${table}"`;
  const through = index === null ? `${from} not indexed` : `${from} indexed by "${index}"`;
  return CompiledQuery.raw(query.sql.split(from).join(through), [...query.parameters]);
}

/**
 * The plan without the sort keys that order nothing: those a filter fixes to one value
 * (status=active&sort=status:desc,age:asc is ordered by age alone: every row ties on status), and
 * those after id (id:asc,first_name:desc: no two rows tie on id). Same rows, same order; the index
 * choice then sees the keys that actually order the page.
 */
export function withoutFixedKeys(plan: ListPlan): ListPlan {
  // Fixed: one value of the stored column the sort compares (`lives_in=brazil` fixes the country's
  // fold, not its key: Brazil and brazil still sort apart).
  const fixed = (def: SortDef) =>
    plan.filters.some((c) => {
      const comparison = comparisonOf(c);
      return comparison.op === 'eq' && comparison.count === 1 && comparison.column === sortColumnOf(def);
    });
  const byId = plan.request.sort.findIndex((k) => k.field === 'id');
  const sort = plan.request.sort.filter((k, i) => !fixed(k.def) && (byId < 0 || i <= byId));
  if (sort.length === plan.request.sort.length) return plan;
  return { ...plan, request: { ...plan.request, sort } };
}

/**
 * A page in the back half of its list as the same list in the opposite order (every sort key and
 * the id tie-break reversed), at the offset that reaches the same rows from the other end; its rows,
 * reversed, are the page. Undefined when the page is nearer the start. An index walked to a deep
 * page passes every earlier match (offset entries): the alias page 425 of 100 sorted by last name
 * walks 42,500 of Brazil's users, from the end a few hundred. Needs the exact total at the version
 * the page is read at (the summary's, known before the page).
 */
export function fromTheEnd(plan: ListPlan, total: number): ListPlan | undefined {
  const { offset, limit } = plan.request.page;
  // What each way walks: the rows up to the page's end from the start, up to its first row from the end.
  // From the end only when that walks fewer entries by more than a page (never for a first page).
  const reach = total - offset;
  if (reach <= 0 || reach >= offset) return undefined;
  const flip = (direction: 'asc' | 'desc'): 'asc' | 'desc' => (direction === 'asc' ? 'desc' : 'asc');
  const sort = plan.request.sort.map((k) => ({ ...k, direction: flip(k.direction) }));
  // The tie-break sortKeys adds (id ascending), reversed too: stated, since a sort without id breaks ties ascending.
  if (!sort.some((k) => k.field === 'id')) sort.push({ field: 'id', direction: 'desc', def: { column: 'id', type: 'integer' } });
  const backLimit = Math.min(limit, reach);
  return { ...plan, request: { ...plan.request, sort, page: { ...plan.request.page, offset: reach - backLimit, limit: backLimit } } };
}

/**
 * PostgreSQL: a page sorted by a first key and then a second key the summary counts by (a name, then
 * country or status) as one arm per value of the second key, merged in the sort's order (Merge
 * Append: each arm is in the whole order, its second key being one value), or undefined. Its planner
 * otherwise sorts each group of rows tying on the first key, a name's thirty thousand users even for
 * page 4 (18-28 ms). Through an index led by the second key and then in the first key's order (a
 * pinned one: the country's name indexes) an arm walks only its own entries; otherwise it walks the
 * first key's index, checking the value (groupSplitPlan weighs both). The plan with the arms' filter
 * last in its filters.
 */
export function postgresGroupSplit(
  source: { pinnedIndexes?: readonly PinnedIndex[] },
  plan: ListPlan,
  values: readonly { value: string | number; n: number }[] | undefined,
  rows: number,
): ListPlan | undefined {
  const [first, second] = plan.request.sort;
  if (!first || !second) return undefined;
  const pinned = pinnedOrders(source, second.def, first.field);
  return groupSplitPlan(plan, values, rows, pinned ? () => 1 : (n) => rows / n);
}

/**
 * The pinned indexes (ascending, descending: ties by id ascending) led by the column a group split's
 * arms on sort key `key` compare first (equalToSortValue: a country's fold), and then in `field`'s
 * order; undefined when none is.
 */
export function pinnedOrders(source: { pinnedIndexes?: readonly PinnedIndex[] }, key: SortDef, field: string): readonly [string, string] | undefined {
  const comparison = comparisonOf({ param: '', def: equalToSortValue(key), values: [''] });
  const leading = comparison.probe ?? comparison.column;
  const pinned = source.pinnedIndexes?.find((p) => p.column === leading && declared(p.orders, field));
  return pinned && declared(pinned.orders, field);
}
