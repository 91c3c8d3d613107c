import { lastHeldFared, lastHeldTrusted, postgresHeld, postgresHeldAt, postgresLastHeld, totalsOf, valuesOf } from '../held-summary.js';
import { fromTheEnd, postgresGroupSplit, withoutFixedKeys } from '../page-strategy.js';
import { sortColumnOf, type ListPlan } from '../sql.js';
import type { Summary } from '../summary.js';
import type { Executor } from '../shapes.js';
import { byValue } from './by-value.js';
import { postgresPage } from './postgres.js';
import { forDialect, type ListResult, type ListSource } from './source.js';
import { summedCounts, type Summed } from './summed.js';

// Strategy, PostgreSQL with a summary covering the filters: read the page as of the summary this
// Kysely instance last held, without checking its version first (one round trip fewer), and keep it
// when the page statement says it read its rows at that version. Undefined from byValueAsHeld when
// that did not hold: the caller reads the page as usual (summed.ts summedList).

/**
 * A page not read one value at a time: the page first, which says the version it read the rows at,
 * then the total from the summary held at that version: one round trip where checking the held
 * summary's version first took two. A sort by a name and then status or country is read one arm per
 * value of the second key, the values the summary last held (postgresGroupSplit), kept when the
 * statement read its rows at that summary's version (while that pays off: lastHeldTrusted). Unless
 * the summary last held puts the page in the back half: then it is read from the end (fromTheEnd)
 * with that summary's total, kept the same way. Or past the end, or in the back half while reading
 * as of the summary held does not pay off: then the version is checked first, and at the version now
 * a page past the end is not read at all and one in the back half is read from the end.
 */
export async function postgresPageFirst<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
  summed: Summed,
  summary: Summary,
): Promise<ListResult<O>> {
  const last = postgresLastHeld(db, summary);
  const guessed = last && totalsOf(last, summary, plan.filters)?.total;
  const back = guessed !== undefined ? fromTheEnd(plan, guessed) : undefined;
  const second = plan.request.sort[1];
  const grouped =
    last && guessed !== undefined && !back && second && summary.columns.includes(sortColumnOf(second.def))
      ? postgresGroupSplit(source, plan, valuesOf(last, summary, sortColumnOf(second.def), second.direction, plan.filters), last.allRows)
      : undefined;
  // Grouped: the arms are the values the summary last held; from the end: with its total.
  const asHeld = grouped ? { plan: grouped, split: grouped.filters.length - 1 } : back && { plan: back, split: undefined };
  if (last && guessed !== undefined && asHeld && lastHeldTrusted(db)) {
    const read = await postgresPage(db, source, asHeld.plan, asHeld.split);
    lastHeldFared(db, read.stamp === last.stamp);
    // Kept when read at that summary's version; else a write came in between: read from the start below.
    if (read.stamp === last.stamp) return { rows: back ? read.rows.reverse() : read.rows, total: guessed };
  } else if (guessed !== undefined && (back || plan.request.page.offset >= guessed)) {
    const held = await postgresHeld(db, summary, source.table);
    const { total } = await summedCounts(db, plan, summed, held);
    if (plan.request.page.offset >= total) return { rows: [], total };
    const now = fromTheEnd(plan, total);
    const read = now && (await postgresPage(db, source, now));
    // Read at the summary's version, or else (a write came in between) from the start below.
    if (read && read.stamp === held.stamp) return { rows: read.rows.reverse(), total };
  }
  const { rows, stamp } = await postgresPage(db, source, plan);
  const held = await postgresHeldAt(db, summary, source.table, stamp);
  return { rows, total: (await summedCounts(db, plan, summed, held)).total };
}

/**
 * A page read one value of its first sort key at a time (byValue) as of the summary this Kysely
 * instance last held, without checking its version first: each value's part is one page statement,
 * which returns the version it read its rows at (postgresPage). The page and total are those of that
 * summary's version when every part was read at it; undefined when one was not (a write came in
 * between: the caller reads the page as usual), when there is no summary held yet or lately such
 * reads were mostly wasted (lastHeldTrusted), or when the page is past the end (no statement would
 * tell the version) or a part is itself led by a summary column.
 */
export async function byValueAsHeld<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  requested: ListPlan,
  summary: Summary,
): Promise<ListResult<O> | undefined> {
  const held = lastHeldTrusted(db) ? postgresLastHeld(db, summary) : undefined;
  const total = held && totalsOf(held, summary, requested.filters)?.total;
  if (!held || total === undefined || requested.request.page.offset >= total) return undefined;
  const back = fromTheEnd(requested, total);
  const plan = back ?? requested;
  const next = plan.request.sort[1];
  if (next && summary.columns.includes(sortColumnOf(next.def))) return undefined;
  const readPart = (part: ListPlan) => postgresPage(db, source, forDialect(withoutFixedKeys(part), true));
  const read = await byValue(db, source, plan, total, held, readPart);
  const atIt = read !== undefined && read.stamps.length > 0 && read.stamps.every((stamp) => stamp === held.stamp);
  lastHeldFared(db, atIt);
  if (!read || !atIt) return undefined;
  return { rows: back ? read.rows.reverse() : read.rows, total };
}
