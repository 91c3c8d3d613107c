import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db/database.js';
import { lastSequence, readEvents, type EventRow } from './events.repository.js';
import { OneAtATime } from './one-at-a-time.js';

// One reader of new events per process, shared by every stream: it polls the table (every
// EVENTS_POLL_MS while someone listens, and at once after a write this process answered), so N
// connected streams cost one query per new batch, not N. Polling the table also brings events other
// processes and instances committed. Sequences are handed out in commit order (migration
// 20261124T0700), so reading `sequence > head` never skips an event that commits later.

export interface Subscriber {
  /** Every event after the feed's head, in order, unfiltered. */
  push(rows: readonly EventRow[]): void;
}

const PAGE = 1000;

export class EventFeed {
  private head: number | undefined;
  private starting: Promise<void> | undefined;
  private readonly subscribers = new Set<Subscriber>();
  private timer: NodeJS.Timeout | undefined;
  private readonly reads = new OneAtATime(() => this.read());
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly pollMs: number,
    private readonly log: FastifyBaseLogger,
  ) {}

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

  /** Reads new events now (a write was just answered, or the poll is due). */
  wake(): void {
    if (this.head === undefined || this.subscribers.size === 0 || this.closed) return;
    this.reads.wake();
  }

  private async read(): Promise<void> {
    try {
      for (;;) {
        const rows = await readEvents(this.db, this.head!, PAGE, null);
        if (rows.length === 0) return;
        this.head = rows[rows.length - 1]!.sequence;
        for (const subscriber of this.subscribers) subscriber.push(rows);
        if (rows.length < PAGE) return;
      }
    } catch (err) {
      // The next poll tries again from the same head: nothing is skipped.
      if (!this.closed) this.log.warn({ err }, 'reading new events failed');
    }
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.subscribers.clear();
  }
}
