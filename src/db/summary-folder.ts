import fp from 'fastify-plugin';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { isPostgres } from './dialect.js';
import { outageLog } from '../outage-log.js';

// PostgreSQL: the users summaries' deltas folded into their folded rows (migration 20261126T0300).
//
// Writers of users append their statement's +n/-n rows to users_counts_delta and
// users_name_counts_delta (triggers, no key: no writer waits on another); every reader sums the
// folded rows and the delta (the users_counts and users_name_counts views). What the delta costs is
// read time: every total and held summary read scans it. So each process folds it in, every FOLD_MS:
// - one transaction deletes the delta rows it sees and adds them to the folded rows (an upsert in key
//   order): a reader sees the rows before or after, the same sums, exact at every instant. Writers
//   keep appending meanwhile (their rows are not in the fold's snapshot and stay for the next one);
// - one folder at a time across processes and instances (a transaction-level advisory lock, tried,
//   never waited for): the others skip their turn;
// - then the deltas are vacuumed, so that every read does not scan the deleted rows until autovacuum
//   comes (their pages are reused by the next writes); once the writes stop, the emptied pages are
//   given back too (foldTick). Rows deleted while an older snapshot is still open (a long
//   transaction) stay until it ends: reads scan them meanwhile.
// Nothing else writes the folded rows, so the fold waits on nobody and nobody waits on it.

/** How often a process folds the deltas (ms). */
export const FOLD_MS = 1000;

/** The advisory lock a folder holds while it folds (with the schema's hash: any process, any instance using the schema). */
const FOLD_LOCK = 3_200_032;

/** The summaries: their columns, conflict key and key order (as migration 20261126T0300 made them). */
const SUMMARIES = [
  { name: 'users_counts', columns: 'status, country_fold, country_key, age', key: 'status, country_key, age', order: '1, 3, 4' },
  { name: 'users_name_counts', columns: 'field, name', key: 'field, name', order: '1, 2' },
] as const;

/** One statement: the delta rows this snapshot sees, deleted and added to the folded rows; gives how many rows it moved. */
function foldStatement({ name, columns, key, order }: (typeof SUMMARIES)[number]): RawBuilder<{ moved: number }> {
  return sql.raw(`with moved as (delete from ${name}_delta returning ${columns}, n),
    folded as (insert into ${name}_folded as c (${columns}, n)
      select ${columns}, sum(n) from moved group by ${columns} having sum(n) <> 0 order by ${order}
      on conflict (${key}) do update set n = c.n + excluded.n)
    select count(*)::int as moved from moved`);
}

/**
 * Folds the deltas in, in one transaction, unless another folder is at it (then undefined). Gives
 * how many delta rows it moved. PostgreSQL only.
 */
export async function foldSummaries(db: Kysely<unknown>): Promise<number | undefined> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ got: boolean }>`select pg_try_advisory_xact_lock(${FOLD_LOCK}, hashtext(current_schema())) as got`.execute(trx);
    if (!rows[0]?.got) return undefined;
    let moved = 0;
    for (const summary of SUMMARIES) moved += (await foldStatement(summary).execute(trx)).rows[0]?.moved ?? 0;
    return moved;
  });
}

/**
 * The deltas' dead rows removed (outside a transaction; a vacuum another process runs is not waited
 * for). `shrink`: the emptied pages at the end given back too, which takes the tables' lock for a moment
 * (only when VACUUM gets it without waiting; a writer that comes meanwhile waits until VACUUM sees it
 * and lets go), so only when the writes have stopped.
 */
export async function vacuumDeltas(db: Kysely<unknown>, shrink: boolean): Promise<void> {
  if (shrink) await sql`vacuum (skip_locked) users_counts_delta, users_name_counts_delta`.execute(db);
  else await sql`vacuum (skip_locked, truncate false) users_counts_delta, users_name_counts_delta`.execute(db);
}

/**
 * What the timer runs: a fold, then, when it moved rows, the deltas vacuumed (their pages free for the
 * next writes, none scanned for dead rows); at the first fold that finds nothing after some that did
 * (the writes stopped), the deltas shrunk to what they hold. Gives whether a shrink is still due.
 */
export async function foldTick(db: Kysely<unknown>, shrinkDue: boolean): Promise<boolean> {
  const moved = await foldSummaries(db);
  if (moved === undefined) return shrinkDue; // another process is folding
  if (moved > 0) {
    await vacuumDeltas(db, false);
    return true;
  }
  if (shrinkDue) await vacuumDeltas(db, true);
  return false;
}

async function summaryFolderPlugin(app: FastifyInstance) {
  const db = app.db as unknown as Kysely<unknown>;
  if (!isPostgres(db)) return;
  let running = false;
  let closing = false;
  let shrinkDue = false;
  // A database outage is logged once when it starts and once when it ends, not at every tick.
  const outage = outageLog(app.log, 'folding the users summaries');
  const tick = () => {
    if (running || closing) return;
    running = true;
    foldTick(db, shrinkDue)
      .then((due) => {
        shrinkDue = due;
        outage.succeeded();
      })
      .catch((error: unknown) => {
        if (!closing) outage.failed(error);
      })
      .finally(() => (running = false));
  };
  const timer = setInterval(tick, FOLD_MS).unref();
  // Before the database closes, no fold starts any more. One under way is not waited for (the database
  // may be what is stuck): it commits before the connection closes, or it never happened.
  app.addHook('preClose', (done) => {
    closing = true;
    clearInterval(timer);
    done();
  });
}

export default fp(summaryFolderPlugin, { name: 'summary-folder', dependencies: ['database'] });
