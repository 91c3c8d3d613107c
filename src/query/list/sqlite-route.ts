import { totalsOf, valuesOf, type HeldSummary } from '../held-summary.js';
import { equalToSortValue, groupSplitPlan, pageRoute, pinnedOrders, valueWalkCost } from '../page-strategy.js';
import { sortColumnOf, type ListPlan } from '../sql.js';
import { declared } from '../collection.js';
import type { Condition } from '../request.js';
import type { Summary } from '../summary.js';
import type { Executor } from '../shapes.js';
import { sqlitePage } from './sqlite.js';
import type { ListSource } from './source.js';
import { heldFor, type Counts } from './summed.js';

// SQLite: the rows of a page whose exact total is known before it is read (summed.ts), through the
// index that total makes cheapest (page-strategy.ts pageRoute), or as one arm per value of the
// second sort key (groupSplitPlan).

/**
 * `summary`: the summary that covers the filters, when one does (with `held`, its copy in memory: it
 * says how many rows each filter selects and which values the second sort key has); `walkVsSort`:
 * see pageRoute.
 */
export async function sqliteSummedRows<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
  { total, allRows }: Counts,
  held: HeldSummary | undefined,
  summary: Summary | undefined,
  walkVsSort: number,
): Promise<O[]> {
  const walked = summary ? undefined : await walkedByValue(db, source, plan, { total, allRows });
  if (walked) return walked;
  const rowsWith = (c: Condition) => (held && summary ? totalsOf(held, summary, [c])?.total : undefined);
  const route = pageRoute(source, plan, total, allRows, walkVsSort, rowsWith);
  const [first, second] = plan.request.sort;
  // Through an index led by the second key and then in the first key's order (a country's name
  // indexes), each arm walks its own value's entries only; else the first key's index, checking it.
  // Each entry an arm keeps there costs about two walked (its arm is a search, read up to the page's
  // reach, then merged): on a million users, a name then country, fifteen arms, page 4 of 100 (6,000
  // entries) took 7.6 ms against 6.2 ms sorting the name's group, page 4 of 50 (3,000) 4.5 ms against 6.3.
  const pinned = first && second ? pinnedOrders(source, second.def, first.field) : undefined;
  const grouped =
    route.sortsGroups && held && summary && second
      ? groupSplitPlan(plan, valuesOf(held, summary, sortColumnOf(second.def), second.direction, plan.filters), allRows, pinned && (() => 2))
      : undefined;
  if (grouped) {
    const index = pinned ? pinned[first!.direction === 'asc' ? 0 : 1] : route.index;
    return (await sqlitePage(db, source, grouped, { index, groupSplit: grouped.filters.length - 1 })).rows;
  }
  return (await sqlitePage(db, source, plan, route)).rows;
}

/**
 * Fetching one row through an index (a B-tree search from the entry's id) costs about as much as
 * walking this many rows of the table in id order, checking a filter on each (at 1M users, 83,000 rows
 * of a first-name prefix fetched and sorted by age in 81-127 ms, the whole table walked checking the
 * prefix in 85-90 ms).
 */
const FETCH_VS_WALK = 12;

/**
 * A page sorted by a column the summary counts by but no index orders (status, age: migration
 * 20261127T0100), under filters the summary does not cover (a name prefix, whose total the prefix
 * summary gives), read one value of that column at a time in the sort's order: each value's rows
 * through the table in id order (the tie-break), the filters checked on each row, up to what the page
 * reaches; sorted then by a field with an order index (a name), each value's rows through that index,
 * checking the filters on each entry's row. Otherwise every row the prefix selects is fetched through
 * the name's index and sorted: 83,000 rows for `first_name_starts_with=a&sort=age:desc` at 1M users
 * (116-180 ms), where the walk of the first age visits about 12,000 rows in order. The values and how many rows have each come
 * from the summary (all rows: the filters are not in it), so a value's share of the matches is an
 * estimate: the walk stops, and the page is read the other way, as soon as the rows it visited
 * (estimated; the whole table for a value that ran out) pass what fetching every match costs
 * (FETCH_VS_WALK rows walked per match). Undefined: not such a page, or not cheaper this way.
 */
async function walkedByValue<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
  { total, allRows }: Counts,
): Promise<O[] | undefined> {
  const [first, ...rest] = plan.request.sort;
  const summary = source.summary;
  const column = first && sortColumnOf(first.def);
  if (!first || !summary || !column || !summary.columns.includes(column) || declared(source.orderIndexes, first.field)) return undefined;
  // Each value's rows in id order (a sort by that column and then id, the tie-break), or in the order
  // of the next key's index (ties by id ascending, as it holds them), each entry's row fetched.
  const [next, after] = rest;
  const byId = !next || (next.field === 'id' && !after);
  const indexes = next && (!after || (after.field === 'id' && after.direction === 'asc')) ? declared(source.orderIndexes, next.field) : undefined;
  const index = byId ? null : next && indexes?.[next.direction === 'asc' ? 0 : 1];
  if (index === undefined) return undefined;
  const perRow = index === null ? 1 : FETCH_VS_WALK;
  const held = await heldFor(db, summary, source.table);
  const values = held && valuesOf(held, summary, column, first.direction, []);
  if (!values) return undefined;
  const budget = FETCH_VS_WALK * total;
  let { offset: skip, limit: want } = plan.request.page;
  let visited = 0;
  const rows: O[] = [];
  for (const { value, n } of values) {
    if (want === 0) break;
    const need = skip + want;
    const cost = perRow * valueWalkCost(need, n, total, allRows);
    if (visited + cost > budget) return undefined;
    const only: Condition = { param: first.field, def: equalToSortValue(first.def), values: [value] };
    const part: ListPlan = {
      filters: [...plan.filters, only],
      request: { ...plan.request, sort: rest, page: { ...plan.request.page, offset: 0, limit: need } },
    };
    const { rows: found } = await sqlitePage(db, source, part, { index });
    // A value that ran out walked the whole table (or index).
    visited += found.length < need ? perRow * allRows : cost;
    rows.push(...found.slice(skip));
    want -= Math.min(want, Math.max(0, found.length - skip));
    skip = Math.max(0, skip - found.length);
  }
  return rows;
}
