import { run, shapeOf, shapeQuery, type Executor } from '../shapes.js';
import { valuesOf, type HeldSummary } from '../held-summary.js';
import { summaryValuesQuery } from '../summary.js';
import { equalToSortValue } from '../page-strategy.js';
import { filterValues, sortColumnOf, type ListPlan } from '../sql.js';
import type { Condition } from '../request.js';
import type { ListSource } from './source.js';

// Strategy: a page read one value of its first sort key at a time.

/** Reads one value's part of a by-value page (an ordinary list read of the part's plan), with the version it read its rows at when known. */
export type ReadPart<O> = (part: ListPlan) => Promise<{ rows: O[]; stamp?: string }>;

/**
 * A sort led by a column the summary counts by (status, country, age) and then other keys: no
 * index holds (status, last_name, id) for every second key, and reading the first key's index
 * sorts each of its values' rows (half a million users for a status) by the rest. So the page is
 * read one value at a time: the summary gives every value's exact total under the filters, in the
 * sort order of the values, in one small statement; the values before the page are skipped unread,
 * and each value the page spans is the same list with that value as one more filter and the rest
 * of the sort, read by `readPart` (an ordinary list read through the next key's own index).
 * Undefined when the sort is not led by a column the summary counts by.
 */
export async function byValue<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
  total: number,
  held: HeldSummary | undefined,
  readPart: ReadPart<O>,
): Promise<{ rows: O[]; total: number; stamps: (string | undefined)[] } | undefined> {
  const [first, ...rest] = plan.request.sort;
  const summary = source.summary;
  // Also when the column's own index is in the sort's order (only a tie-break by id follows): a deep
  // page under a selective filter walks that index through every earlier match (page 361 of three
  // countries older than 71 sorted by age, 36,000 matches of 650,000 entries, 33 ms), where per value
  // it walks only its own value's entries.
  const column = first && sortColumnOf(first.def);
  if (!first || !column || !summary?.columns.includes(column)) return undefined;
  const values =
    (held && valuesOf(held, summary, column, first.direction, plan.filters)) ??
    (await run<{ value: string | number; n: unknown }>(
      db,
      shapeQuery(db, `${source.key}|values:${first.field}:${first.direction}|${shapeOf(plan)}`, filterValues(plan.filters), () =>
        summaryValuesQuery(summary, column, first.def.type === 'string' && first.def.key !== true, first.direction, plan.filters).compile(db),
      ),
    ));
  let { offset, limit } = plan.request.page;
  const rows: O[] = [];
  const stamps: (string | undefined)[] = [];
  for (const { value, n } of values) {
    if (limit === 0) break;
    const inValue = Number(n);
    if (offset >= inValue) {
      offset -= inValue;
      continue;
    }
    // The one value: its stored value as the sort compares it (a country's collation key, probing its
    // fold so that the indexes led by the country's fold serve it: page-strategy.ts equalToSortValue).
    const only: Condition = { param: first.field, def: equalToSortValue(first.def), values: [value] };
    // The value passed every filter on its field (the summary selected it under them), and the
    // summary holds the value exactly as the sort compares it, so those filters are dropped: kept, a
    // filter of several countries beside the one value read each of the other countries' index ranges
    // through, matching nothing (10 ms for a page of 10).
    const others = plan.filters.filter((c) => c.def.column !== first.def.column);
    const part: ListPlan = { filters: [...others, only], request: { ...plan.request, sort: rest, page: { ...plan.request.page, offset, limit } } };
    const { rows: found, stamp } = await readPart(part);
    stamps.push(stamp);
    rows.push(...found);
    limit -= found.length;
    offset = 0;
  }
  return { rows, total, stamps };
}
