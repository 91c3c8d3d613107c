import { directSqlite } from '../../db/precompiled.js';
import { isPostgres } from '../../db/dialect.js';
import { forgetKept } from '../kept.js';
import { withoutFixedKeys } from '../page-strategy.js';
import { sortColumnOf, type ListPlan } from '../sql.js';
import { shapesOwner, type Executor } from '../shapes.js';
import { countedList } from './counted.js';
import { cursorList } from './cursor.js';
import { postgresCursorEntries, postgresPage } from './postgres.js';
import { byValueAsHeld, postgresPageFirst } from './postgres-as-held.js';
import { forDialect, type ListResult, type ListSource } from './source.js';
import { sqliteCursorEntries, sqlitePage } from './sqlite.js';
import { sqliteSummedRows } from './sqlite-route.js';
import { summedList, summedTotal } from './summed.js';

// Step 4 of the conventions: a plan -> its page and exact total. Which strategy reads it, by what is
// known before reading: a cursor (cursor.ts); a summary that covers the filters, whose total comes
// first (summed.ts; on PostgreSQL first as of the summary last held: postgres-as-held.ts); else the
// page first and the total counted (counted.ts). Each reads through its dialect's statements
// (sqlite.ts, sqlite-route.ts, postgres.ts), built once per shape (shapes.ts).

/** One page of a collection, the total its filters select and, cursor style, the next cursor. */
export async function listPage<DB, TB extends keyof DB, O>(db: Executor, source: ListSource<DB, TB, O>, requested: ListPlan): Promise<ListResult<O>> {
  const postgres = isPostgres(db);
  // A cursor holds every sort key, so none is dropped (withoutFixedKeys) for it.
  if (requested.request.page.style === 'cursor') {
    const plan = forDialect(requested, postgres);
    return cursorList(db, source, plan, (p) => (postgres ? postgresCursorEntries(db, source, p) : sqliteCursorEntries(db, source, p)));
  }
  const plan = forDialect(withoutFixedKeys(requested), postgres);
  const summed = summedTotal(db, source, plan);
  if (!summed) return countedList(db, source, plan, (p) => (postgres ? postgresPage(db, source, p) : sqlitePage(db, source, p, { index: undefined })));

  const readPart = (part: ListPlan) => listPage(db, source, part);
  if (!postgres)
    return summedList(
      db,
      source,
      plan,
      summed,
      (p, counts, held) => sqliteSummedRows(db, source, p, counts, held, summed.summary, summed.walkVsSort),
      readPart,
    );
  const { summary } = summed;
  const first = plan.request.sort[0];
  if (summary && !(summed.byValue && first && summary.columns.includes(sortColumnOf(first.def)))) return postgresPageFirst(db, source, plan, summed, summary);
  // A sort led by a column the summary counts by: as of the summary last held, when every part's
  // statement says it read its rows at that summary's version (checking the version first would be
  // one more round trip for every such list).
  const asHeld = summary && (await byValueAsHeld(db, source, plan, summary));
  return asHeld ?? summedList(db, source, plan, summed, async (p) => (await postgresPage(db, source, p)).rows, readPart);
}

/**
 * Forgets what the list engine keeps for `db` (query/kept.ts: statements, totals, page boundaries,
 * held summaries): its next lists are read as by a fresh start, whatever was read before. No answer
 * changes; a test whose statements or plans must not depend on the tests before it starts here.
 */
export function forgetLists(db: Executor): void {
  const handle = directSqlite(db);
  forgetKept(handle ? [db, shapesOwner(db), handle] : [db, shapesOwner(db)]);
}
