import type { ServerResponse } from 'node:http';
import type { Db } from '../../db/database.js';
import { activeTokens } from '../tokens/tokens.repository.js';
import type { EventFeed, Subscriber } from './events.feed.js';
import { eventJson, lastSequence, readEvents, readPublished, type EventRow } from './events.repository.js';

// One Server-Sent Events connection. It subscribes to the feed first, then reads the table itself
// from its starting point up to the end while the feed's pushes wait in a buffer, then hands the
// buffer on: events the catch-up read already sent are dropped by sequence, so the client sees every
// event after its start once, in order, with no gap where catch-up and live meet.
//
// It ends with its token: at its expires_at (a timer, and a check before every write), and when
// revoked (the feed asks before every push; the catch-up asks after every page it reads).

const CATCH_UP_PAGE = 500;
/** A client this far behind (bytes waiting in its socket) is dropped; it resumes with Last-Event-ID. */
const MAX_BACKLOG = 4 * 1024 * 1024;
/** The longest delay setTimeout takes (about 24.8 days); a later expiry is reached in steps. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export class EventStream implements Subscriber {
  private buffer: EventRow[] | null = [];
  private unsubscribe: (() => void) | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private expiry: NodeJS.Timeout | undefined;
  /** When the token expires (ms since the epoch); Infinity: never, or not known yet. */
  private expiresAt = Infinity;
  private ended = false;

  constructor(
    private readonly res: ServerResponse,
    private cursor: number | undefined,
    private readonly visible: (row: EventRow) => boolean,
    /** The stored token the client reads with; null for CATALOGUE_ADMIN_TOKEN. */
    readonly tokenId: number | null,
  ) {}

  async start(db: Db, feed: EventFeed, heartbeatMs: number): Promise<void> {
    this.res.once('close', () => this.end());
    this.unsubscribe = await feed.subscribe(this);
    if (this.ended) return this.unsubscribe();
    // From now on: what the table holds once subscribed (the feed's head may be behind it).
    // Publishing first (PostgreSQL), once: the catch-up reaches at least the feed's head.
    let published = this.cursor === undefined;
    this.cursor ??= await lastSequence(db);
    for (;;) {
      const rows = await (published ? readPublished : readEvents)(db, this.cursor, CATCH_UP_PAGE, null);
      published = true;
      // Asked after the read, as the feed does: a token ended before these events were written never gets them.
      if (!this.ended && !(await this.tokenWorks(db))) this.end();
      if (this.ended) return;
      this.send(rows);
      if (rows.length < CATCH_UP_PAGE) break;
    }
    const waiting = this.buffer!;
    this.buffer = null;
    this.send(waiting);
    this.heartbeat = setInterval(() => this.write(': heartbeat\n\n'), heartbeatMs);
  }

  /** Whether the token still works; the first answer also sets the timer that ends the stream at its expiry. */
  private async tokenWorks(db: Db): Promise<boolean> {
    if (this.tokenId === null) return true;
    const active = await activeTokens(db, [this.tokenId]);
    if (!active.has(this.tokenId)) return false;
    const expiresAt = active.get(this.tokenId);
    if (expiresAt && this.expiry === undefined) this.endAt(Date.parse(expiresAt));
    return true;
  }

  private endAt(expiresAt: number): void {
    this.expiresAt = expiresAt;
    const wait = () => {
      const left = this.expiresAt - Date.now();
      // A timer may fire a millisecond early: it waits again for what is left.
      if (left <= 0) return this.end();
      this.expiry = setTimeout(wait, Math.min(left, MAX_TIMEOUT_MS));
    };
    wait();
  }

  push(rows: readonly EventRow[]): void {
    if (this.buffer) this.buffer.push(...rows);
    else this.send(rows);
  }

  private send(rows: readonly EventRow[]): void {
    let out = '';
    for (const row of rows) {
      if (row.sequence <= this.cursor!) continue;
      this.cursor = row.sequence;
      if (this.visible(row)) out += `id: ${row.sequence}\ndata: ${eventJson(row)}\n\n`;
    }
    if (out) this.write(out);
  }

  private write(text: string): void {
    if (this.ended) return;
    // The expiry timer may not have run yet at the very millisecond: nothing goes out after it.
    if (Date.now() >= this.expiresAt) return this.end();
    if (this.res.writableLength > MAX_BACKLOG) return this.end();
    this.res.write(text);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.heartbeat);
    clearTimeout(this.expiry);
    this.unsubscribe?.();
    // The socket goes with the stream: a client that went away may leave it half-open otherwise, and
    // the server's close would wait for it.
    this.res.end(() => this.res.destroy());
  }
}
