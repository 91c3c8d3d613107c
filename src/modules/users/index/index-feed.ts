import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../../db/database.js';
import { directSqlite } from '../../../db/precompiled.js';
import { sqliteTableStamp, stampOf, tableStamp } from '../../../db/table-stamps.js';
import type { VersionsAfter } from '../../../db/arrivals.js';
import { readTable } from '../../../db/reads.js';
import { lastSequence, readPublished } from '../../events/events.repository.js';
import type { ListPlan } from '../../../query/sql.js';
import type { ListResult } from '../../../query/index.js';
import { UsersIndex, type StoredUser, type UserRow } from './users-index.js';
import { USERS_INDEX_ANSWERS, indexSortOf } from './answers.js';
import { answerFromIndex } from './query.js';
import { outageLog } from '../../../outage-log.js';
import { USERS } from '../users.table.js';

// The users index of one worker, loaded in the background and kept current by the change feed
// (docs/events.md): before it answers a list it applies every user event up to the head of the
// feed it reads then, so a write acknowledged by any worker, instance or psql session is in the
// answer. The events say which users changed; their rows are read again from the table, with their
// stored keys (a row written by hand sorts where its stored key says, as in SQL).
//
// Fast path: the users table's version (table_versions, moved by triggers in every transaction that
// writes users, in the same commit as its events) is read first; while it is the one read before the
// last catch-up, no user event can have been written since, and the feed is not read.

const USER_EVENTS = ['user.created', 'user.updated', 'user.deleted'] as const;
const EVENTS_PAGE = 1000;
const LOAD_PAGE = 5_000;
const ROWS_PAGE = 500;
/** The columns of StoredUser, from the table module: the fields, each name's collation key, the country's fold. */
const COLUMNS = [...USERS.fields, ...USERS.names.map((name) => `${name}_key` as const), 'country_fold' as const];

/**
 * Whether every users write a stamp counts (read after the request arrived) is applied when the index
 * is synced to `synced`: the same version, or an older one (table versions only grow; a read of them
 * shared by the requests that arrived before it may be older than the last catch-up's own read, and
 * that catch-up applied everything up to its version).
 */
function covered(stamp: string, synced: string | undefined): boolean {
  if (synced === undefined) return false;
  if (stamp === synced) return true;
  const a = /^(\d+);$/.exec(stamp);
  const b = /^(\d+);$/.exec(synced);
  return a !== null && b !== null && Number(a[1]) <= Number(b[1]);
}

export type IndexState = 'loading' | 'ready' | 'failed' | 'closed';

export class UsersIndexFeed {
  state: IndexState = 'loading';
  index = new UsersIndex();
  /** Every user event up to this sequence is applied. */
  applied = 0;
  /** The users table's version read before the last catch-up began. */
  private syncedStamp: string | undefined;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  /** Milliseconds the load took (from start to ready), for /metrics. */
  loadMs: number | undefined;
  readonly loaded: Promise<void>;
  private timer: NodeJS.Timeout | undefined;

  private readonly outage: ReturnType<typeof outageLog>;
  private retryTimer: NodeJS.Timeout | undefined;
  private wakeRetry: (() => void) | undefined;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly pollMs: number,
    private readonly versionsAfter?: VersionsAfter,
  ) {
    // A database outage (at start, or while catching up in the background) is logged once when it starts and once when it ends.
    this.outage = outageLog(log, 'users index (loading, or applying the change feed)');
    this.loaded = this.loadUntilDone().then(() => {
      if (this.state !== 'ready') return;
      this.timer = setInterval(
        () =>
          void this.current().then(
            () => this.outage.succeeded(),
            (err: unknown) => this.outage.failed(err),
          ),
        pollMs,
      ).unref();
    });
  }

  close(): void {
    this.state = 'closed';
    if (this.timer) clearInterval(this.timer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.wakeRetry?.();
  }

  /**
   * The page and total from the index, or undefined: not ready, or not a list it answers (then SQL
   * answers). `arrival`: the request's number (db/arrivals.ts), whose users version may be one read
   * for the requests that arrived with it.
   */
  async list(plan: ListPlan, arrival?: number): Promise<ListResult<UserRow> | undefined> {
    if (this.state !== 'ready') return undefined;
    const sort = indexSortOf(USERS_INDEX_ANSWERS, plan);
    if (!sort) return undefined;
    try {
      await this.current(arrival);
    } catch (err) {
      // A change the index could not apply (it is 'failed' now, logged): SQL answers this list too, as every later one.
      if ((this.state as IndexState) === 'failed') return undefined;
      throw err;
    }
    if (this.state !== 'ready') return undefined;
    // A user whose age the index cannot hold as SQL compares it (a text, by hand on SQLite): SQL answers.
    if (this.index.notNumbers.size > 0) return undefined;
    return answerFromIndex(this.index, USERS_INDEX_ANSWERS, sort, plan);
  }

  /** Resolves once every user event committed before the call (before the request numbered `arrival` arrived) is applied. */
  async current(arrival?: number): Promise<void> {
    if (this.state !== 'ready') return;
    if (!this.running && covered(await this.stampAfter(arrival), this.syncedStamp) && !this.running) return;
    return this.sync();
  }

  /** The users table's version, read after the request arrived: shared with the requests that arrived with it, when numbered. */
  private async stampAfter(arrival: number | undefined): Promise<string> {
    if (arrival === undefined || !this.versionsAfter) return this.stamp();
    const versions = await this.versionsAfter(arrival);
    readTable('users');
    return stampOf(versions, ['users']);
  }

  /** One catch-up that starts after this call (joining one queued already). */
  private sync(): Promise<void> {
    if (!this.running) {
      this.running = this.catchUp().finally(() => (this.running = undefined));
      return this.running;
    }
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.sync();
      });
    return this.queued;
  }

  private async stamp(): Promise<string> {
    const handle = directSqlite(this.db);
    return handle ? sqliteTableStamp(handle, 'users') : tableStamp(this.db, 'users');
  }

  /** Applies the user events after `applied`, up to at least the head of the feed read first. */
  private async catchUp(): Promise<void> {
    const stamp = await this.stamp();
    const head = await lastSequence(this.db);
    const changed = new Set<number>();
    const created = new Set<number>();
    let after = this.applied;
    for (;;) {
      // `head` was read by publishing (PostgreSQL): every user event committed before this call is published.
      // Bounded by `head` as well: PostgreSQL without statistics on events (never analyzed: autovacuum off,
      // or not yet) takes `sequence > after` for a third of the table and, past ~200,000 events, scans all
      // of it (a parallel scan per catch-up, ~40 ms on 3 processes, every poll under user writes); a range
      // it takes for a few rows, read through the key. Events after `head` wait for the next catch-up.
      const events = await readPublished(this.db, after, EVENTS_PAGE, USER_EVENTS, head);
      for (const e of events) {
        const id = Number((JSON.parse(e.resource) as { id: unknown }).id);
        changed.add(id);
        if (e.type === 'user.created') created.add(id);
      }
      if (events.length > 0) after = events[events.length - 1]!.sequence;
      if (events.length < EVENTS_PAGE) break;
    }
    const changes = new Map<number, StoredUser | null>();
    // An update of a user never created, as far as the index knows, is a row whose id was changed by
    // hand (psql: update users set id = ...): its event names the new id only, so the old one is found
    // by reading every id the table holds (rare; an id is not otherwise written) and dropped.
    if ([...changed].some((id) => !created.has(id) && !this.index.slotOf.has(id))) {
      const held = new Set((await this.db.selectFrom('users').select('id').execute()).map((r) => r.id));
      for (const id of this.index.heldIds()) if (!held.has(id)) changes.set(id, null);
    }
    const ids = [...changed];
    for (let i = 0; i < ids.length; i += ROWS_PAGE) {
      const part = ids.slice(i, i + ROWS_PAGE);
      for (const id of part) changes.set(id, null);
      const rows = await this.db.selectFrom('users').select(COLUMNS).where('id', 'in', part).execute();
      for (const row of rows) changes.set(row.id, row);
    }
    try {
      if (changes.size > 0) this.index.apply(changes);
    } catch (err) {
      // A structure no longer what the table holds answers nothing: SQL answers until a restart.
      this.state = 'failed';
      this.log.error({ err }, 'users index: a change could not be applied; lists are answered by SQL');
      throw err;
    }
    this.applied = Math.max(head, after);
    this.syncedStamp = stamp;
  }

  /** Loads, and after a failure (the database unreachable) starts again from nothing after a pause, until loaded or closed. */
  private async loadUntilDone(): Promise<void> {
    let pause = this.pollMs;
    while (this.state === 'loading') {
      try {
        await this.load();
        this.outage.succeeded();
        return;
      } catch (err) {
        if (this.state !== 'loading') return;
        this.outage.failed(err);
        this.index = new UsersIndex();
        await new Promise<void>((resolve) => {
          this.wakeRetry = resolve;
          this.retryTimer = setTimeout(resolve, pause).unref();
        });
        pause = Math.min(pause * 2, 30_000);
      }
    }
  }

  private async load(): Promise<void> {
    const started = performance.now();
    const head = await lastSequence(this.db);
    const counted = await this.db
      .selectFrom('users')
      .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.sum<number | string | null>(eb.fn<number>('length', ['email'])).as('chars')])
      .executeTakeFirst();
    // A little room for the users written while it loads; the emails' characters are their UTF-8 bytes when ASCII (else the store grows).
    this.index.reserve(Math.ceil(Number(counted?.n ?? 0) * 1.02) + 1024, Math.ceil(Number(counted?.chars ?? 0) * 1.02));
    // From the first id whatever it is: a row written by hand may have id 0 or a negative one.
    let after: number | undefined;
    for (;;) {
      if (this.state !== 'loading') return;
      let page = this.db.selectFrom('users').select(COLUMNS);
      if (after !== undefined) page = page.where('id', '>', after);
      const rows = await page.orderBy('id').limit(LOAD_PAGE).execute();
      this.index.add(rows);
      if (rows.length < LOAD_PAGE) break;
      after = rows[rows.length - 1]!.id;
      // Other requests are served between pages.
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.index.finishLoad();
    // Rows read after `head` are at least as new as it; the events after it are applied again (idempotent: rows are re-read).
    this.applied = head;
    this.syncedStamp = undefined;
    await this.catchUp();
    if (this.state !== 'loading') return;
    this.state = 'ready';
    this.loadMs = performance.now() - started;
    this.log.info({ users: this.index.size, ms: Math.round(this.loadMs), bytes: this.index.bytes() }, 'users index ready');
  }
}
