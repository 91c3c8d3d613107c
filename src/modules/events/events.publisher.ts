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

export class Publisher {
  private running: Promise<number> | undefined;
  private queued: Promise<number> | undefined;

  constructor(private readonly db: Db) {}

  /** Publishes every event committed before the call; resolves with the newest sequence then. */
  publish(): Promise<number> {
    if (!this.running) {
      this.running = this.once().finally(() => (this.running = undefined));
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

  private async once(): Promise<number> {
    const { rows } = await sql<{ head: number | string }>`select events_publish() as head`.execute(this.db);
    return Number(rows[0]!.head);
  }
}

const publishers = new WeakMap<Db, Publisher>();

/** The one publisher of this process for `db` (a PostgreSQL handle). */
export function publisherOf(db: Db): Publisher {
  let publisher = publishers.get(db);
  if (!publisher) publishers.set(db, (publisher = new Publisher(db)));
  return publisher;
}
