import fp from 'fastify-plugin';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { isPostgres } from './dialect.js';
import { VERSIONED_TABLES } from './versioned-tables.js';
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
//
// The folder whose turn it is also does the upkeep autovacuum would (it may be off, as on the
// project's own machines; `tableUpkeep`): table_version_slots, a row of which every write to a
// versioned table updates, is vacuumed when writes came since its last vacuum (its dead rows are
// otherwise left to page pruning, and its line pointers never reclaimed); `events`, which every write
// appends to and whose plans need its statistics (a seq scan chosen over an index past ~200,000
// unanalyzed events), is analyzed when never analyzed, or when more rows changed since its last
// ANALYZE than autovacuum's own threshold (autovacuum_analyze_threshold + scale_factor x rows).

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

/** What the upkeep remembers between turns (per process): the writes counted at its last vacuum of the slots. */
export interface UpkeepState {
  slotWrites?: string;
}

/** Every write to a versioned table so far (the sum of the slots' versions): one more per write transaction. */
const SLOT_WRITES = `select cast(${VERSIONED_TABLES.map((t) => `sum(${t})`).join(' + ')} as text) from table_version_slots`;

/**
 * table_version_slots vacuumed when writes came since this process last did, `events` analyzed when
 * autovacuum would (above); neither waits for a lock another holds (skip_locked), nor gives pages
 * back (truncate false: that would take the lock every writer needs). Gives what it did.
 */
export async function tableUpkeep(db: Kysely<unknown>, state: UpkeepState): Promise<{ vacuumed: boolean; analyzed: boolean }> {
  const { rows } = await sql<{ writes: string; never: boolean; due: boolean }>`select (${sql.raw(SLOT_WRITES)}) as writes,
      c.reltuples < 0 and exists (select 1 from events) as never,
      coalesce(s.n_mod_since_analyze, 0) > current_setting('autovacuum_analyze_threshold')::float8
        + current_setting('autovacuum_analyze_scale_factor')::float8 * greatest(c.reltuples, 0) as due
    from pg_class c left join pg_stat_user_tables s on s.relid = c.oid
    where c.oid = to_regclass('events')`.execute(db);
  const row = rows[0];
  if (!row) return { vacuumed: false, analyzed: false };
  const vacuumed = row.writes !== state.slotWrites;
  if (vacuumed) {
    await sql`vacuum (skip_locked, truncate false) table_version_slots`.execute(db);
    state.slotWrites = row.writes;
  }
  const analyzed = row.never || row.due;
  if (analyzed) await sql`analyze (skip_locked) events`.execute(db);
  return { vacuumed, analyzed };
}

/**
 * What the timer runs: a fold, then, when it moved rows, the deltas vacuumed (their pages free for the
 * next writes, none scanned for dead rows); at the first fold that finds nothing after some that did
 * (the writes stopped), the deltas shrunk to what they hold. Gives whether a shrink is still due.
 */
export async function foldTick(db: Kysely<unknown>, shrinkDue: boolean, upkeep: UpkeepState = {}): Promise<boolean> {
  const moved = await foldSummaries(db);
  if (moved === undefined) return shrinkDue; // another process is folding
  await tableUpkeep(db, upkeep);
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
  const upkeep: UpkeepState = {};
  // A database outage is logged once when it starts and once when it ends, not at every tick.
  const outage = outageLog(app.log, 'folding the users summaries');
  const tick = () => {
    if (running || closing) return;
    running = true;
    foldTick(db, shrinkDue, upkeep)
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
