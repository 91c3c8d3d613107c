import { sql, type SqlBool } from 'kysely';
import type SQLite from 'better-sqlite3';
import { allRows, directSqlite } from '../../db/precompiled.js';
import { param } from '../../db/named-params.js';
import { sqliteTableStamp, tableStamp } from '../../db/table-stamps.js';
import { run, shapeOf, shapeQuery, type Executor } from '../shapes.js';
import { boundariesFor, boundaryKey, pageOf, seekWindow } from '../seek.js';
import { throughIndex, type PageRoute } from '../page-strategy.js';
import { applyToSelect, groupSplitKeysQuery, mergedKeysQuery, orderKeys, pageKeysQuery, windowValues, type ListPlan } from '../sql.js';
import { whereValuesOf, type ListSource, type StampedRows } from './source.js';

// SQLite's page reads. With the connection's own handle (outside a transaction) each read is
// synchronous from the version of the listed table to the rows, so no other request's write can
// come between them; inside a transaction the statements queue behind it through Kysely.

/**
 * The page rows on SQLite, and the version of the listed table they were read at. At offset 0, or
 * inside a transaction (no direct handle), one query. Past the first page: first the page's ids
 * from the index alone (seeking from a remembered boundary where there is one), then those rows by
 * id: OFFSET then skips index entries, never rows. `route`: which index, and whether as a merge of
 * arms (page-strategy.ts pageRoute).
 */
export async function sqlitePage<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
  route: PageRoute,
): Promise<StampedRows<O>> {
  const { limit, offset } = plan.request.page;
  const whereValues = whereValuesOf(source, plan);
  const handle = directSqlite(db);
  const { index, split, groupSplit } = route;
  const shape = `${shapeOf(plan)}|${index}`;
  const arms = groupSplit ?? split;
  if (handle && arms !== undefined) {
    // One arm per value of the split filter (or of the second sort key), merged in order (no remembered boundaries).
    const [kind, query] = groupSplit !== undefined ? ['group-split-ids', groupSplitKeysQuery] : ['merged-ids', mergedKeysQuery];
    const stamp = sqliteTableStamp(handle, source.table);
    const idsQuery = shapeQuery(db, `${source.key}|${kind}:${arms}|${shape}`, { ...whereValues, limit, offset, reach: limit + offset }, () =>
      throughIndex(query(source.base, plan, arms).compile(db), source.table, index),
    );
    const page = allRows(handle, idsQuery.sql, idsQuery.parameters);
    return { rows: rowsOf(handle, db, source, page), stamp };
  }
  if (!handle || (offset === 0 && !route.sortsGroups)) {
    const stamp = handle ? sqliteTableStamp(handle, source.table) : await tableStamp(db, source.table);
    const values = { ...whereValues, limit, offset };
    const rows = await run<O>(
      db,
      shapeQuery(db, `${source.key}|page|${shape}`, values, () => throughIndex(applyToSelect(source.rows(), plan).compile(), source.table, index)),
    );
    return { rows, stamp };
  }
  const keys = orderKeys(plan);
  const stamp = sqliteTableStamp(handle, source.table);
  const boundaries = boundariesFor(db, boundaryKey(source, shape, whereValues), stamp);
  const { after, lead, window } = seekWindow(boundaries, offset, limit);
  const idsQuery = shapeQuery(db, `${source.key}|ids${after ? '-seek' : ''}|${shape}`, { ...whereValues, ...windowValues(after, window) }, () =>
    throughIndex(pageKeysQuery(source.base, plan, after !== undefined).compile(db), source.table, index),
  );
  const entries = allRows(handle, idsQuery.sql, idsQuery.parameters);
  const page = pageOf(boundaries, entries, lead, offset, limit, keys.length);
  return { rows: rowsOf(handle, db, source, page), stamp };
}

/**
 * SQLite, cursor style: the entries (ids and sort-key values k0, k1, ...) of the rows past the
 * cursor, up to `limit + 1` (pageKeysQuery, seeking when there is a cursor), the rows of the first
 * `limit` of them, and the version they were read at.
 */
export async function sqliteCursorEntries<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
): Promise<StampedRows<O> & { entries: Record<string, unknown>[] }> {
  const { limit, after } = plan.request.page;
  const seeking = after !== undefined;
  const values = { ...whereValuesOf(source, plan), ...windowValues(after, { limit: limit + 1, offset: 0 }) };
  const query = shapeQuery(db, `${source.key}|cursor-ids${seeking ? '-seek' : ''}|${shapeOf(plan)}`, values, () =>
    pageKeysQuery(source.base, plan, seeking).compile(db),
  );
  const handle = directSqlite(db);
  if (handle) {
    // Synchronous from the version to the rows: no other request's write comes between them.
    const stamp = sqliteTableStamp(handle, source.table);
    const entries = allRows(handle, query.sql, query.parameters);
    return { entries, rows: rowsOf(handle, db, source, entries.slice(0, limit)), stamp };
  }
  // A transaction holds the connection: the statements queue behind it, in this order.
  const stamp = await tableStamp(db, source.table);
  const entries = await run<Record<string, unknown>>(db, query);
  const page = entries.slice(0, limit);
  const rows = inOrderOf(page, await run<O>(db, byIds(db, source, page)));
  return { entries, rows, stamp };
}

/** SQLite: the rows of a page's entries (ids read from an index), in the entries' order. */
function rowsOf<DB, TB extends keyof DB, O>(handle: SQLite.Database, db: Executor, source: ListSource<DB, TB, O>, page: Record<string, unknown>[]): O[] {
  if (page.length === 0) return [];
  const read = byIds(db, source, page);
  return inOrderOf(page, allRows<O>(handle, read.sql, read.parameters));
}

/** SQLite: the statement reading the rows of entries (ids read from an index). */
function byIds<DB, TB extends keyof DB, O>(db: Executor, source: ListSource<DB, TB, O>, entries: Record<string, unknown>[]) {
  const ids = JSON.stringify(entries.map((e) => e.id));
  return shapeQuery(db, `${source.key}|by-ids`, { ...source.values, ids }, () =>
    source
      .rows()
      .where(sql<SqlBool>`${sql.ref('id')} in (select value from json_each(${param('ids')}))`)
      .compile(),
  );
}

/** The rows in the entries' order. */
function inOrderOf<O>(entries: Record<string, unknown>[], rows: O[]): O[] {
  const byId = new Map(rows.map((r) => [(r as { id: unknown }).id, r]));
  return entries.map((e) => byId.get(e.id)!);
}
