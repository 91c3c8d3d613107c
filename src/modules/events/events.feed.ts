import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db/database.js';
import { activeTokens } from '../tokens/tokens.repository.js';
import { lastSequence, readEvents, readPublished, type EventRow } from './events.repository.js';
import { OneAtATime } from './one-at-a-time.js';
import { outageLog } from '../../outage-log.js';

// One reader of new events per process, shared by every stream: it polls the table (every
// EVENTS_POLL_MS while someone listens, and at once after a write this process answered), so N
// connected streams cost one query per new batch, not N. Polling the table also brings events other
// processes and instances committed. No reader sees sequence N+1 before N has committed (SQLite: the
// rowid; PostgreSQL: events are numbered as they are published, events.publisher.ts), so reading
// `sequence > head` never skips an event that commits later.
//
// Credentials: a stream lives as long as its token. Before it hands new events on, the feed asks the
// tokens table (one query for all its streams) which of its subscribers' tokens still work, after
// reading the events: a revocation that committed before an event did is seen, whichever process or
// instance made it, so no event written after a token ended reaches its stream. After a write answered
// here (a DELETE /tokens among them) it asks even when no event came, so a revocation ends the
// streams of this process at once.

export interface Subscriber {
  /** The stored token the subscriber reads with; null for CATALOGUE_ADMIN_TOKEN, which never ends. */
  readonly tokenId: number | null;
  /** Every event after the feed's head, in order, unfiltered. */
  push(rows: readonly EventRow[]): void;
  /** Its token no longer works: it must send nothing more (and unsubscribe). */
  end(): void;
}

const PAGE = 1000;

export class EventFeed {
  private head: number | undefined;
  private starting: Promise<void> | undefined;
  private readonly subscribers = new Set<Subscriber>();
  private timer: NodeJS.Timeout | undefined;
  private readonly reads = new OneAtATime(() => this.read());
  private closed = false;
  /** A write was answered here since the last read: a token may have been revoked. */
  private tokensMayHaveChanged = false;

  constructor(
    private readonly db: Db,
    private readonly pollMs: number,
    log: FastifyBaseLogger,
  ) {
    this.outage = outageLog(log, 'reading new events');
  }

  /** Polls run every EVENTS_POLL_MS: an outage is logged when it starts and when it ends, not at each poll. */
  private readonly outage: ReturnType<typeof outageLog>;

  /**
   * Resolves once the subscriber receives every event after the feed's head; the head is read before
   * it resolves, so a subscriber that then reads the table itself up to its end misses nothing between.
   */
  async subscribe(subscriber: Subscriber): Promise<() => void> {
    this.subscribers.add(subscriber);
    this.starting ??= lastSequence(this.db).then((last) => {
      this.head = last;
    });
    try {
      await this.starting;
    } catch (err) {
      this.starting = undefined;
      this.subscribers.delete(subscriber);
      throw err;
    }
    this.timer ??= setInterval(() => this.wake(), this.pollMs).unref();
    return () => {
      this.subscribers.delete(subscriber);
      if (this.subscribers.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** Reads new events now (`afterWrite`: a write was just answered here; else the poll is due). */
  wake(afterWrite = false): void {
    if (this.head === undefined || this.subscribers.size === 0 || this.closed) return;
    if (afterWrite) this.tokensMayHaveChanged = true;
    this.reads.wake();
  }

  private async read(): Promise<void> {
    const recheck = this.tokensMayHaveChanged;
    this.tokensMayHaveChanged = false;
    try {
      for (let first = true; ; first = false) {
        // The first page publishes what committed before the pass (PostgreSQL); the next ones go on reading.
        const rows = await (first ? readEvents : readPublished)(this.db, this.head!, PAGE, null);
        if (rows.length > 0 || recheck) await this.endRevoked();
        this.outage.succeeded();
        if (rows.length === 0) return;
        this.head = rows[rows.length - 1]!.sequence;
        for (const subscriber of this.subscribers) subscriber.push(rows);
        if (rows.length < PAGE) return;
      }
    } catch (err) {
      // The next poll tries again from the same head, and asks about the tokens again before it
      // hands anything on: nothing is skipped, nothing reaches a token that ended.
      if (recheck) this.tokensMayHaveChanged = true;
      if (!this.closed) this.outage.failed(err);
    }
  }

  /** Ends every subscriber whose stored token was revoked or has expired. */
  private async endRevoked(): Promise<void> {
    const ids = new Set<number>();
    for (const subscriber of this.subscribers) if (subscriber.tokenId !== null) ids.add(subscriber.tokenId);
    if (ids.size === 0) return;
    const active = await activeTokens(this.db, [...ids]);
    for (const subscriber of [...this.subscribers]) {
      if (subscriber.tokenId !== null && !active.has(subscriber.tokenId)) subscriber.end();
    }
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.subscribers.clear();
  }
}
