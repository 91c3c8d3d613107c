import { run, shapeOf, shapeQuery, type Executor } from '../shapes.js';
import { boundariesFor, boundaryKey, lastBoundaries, pageOf, seekWindow, type Boundaries } from '../seek.js';
import { postgresSplit } from '../page-strategy.js';
import { PAGE_STAMP, orderKeys, stampedPageQuery, windowValues, type ListPlan } from '../sql.js';
import { whereValuesOf, type ListSource, type StampedRows } from './source.js';

// PostgreSQL's page reads. Reading the version first would cost a round trip, so each page's
// statement returns the version of the listed table it read the rows at (sql.ts stampedPageQuery).

/**
 * PostgreSQL pages: the page's boundaries are remembered under the version its statement read, as
 * on SQLite, and a later request seeks from the nearest one in a statement whose stamp says whether
 * that boundary still holds. When it does not (a write in between), the answer is thrown away and
 * the page read by offset. A filter of a few values that an index leads (page-strategy.ts
 * postgresSplit) is read one arm per value, merged. Returns the rows and their stamp.
 */
export async function postgresPage<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
  split: number | undefined = postgresSplit(source, plan),
): Promise<StampedRows<O>> {
  const { limit, offset } = plan.request.page;
  const shape = shapeOf(plan);
  const whereValues = whereValuesOf(source, plan);
  const keys = orderKeys(plan);
  if (split !== undefined) {
    // One arm per value, merged (no remembered boundaries).
    const compiled = shapeQuery(db, `${source.key}|stamped-split:${split}|${shape}`, { ...whereValues, ...windowValues(undefined, { limit, offset }) }, () =>
      stampedPageQuery(source, plan, false, split).compile(db),
    );
    const found = await run<Record<string, unknown>>(db, compiled);
    return { rows: stampedEntries(found).map((entry) => rowOf<O>(entry, keys.length)), stamp: stampOf(found) };
  }

  const query = boundaryKey(source, shape, whereValues);
  const read = async (boundaries: Boundaries | undefined) => {
    const { after, lead, window } = seekWindow(boundaries, offset, limit, keys.length);
    const compiled = shapeQuery(db, `${source.key}|stamped${after ? '-seek' : ''}|${shape}`, { ...whereValues, ...windowValues(after, window) }, () =>
      stampedPageQuery(source, plan, after !== undefined).compile(db),
    );
    const found = await run<Record<string, unknown>>(db, compiled);
    return { found, lead, stamp: stampOf(found) };
  };

  const known = lastBoundaries(db, query);
  let result = await read(known);
  if (known && result.stamp !== known.stamp) result = await read(undefined);
  const boundaries = boundariesFor(db, query, result.stamp);
  const rows = pageOf(boundaries, stampedEntries(result.found), result.lead, offset, limit, keys.length).map((entry) => rowOf<O>(entry, keys.length));
  return { rows, stamp: result.stamp };
}

/**
 * PostgreSQL, cursor style: the entries (sort-key values k0, k1, ...) of the rows past the cursor,
 * up to `limit + 1`, with the rows of the first `limit`, read in one statement with its version.
 */
export async function postgresCursorEntries<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
): Promise<StampedRows<O> & { entries: Record<string, unknown>[] }> {
  const { limit, after } = plan.request.page;
  const seeking = after !== undefined;
  const values = { ...whereValuesOf(source, plan), ...windowValues(after, { limit: limit + 1, offset: 0 }) };
  const query = shapeQuery(db, `${source.key}|cursor${seeking ? '-seek' : ''}|${shapeOf(plan)}`, values, () =>
    stampedPageQuery(source, plan, seeking).compile(db),
  );
  const found = await run<Record<string, unknown>>(db, query);
  const entries = stampedEntries(found);
  const keyCount = orderKeys(plan).length;
  return { entries, rows: entries.slice(0, limit).map((entry) => rowOf<O>(entry, keyCount)), stamp: stampOf(found) };
}

/** The version a stampedPageQuery read its rows at. */
function stampOf(found: Record<string, unknown>[]): string {
  return String((found[0]?.[PAGE_STAMP] as string | number | null | undefined) ?? '');
}

/** A stampedPageQuery's rows: none when the page is empty (one row of nulls with the stamp). */
function stampedEntries(found: Record<string, unknown>[]): Record<string, unknown>[] {
  return found[0]?.id === null ? [] : found;
}

/** A row of a stampedPageQuery without the stamp and the sort-key values (k0, k1, ...). */
function rowOf<O>(entry: Record<string, unknown>, keyCount: number): O {
  const row: Record<string, unknown> = { ...entry };
  delete row[PAGE_STAMP];
  for (let i = 0; i < keyCount; i++) delete row[`k${i}`];
  return row as O;
}
