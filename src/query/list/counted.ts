import { sql } from 'kysely';
import { readStatement } from '../../db/reads.js';
import { tableStampSql } from '../../db/table-stamps.js';
import { run, shapeOf, shapeQuery, type Executor } from '../shapes.js';
import { cachedTotal } from '../count-cache.js';
import { applyWhere, totalFromPage, type ListPlan } from '../sql.js';
import { whereValuesOf, type ListResult, type ListSource, type StampedRows } from './source.js';

// Strategy: the page first, then the total counted, unless the page itself tells it (a short page),
// and remembered under the version of the table the page was read at (count-cache.ts).

/** A page read by the dialect's `readPage`, and its exact total. */
export async function countedList<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
  readPage: (plan: ListPlan) => Promise<StampedRows<O>>,
): Promise<ListResult<O>> {
  const { rows, stamp, parent, total } = await readPage(plan);
  // The parent row, when the page's statement read it (ListSource.parent).
  const withParent = parent === undefined ? {} : { parent };
  const known = totalFromPage(plan, rows.length) ?? total;
  if (known !== undefined) return { rows, total: known, ...withParent };
  return { rows, total: await countedTotal(db, source, plan, stamp), ...withParent };
}

/** The total of the filters counted (or remembered under `stamp`, the version the page was read at: count-cache.ts). */
export async function countedTotal<DB, TB extends keyof DB, O>(db: Executor, source: ListSource<DB, TB, O>, plan: ListPlan, stamp: string): Promise<number> {
  const counting = shapeQuery(db, `${source.key}|count|${shapeOf(plan)}`, whereValuesOf(source, plan), () =>
    applyWhere(source.base(), plan.filters)
      .select([sql<number | string | bigint>`count(*)`.as('total'), tableStampSql(db, source.table).as('stamp')] as never)
      .compile(),
  );
  // A remembered total is read as much as a counted one: its tables join the answer's (db/reads.ts).
  readStatement(counting.sql);
  return cachedTotal(
    db,
    `${counting.sql}\u0000${JSON.stringify(counting.parameters)}`,
    async () => {
      const [row] = await run<{ total?: unknown; stamp?: unknown }>(db, counting);
      return { total: Number(row?.total ?? 0), stamp: String(row?.stamp) };
    },
    stamp,
  );
}
