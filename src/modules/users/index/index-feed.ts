import type { FastifyBaseLogger } from 'fastify';
import type { Database, Db } from '../../../db/database.js';
import { directSqlite, param, prepared } from '../../../db/precompiled.js';
import { inOrder, named, type Named } from '../../../db/named-params.js';
import { postgresTableStampSql, sqliteTableStamp, stampOf, tableStamp } from '../../../db/table-stamps.js';
import type { VersionsAfter } from '../../../db/arrivals.js';
import { readTable } from '../../../db/reads.js';
import { CompiledQuery, sql, type ExpressionBuilder } from 'kysely';
import { isPostgres } from '../../../db/dialect.js';
import { lastSequence } from '../../events/events.repository.js';
import type { ListPlan } from '../../../query/sql.js';
import type { ListResult } from '../../../query/index.js';
import { UsersIndex, type ColumnPositions, type StoredUser, type UserRow } from './users-index.js';
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
/**
 * Rows a load page reads. Each page's rows are garbage once added; at 5,000 enough of them outlived a
 * young collection to leave ~10 MB more of old space at the load's peak on 1M users (VmHWM 224.6 ->
 * 214.6 MiB in one process at 1,000); the load was no slower.
 */
const LOAD_PAGE = 1_000;
/** Id ranges the load's census (UsersIndexFeed.census) sums one at a time: about 10 ms each on 1M users on SQLite. */
const CENSUS_RANGES = 16;
/** The columns of StoredUser, from the table module: the fields, each name's collation key, the country's fold, the row version (a single user's ETag). */
const COLUMNS = [...USERS.fields, ...USERS.names.map((name) => `${name}_key` as const), 'country_fold' as const, 'version' as const];

/**
 * A load page's statements on SQLite's worker connection: the first page (from the first id, whatever
 * it is: a row written by hand may have id 0 or a negative one), and each next one after the last id read.
 */
const SQLITE_LOAD_SELECT = `select ${COLUMNS.map((c) => `"${c}"`).join(', ')} from users`;
const SQLITE_LOAD_FIRST = `${SQLITE_LOAD_SELECT} order by id limit ${LOAD_PAGE}`;
const SQLITE_LOAD_AFTER = `${SQLITE_LOAD_SELECT} where id > @after order by id limit ${LOAD_PAGE}`;

/** A load page: rows as arrays with their columns' positions (read directly), or objects (through Kysely). */
type LoadPage = { rows: readonly (readonly unknown[])[]; at: ColumnPositions } | { objects: StoredUser[] };

/**
 * Where each of COLUMNS is in a statement's rows, by the names the statement itself gives its columns
 * (better-sqlite3's columns()): never an order kept in step by hand with the statement's text.
 */
function positionsOf(names: readonly string[]): ColumnPositions {
  const at: Record<string, number> = {};
  for (const c of COLUMNS) {
    const i = names.indexOf(c);
    if (i < 0) throw new Error(`users index load: the page has no column ${c} (${names.join(', ')})`);
    at[c] = i;
  }
  return at as ColumnPositions;
}

/** eventsWithRows's statement with its values named (after, head, limit), for the worker's own connection. */
const SQLITE_EVENTS_WITH_ROWS = `with ev as (
  select sequence, type, resource from events
  where sequence > @after and sequence <= @head and type in (${USER_EVENTS.map((t) => `'${t}'`).join(', ')})
  order by sequence limit @limit)
select ev.sequence as ev_sequence, ev.type as ev_type, ev.resource as ev_resource, ${COLUMNS.map((c) => `u."${c}"`).join(', ')}
from ev left join users u on u.id = json_extract(ev.resource, '$.id')
order by ev.sequence`;

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

/** The newer of two stamps of the users table (numbers where both are; else the later one given). */
function newer(a: string | undefined, b: string): string {
  if (a === undefined) return b;
  const x = /^(\d+);$/.exec(a);
  const y = /^(\d+);$/.exec(b);
  return x !== null && y !== null && Number(x[1]) > Number(y[1]) ? a : b;
}

/** A user event with the row of the user it names (columns null: no such row). */
type EventWithRow = {
  /** PostgreSQL: the head read in the same statement. */
  ev_head?: number | string | null;
  /** PostgreSQL: the users table's version read in the same statement (its stamp, as stampOf gives it). */
  ev_stamp?: string | null;
  /** Null: committed, not yet published (PostgreSQL). */
  ev_sequence: number | string | null;
  ev_type: string | null;
  ev_resource: string | null;
} & { [K in keyof StoredUser]: StoredUser[K] | null };

/** The row part of an EventWithRow (its id not null): the StoredUser, by the names of COLUMNS. */
function storedOf(e: EventWithRow): StoredUser {
  const row = {} as Record<string, unknown>;
  for (const c of COLUMNS) row[c] = e[c];
  return row as StoredUser;
}

/**
 * PostgreSQL, in one statement (one snapshot): the head (events_counter: every published event is at
 * or below it), the published user events in (after, head] (at most EVENTS_PAGE, in sequence order),
 * and the user events committed but not yet published (events_pending from its bound, through
 * events_pending_rows(): migration 20261127T0200; no sequence), each with the
 * row of the user it names; one row with the head alone when there are none; every row with the users
 * table's version (its stamp) in the same snapshot. A publish moves events
 * from one table to the other in one transaction, so every user event committed before the statement
 * is in exactly one of the two: applied without publishing first (no round trip, and no write
 * transaction of a catch-up's own). The pending ones come again, numbered, after a later head: applied
 * again then (a row is read anew; applying it twice changes nothing). `after` is bound by name
 * (param): the statement is built once and run with each catch-up's value (UsersIndexFeed.eventsWithRowsPg).
 */
function eventsWithRowsPgSql() {
  const types = sql.join(USER_EVENTS.map((type) => sql.lit(type)));
  return sql<EventWithRow>`
      with ev as (
        (select sequence, type, resource from events
         where sequence > ${param<number>('after')} and sequence <= (select value from events_counter) and type in (${types})
         order by sequence limit ${sql.lit(EVENTS_PAGE)})
        union all
        select null::bigint, type, resource from events_pending_rows() where type in (${types}))
      select c.value as ev_head, ${postgresTableStampSql('users')} as ev_stamp, ev.sequence as ev_sequence, ev.type as ev_type, ev.resource as ev_resource,
        ${sql.join(COLUMNS.map((c) => sql.ref(`u.${c}`)))}
      from events_counter c
      left join ev on true
      left join users u on u.id = cast(ev.resource::json ->> 'id' as bigint)
      order by ev.sequence nulls last`;
}

export type IndexState = 'loading' | 'ready' | 'failed' | 'closed';

export class UsersIndexFeed {
  state: IndexState = 'loading';
  index = new UsersIndex();
  /** Every user event up to this sequence is applied. */
  applied = 0;
  /** The users table's version read before the last catch-up began. */
  private syncedStamp: string | undefined;
  /** PostgreSQL: the catch-up's statement, compiled once (eventsWithRowsPg). */
  private catchUpQuery: Named | undefined;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  /** The newest stamp of the callers waiting for the queued catch-up (see sync). */
  private queuedStamp: string | undefined;
  /** Whether a caller without a stamp (the poll) waits for the queued catch-up: it runs then, whatever was applied. */
  private queuedUnstamped = false;
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

  /**
   * GET /users/{id} from the index (issue 32: on PostgreSQL a statement, and a round trip after the
   * token's, for 15% of the mix): the user and its row version as the table holds them, once every
   * user event committed before the request arrived is applied, as for a list. Undefined: not ready,
   * no such user held, or one the index cannot give as SQL does (then SQL answers, a 404 included).
   */
  async user(id: number, arrival?: number): Promise<(UserRow & { version: number }) | undefined> {
    if (this.state !== 'ready') return undefined;
    try {
      await this.current(arrival);
    } catch (err) {
      if ((this.state as IndexState) === 'failed') return undefined;
      throw err;
    }
    if (this.state !== 'ready' || this.index.notNumbers.size > 0) return undefined;
    // The answer depends on the users table (the response cache's stamp): recorded whatever current() read.
    readTable('users');
    return this.index.user(id);
  }

  /** Resolves once every user event committed before the call (before the request numbered `arrival` arrived) is applied. */
  async current(arrival?: number): Promise<void> {
    if (this.state !== 'ready') return;
    // A request's stamp is read anyway (shared by the requests that arrived with it, the token lookup's);
    // the poll reads one only when no catch-up is under way.
    const stamp = this.running && arrival === undefined ? undefined : await this.stampAfter(arrival);
    if (stamp !== undefined && covered(stamp, this.syncedStamp) && !this.running) return;
    return this.sync(stamp);
  }

  /** The users table's version, read after the request arrived: shared with the requests that arrived with it, when numbered. */
  private async stampAfter(arrival: number | undefined): Promise<string> {
    if (arrival === undefined || !this.versionsAfter) return this.stamp();
    const versions = await this.versionsAfter(arrival);
    readTable('users');
    return stampOf(versions, ['users']);
  }

  /**
   * One catch-up that starts after this call (joining one queued already). `stamp`: the users version,
   * read before this call, that the caller found not covered: the catch-up's head is read after it,
   * so once applied it covers that version and needs no read of its own (the newest such stamp of
   * the callers that joined it before it started; without any, it reads one first). A queued
   * catch-up whose callers all gave a stamp that the running one turned out to apply does not run.
   */
  private sync(stamp?: string): Promise<void> {
    if (!this.running) {
      this.running = this.catchUp(stamp).finally(() => (this.running = undefined));
      return this.running;
    }
    if (stamp !== undefined) this.queuedStamp = newer(this.queuedStamp, stamp);
    else this.queuedUnstamped = true;
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        const queuedStamp = this.queuedStamp;
        const unstamped = this.queuedUnstamped;
        this.queuedStamp = undefined;
        this.queuedUnstamped = false;
        // Every caller that joined said which version it must see: when the catch-up that ran meanwhile
        // applied it (it reads the version in its own statement, after theirs), none is needed.
        if (!unstamped && queuedStamp !== undefined && covered(queuedStamp, this.syncedStamp)) return;
        return this.sync(queuedStamp);
      });
    return this.queued;
  }

  private async stamp(): Promise<string> {
    const handle = directSqlite(this.db);
    return handle ? sqliteTableStamp(handle, 'users') : tableStamp(this.db, 'users');
  }

  /**
   * Applies the user events after `applied`, up to at least the head of the feed read first.
   * `stamp`: a users version read before this call (else one is read first); once the events up to the
   * head are applied, every write it counts is.
   */
  private async catchUp(stamp?: string): Promise<void> {
    stamp ??= await this.stamp();
    const postgres = isPostgres(this.db);
    // SQLite: the head first (every event committed before it is numbered). PostgreSQL: each page's own
    // statement reads the head with the published events and the pending ones (eventsWithRowsPg).
    let head = postgres ? this.applied : (this.sqliteHead() ?? (await lastSequence(this.db)));
    /** Each user an event names, with its row as read in the statement that read the event (null: none, deleted). */
    const read = new Map<number, StoredUser | null>();
    const created = new Set<number>();
    let after = this.applied;
    /** PostgreSQL: the users version read by the last page's statement, in the snapshot of the events it applies. */
    let seen: string | undefined;
    for (;;) {
      // Bounded by the head as well: PostgreSQL without statistics on events (never analyzed: autovacuum off,
      // or not yet) takes `sequence > after` for a third of the table and, past ~200,000 events, scans all
      // of it (a parallel scan per catch-up, ~40 ms on 3 processes, every poll under user writes); a range
      // it takes for a few rows, read through the key. Events after the head wait for the next catch-up.
      // The rows come in the same statement (one round trip, not two): read with the events or after them,
      // each is at least as new as its event, as when read by id afterwards.
      const page = postgres ? await this.eventsWithRowsPg(after) : (this.sqliteEventsWithRows(after, head) ?? (await this.eventsWithRows(after, head)));
      let published = 0;
      for (const e of page) {
        if (e.ev_head !== undefined && e.ev_head !== null) head = Math.max(head, Number(e.ev_head));
        if (e.ev_stamp !== undefined && e.ev_stamp !== null) seen = newer(seen, e.ev_stamp);
        if (e.ev_resource === null) continue; // PostgreSQL: the head alone, no event
        const id = Number((JSON.parse(e.ev_resource) as { id: unknown }).id);
        // The row joined by the id the event names (the same id, as the table holds it), or none.
        const row = e.id !== null && Number(e.id) === id ? storedOf(e) : null;
        // A later page's statement read later: its row (or its absence) is the newer.
        read.set(id, row);
        if (e.ev_type === 'user.created') created.add(id);
        if (e.ev_sequence !== null) {
          published++;
          after = Math.max(after, Number(e.ev_sequence));
        }
      }
      if (published < EVENTS_PAGE) break;
    }
    const changed = new Set(read.keys());
    const changes = new Map<number, StoredUser | null>();
    // An update of a user never created, as far as the index knows, is a row whose id was changed by
    // hand (psql: update users set id = ...): its event names the new id only, so the old one is found
    // by reading every id the table holds (rare; an id is not otherwise written) and dropped.
    if ([...changed].some((id) => !created.has(id) && !this.index.slotOf.has(id))) {
      const held = new Set((await this.db.selectFrom('users').select('id').execute()).map((r) => r.id));
      for (const id of this.index.heldIds()) if (!held.has(id)) changes.set(id, null);
    }
    for (const [id, row] of read) changes.set(id, row);
    try {
      if (changes.size > 0) this.index.apply(changes);
    } catch (err) {
      // A structure no longer what the table holds answers nothing: SQL answers until a restart.
      this.state = 'failed';
      this.log.error({ err }, 'users index: a change could not be applied; lists are answered by SQL');
      throw err;
    }
    this.applied = Math.max(head, after);
    // PostgreSQL: the last page's statement saw every user event committed before it (published up to
    // its head, pending ones) and, in the same snapshot, the users version those writes moved: that
    // version is applied too. A write that committed after `stamp` was read and before the catch-up
    // began needs no catch-up of its own then (issue 32).
    this.syncedStamp = newer(newer(this.syncedStamp, stamp), seen ?? stamp);
  }

  /** SQLite, on the worker's connection (undefined: none, or in a transaction: Kysely reads it): the newest event's sequence. */
  private sqliteHead(): number | undefined {
    const handle = directSqlite(this.db);
    if (!handle) return undefined;
    const row = prepared(handle, 'select max(sequence) as last from events').get() as { last: number | null } | undefined;
    return Number(row?.last ?? 0);
  }

  /**
   * eventsWithRows on the worker's connection, its values bound by name (undefined: no such connection
   * now, eventsWithRows reads them): without Kysely's build, compile and driver, which cost about as much as
   * the statement itself on every catch-up.
   */
  private sqliteEventsWithRows(after: number, head: number): EventWithRow[] | undefined {
    const handle = directSqlite(this.db);
    if (!handle) return undefined;
    return prepared(handle, SQLITE_EVENTS_WITH_ROWS).all({ after, head, limit: EVENTS_PAGE }) as EventWithRow[];
  }

  /**
   * SQLite: the user events in (after, head], at most EVENTS_PAGE in sequence order, each with the row
   * of the user it names (its COLUMNS; all null when the table has none), in one statement.
   */
  private async eventsWithRows(after: number, head: number): Promise<EventWithRow[]> {
    const { rows } = await sql<EventWithRow>`
      with ev as (
        select sequence, type, resource from events
        where sequence > ${after} and sequence <= ${head} and type in (${sql.join(USER_EVENTS)})
        order by sequence limit ${EVENTS_PAGE})
      select ev.sequence as ev_sequence, ev.type as ev_type, ev.resource as ev_resource, ${sql.join(COLUMNS.map((c) => sql.ref(`u.${c}`)))}
      from ev left join users u on u.id = json_extract(ev.resource, '$.id')
      order by ev.sequence`.execute(this.db);
    return rows;
  }

  /** PostgreSQL: eventsWithRowsPgSql's rows after `after` (the published events past it, the pending ones, the head). */
  private async eventsWithRowsPg(after: number): Promise<EventWithRow[]> {
    // Built and compiled once per feed (its text never changes; `after` is its only value): Kysely's
    // build of it (the joins, a reference per column, a query id) cost more of the worker's CPU than
    // the rest of the catch-up but the index's own moves (issue 32, a profile of the PATCH mix).
    const query = (this.catchUpQuery ??= named(eventsWithRowsPgSql().compile(this.db), 'users index catch-up'));
    const { rows } = await this.db.executeQuery<EventWithRow>(CompiledQuery.raw(query.sql, inOrder(query.names, { after })));
    return rows;
  }

  /**
   * The load's page after the id `after` (undefined: from the first id): as arrays on the worker's own
   * SQLite connection (the statement's column names give each column's position), else as objects
   * through Kysely (PostgreSQL; SQLite in a transaction, whose uncommitted rows must not be read).
   * PostgreSQL's rows as arrays (rowMode 'array', run unnamed on the pool) were tried: the worker's
   * VmHWM after the load rose from 187 to 244 MiB at 1M users, and the load was no faster.
   */
  private async loadPage(after: number | undefined): Promise<LoadPage> {
    const handle = directSqlite(this.db);
    if (handle) {
      const stmt = prepared(handle, after === undefined ? SQLITE_LOAD_FIRST : SQLITE_LOAD_AFTER);
      // The statement is the connection's shared one: raw only for this synchronous call.
      stmt.raw(true);
      let rows: unknown[][];
      try {
        rows = (after === undefined ? stmt.all() : stmt.all({ after })) as unknown[][];
      } finally {
        stmt.raw(false);
      }
      // Each page's positions from its own statement (a few microseconds against the page's 10+ ms).
      return { rows, at: positionsOf(stmt.columns().map((c) => c.name)) };
    }
    let page = this.db.selectFrom('users').select(COLUMNS);
    if (after !== undefined) page = page.where('id', '>', after);
    return { objects: await page.orderBy('id').limit(LOAD_PAGE).execute() };
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

  /**
   * The users, their emails' characters and the ids' range, for reserve(). PostgreSQL: one statement
   * (about 300 ms on 1M users, on the database's side: the worker serves requests meanwhile). SQLite:
   * a statement holds the worker's only thread, and that one (160-280 ms on 1M users) held the first
   * answers after start (start to ready, issue 37: the index warms after ready). There the smallest
   * and largest id are each read through the key (one statement with both reads every row), then the
   * count and the characters are summed over id ranges, a turn of the event loop between two; the
   * ranges [-inf, b1), [b1, b2), ..., [bk, +inf) cover every id once, whatever the bounds (in order,
   * rounded down to whole numbers). Over ranges on PostgreSQL the same sums took 0.4-0.9 s.
   */
  private async census(): Promise<{ n: number; chars: number; minId?: number; maxId?: number }> {
    const sums = (eb: ExpressionBuilder<Database, 'users'>) => [
      eb.fn.countAll<number | string>().as('n'),
      eb.fn.sum<number | string | null>(eb.fn<number>('length', ['email'])).as('chars'),
    ];
    if (isPostgres(this.db)) {
      const row = await this.db
        .selectFrom('users')
        .select((eb) => [...sums(eb), eb.fn.min<number | string | null>('id').as('min_id'), eb.fn.max<number | string | null>('id').as('max_id')])
        .executeTakeFirst();
      const n = Number(row?.n ?? 0);
      const chars = Number(row?.chars ?? 0);
      return row?.min_id != null && row.max_id != null ? { n, chars, minId: Number(row.min_id), maxId: Number(row.max_id) } : { n, chars };
    }
    const end = async (direction: 'asc' | 'desc') => (await this.db.selectFrom('users').select('id').orderBy('id', direction).limit(1).executeTakeFirst())?.id;
    const minId = await end('asc');
    const maxId = await end('desc');
    if (minId === undefined || maxId === undefined) return { n: 0, chars: 0 };
    const lo = Number(minId);
    const span = (Number(maxId) - lo) / CENSUS_RANGES;
    let n = 0;
    let chars = 0;
    for (let r = 0; r < CENSUS_RANGES; r++) {
      if (this.state !== 'loading') break;
      let range = this.db.selectFrom('users').select(sums);
      // Whole numbers, still in order.
      if (r > 0) range = range.where('id', '>=', Math.floor(lo + r * span));
      if (r < CENSUS_RANGES - 1) range = range.where('id', '<', Math.floor(lo + (r + 1) * span));
      const row = await range.executeTakeFirst();
      n += Number(row?.n ?? 0);
      chars += Number(row?.chars ?? 0);
      await new Promise((resolve) => setImmediate(resolve));
    }
    return { n, chars, minId: Number(minId), maxId: Number(maxId) };
  }

  private async load(): Promise<void> {
    const started = performance.now();
    // A turn first: the server listens (right after the ready hooks) before the load's statements run.
    await new Promise((resolve) => setImmediate(resolve));
    const head = await lastSequence(this.db);
    const counted = await this.census();
    // A little room for the users written while it loads; the emails' characters are their UTF-8 bytes when ASCII (else the store grows).
    // The ids' range: their column and map are allocated once in the width they need (a hint: a wider id written meanwhile widens them).
    const ids = counted.minId !== undefined && counted.maxId !== undefined ? { min: counted.minId, max: counted.maxId } : undefined;
    this.index.reserve(Math.ceil(counted.n * 1.02) + 1024, Math.ceil(counted.chars * 1.02), ids);
    // From the first id whatever it is: a row written by hand may have id 0 or a negative one.
    // PostgreSQL: asking for the next page as soon as a page arrived (the database reading it while this
    // one is added) was tried: 8.8 s against 9.5 s (means of 4 runs each, ABBA, a loaded machine), under
    // the 10% it needed to pay for a second page in flight.
    let after: number | undefined;
    for (;;) {
      if (this.state !== 'loading') return;
      const page = await this.loadPage(after);
      if (this.state !== 'loading') return;
      const count = 'objects' in page ? page.objects.length : page.rows.length;
      if ('objects' in page) this.index.add(page.objects);
      else this.index.addRows(page.rows, page.at);
      if (count < LOAD_PAGE) break;
      after = 'objects' in page ? page.objects[count - 1]!.id : (page.rows[count - 1]![page.at.id] as number);
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
