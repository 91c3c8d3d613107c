import type { Executor } from '../shapes.js';
import { cursorScope, encodeCursor } from '../cursor.js';
import { orderKeys, type ListPlan } from '../sql.js';
import { countedTotal } from './counted.js';
import { heldFor, summedCounts, summedTotal } from './summed.js';
import type { ListResult, ListSource, StampedRows } from './source.js';

// Strategy: a cursor page (after=, query/cursor.ts).

/** How a dialect reads a cursor page: up to limit + 1 entries past the cursor (sort-key values k0, k1, ...), the rows of the first `limit`, and their version. */
export type CursorEntries<O> = (plan: ListPlan) => Promise<StampedRows<O> & { entries: Record<string, unknown>[] }>;

/**
 * The rows past the cursor's sort-key values, read by the seek arms of deep pages (sql.ts pastBoundary: one index
 * range per sort key, each cut at the page) from offset 0, one row more than the page to know
 * whether another follows; the keys of the page's last row are then the next cursor (returned as
 * `next`). Rows inserted or deleted before the cursor change nothing, and the depth costs nothing.
 * The total is exact, as for every style: from the summary when it covers the filters, else counted
 * under the version the page was read at (count-cache.ts).
 */
export async function cursorList<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
  readEntries: CursorEntries<O>,
): Promise<ListResult<O>> {
  const { limit, after } = plan.request.page;
  const { entries, rows, stamp, parent, total: counted } = await readEntries(plan);
  const keys = orderKeys(plan);
  const last = entries.length > limit ? entries[limit - 1] : undefined;
  const next =
    last &&
    encodeCursor(
      cursorScope(plan.request.collection, keys),
      keys.map((_, i) => last[`k${i}`]),
    );
  const page = (total: number): ListResult<O> => ({ rows, total, ...(next === undefined ? {} : { next }), ...(parent === undefined ? {} : { parent }) });

  const summed = summedTotal(db, source, plan);
  if (summed) {
    const held = summed.summary && (await heldFor(db, summed.summary, source.table));
    return page((await summedCounts(db, plan, summed, held)).total);
  }
  if (after === undefined && entries.length <= limit) return page(entries.length);
  return page(counted ?? (await countedTotal(db, source, plan, stamp)));
}
