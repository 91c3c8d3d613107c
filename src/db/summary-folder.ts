import fp from 'fastify-plugin';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { isPostgres } from './dialect.js';

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
// - then the deltas are vacuumed, so that the deleted rows' pages are not scanned by every read
//   until autovacuum comes (VACUUM also gives back the emptied pages at the end of the table, when
//   it can take the table's lock without waiting). Rows deleted while an older snapshot is still
//   open (a long transaction) stay until it ends: reads scan them meanwhile.
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

/** The deltas' dead rows removed and their emptied trailing pages given back (outside a transaction). */
export async function shrinkDeltas(db: Kysely<unknown>): Promise<void> {
  await sql`vacuum users_counts_delta, users_name_counts_delta`.execute(db);
}

/** A fold, then, when it moved rows, the deltas shrunk: what the timer runs. */
export async function foldAndShrink(db: Kysely<unknown>): Promise<void> {
  const moved = await foldSummaries(db);
  if (moved) await shrinkDeltas(db);
}

async function summaryFolderPlugin(app: FastifyInstance) {
  const db = app.db as unknown as Kysely<unknown>;
  if (!isPostgres(db)) return;
  let running = false;
  let closing = false;
  const tick = () => {
    if (running || closing) return;
    running = true;
    foldAndShrink(db)
      .catch((error: unknown) => {
        if (!closing) app.log.warn({ err: error }, 'folding the users summaries failed; next try in a second');
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
