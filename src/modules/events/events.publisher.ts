import { sql } from 'kysely';
import type { Db } from '../../db/database.js';

// PostgreSQL writes its events unnumbered (events_pending) and numbers them when they are published
// (migration 20261126T0200): no counter row that every writer waits on. Whoever reads the feed publishes
// first, so what committed before the read is in it (a client reads its own writes, on any instance),
// and a background pass (PG_SETTLE_MS, events.plugin.ts) publishes when nobody reads.
//
// Publishing when nothing is pending is one read. Within a process publishes run one at a time: a call
// while one runs waits for it and joins the next one, which starts after the call (the running one may
// have looked before the caller's write committed, so it cannot stand for the caller), and every call
// made meanwhile shares it. Across processes they queue on events_counter's lock, and the later one
// finds little or nothing left.

/** How often the settle pass vacuums events_pending, when events were published since. */
const VACUUM_EVERY_MS = 10_000;

export class Publisher {
  private running: Promise<number> | undefined;
  private queued: Promise<number> | undefined;
  private vacuumedAt = Date.now();
  private vacuumedHead: number | undefined;
  private vacuuming = false;
  /** The database's sessions are not at read committed by default: each publish opens a transaction that is. */
  private inTransaction = false;

  constructor(private readonly db: Db) {}

  /** Publishes every event committed before the call; resolves with the newest sequence then. */
  publish(): Promise<number> {
    return this.run(undefined);
  }

  /**
   * `gapMs` (the settle pass's): when no publish runs here, events_settle(gapMs) (migration
   * 20261127T1000), which publishes nothing when another process's settle pass moved events less than
   * gapMs ago. Otherwise, as publish().
   */
  private run(gapMs: number | undefined): Promise<number> {
    if (!this.running) {
      this.running = this.once(gapMs).finally(() => (this.running = undefined));
      return this.running;
    }
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.publish();
      });
    return this.queued;
  }

  /**
   * The background pass (PG_SETTLE_MS): publishes, and every VACUUM_EVERY_MS when the head moved,
   * vacuums events_pending. Every event passes through it (an insert, then a delete), and autovacuum
   * may be slow to come, or off: without it a publish would scan every row ever pending. SKIP_LOCKED:
   * while another process vacuums it, this one does not wait.
   */
  async settle(vacuumLog: { succeeded(): void; failed(err: unknown): void }, gapMs: number): Promise<void> {
    const head = await this.run(gapMs);
    if (this.vacuuming || head === this.vacuumedHead || Date.now() - this.vacuumedAt < VACUUM_EVERY_MS) return;
    this.vacuuming = true;
    try {
      await sql`vacuum (skip_locked) events_pending`.execute(this.db);
      this.vacuumedHead = head;
      vacuumLog.succeeded();
    } catch (err) {
      // Not the table's owner, say: publishing goes on (autovacuum's turn); logged once, not every time.
      vacuumLog.failed(err);
    } finally {
      this.vacuumedAt = Date.now();
      this.vacuuming = false;
    }
  }

  private async once(gapMs: number | undefined): Promise<number> {
    if (!this.inTransaction) {
      try {
        return await publishIn(this.db, gapMs);
      } catch (err) {
        if (!(err instanceof Error && err.message.includes(ISOLATION_REFUSED))) throw err;
        this.inTransaction = true;
      }
    }
    // Sessions start at a stronger isolation (default_transaction_isolation), where a statement would not
    // see what committed after its transaction began: publish in a transaction at read committed.
    return this.db
      .transaction()
      .setIsolationLevel('read committed')
      .execute((trx) => publishIn(trx, gapMs));
  }
}

/** What events_publish() says when its transaction is not at read committed (migration 20261126T0200). */
const ISOLATION_REFUSED = 'events_publish() runs at read committed';

async function publishIn(db: Db, gapMs: number | undefined): Promise<number> {
  const call = gapMs === undefined ? sql`events_publish()` : sql`events_settle(${gapMs}::integer)`;
  const { rows } = await sql<{ head: number | string }>`select ${call} as head`.execute(db);
  return Number(rows[0]!.head);
}

const publishers = new WeakMap<Db, Publisher>();

/** The one publisher of this process for `db` (a PostgreSQL handle). */
export function publisherOf(db: Db): Publisher {
  let publisher = publishers.get(db);
  if (!publisher) publishers.set(db, (publisher = new Publisher(db)));
  return publisher;
}
