import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import type pgTypes from 'pg';
import { ConfigError, type Config } from '../config.js';
import type { Database, Db, Dialect } from './database.js';
import { registerSqliteHandle } from './precompiled.js';
import { registerPgDirect } from './pg-direct.js';
import { readStatement, readUnknown } from './reads.js';
import { WriteLockingSqliteDialect } from './sqlite-driver.js';

export interface Connection {
  readonly db: Db;
  readonly dialect: Dialect;
  /** The raw better-sqlite3 handle (SQLite only), for prepared statements on hot paths. */
  readonly sqlite?: SQLite.Database;
  /** Cheap round trip to the database; throws when it cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Connection pool use, where there is a pool (PostgreSQL), for the metrics. */
  poolStats?: () => PoolStats;
  /** From now on (the schema is migrated), repeated queries may run as prepared statements (PostgreSQL). */
  prepareStatements?(): void;
  /** The server's connection limit and what the pool may need of it (PostgreSQL), for the start-up check. */
  connectionCapacity?(): Promise<ConnectionCapacity>;
}

export interface ConnectionCapacity {
  /** max_connections minus the slots reserved for superusers. */
  available: number;
  /** Connections other clients (other instances, tools) hold on the server now. */
  others: number;
  /** Connections this instance's pool may open (PG_POOL_SIZE). */
  poolSize: number;
}

/** Where the connection layer reports what an operator should know (the app's logger). */
export interface ConnectionLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

/**
 * The page cache of each SQLite connection, in KiB: SQLite's own default. better-sqlite3 builds SQLite
 * with 16,000, and a worker's cache filled up as its users index loaded (a million users' rows are far
 * more than 16 MB of pages) and stayed: 16 MB of each worker's 200 MB (issue 37). At 1M users, 2
 * workers, the bench's whole distinct mix: the largest process's VmHWM 199.6-215.3 MiB before,
 * 188.7-191.6 with this alone; the RSS outside V8's heap and ArrayBuffers 21-24 -> 7-9 MiB
 * (docs/query-conventions.md, "Memory"). The pages a request reads come from the OS's file cache
 * instead: reads only, alternating, 169 and 153 us a request at 16,000 KiB, 146 and 159 at 2,000.
 */
export const SQLITE_CACHE_KIB = 2000;

function sqlitePath(url: string): string {
  if (url === 'sqlite::memory:') return ':memory:';
  return url.slice('sqlite:'.length);
}

export function openSqlite(config: Pick<Config, 'databaseUrl' | 'sqliteSynchronous'> & Partial<Pick<Config, 'sqliteCreateDirectory'>>): SQLite.Database {
  const path = sqlitePath(config.databaseUrl);
  if (path !== ':memory:' && !existsSync(dirname(path))) {
    // A typo in the path would otherwise start an empty service (config.ts, sqliteCreateDirectory).
    if (config.sqliteCreateDirectory === false) {
      throw new ConfigError(`DATABASE_URL=${config.databaseUrl}: the directory ${dirname(path)} does not exist; create it, or set SQLITE_CREATE_DIRECTORY=on`);
    }
    mkdirSync(dirname(path), { recursive: true });
  }
  const handle = new SQLite(path);
  // WAL: readers never block the writer; with synchronous=NORMAL a committed transaction survives
  // a process crash (kill -9), FULL also survives a power loss.
  handle.pragma('journal_mode = WAL');
  handle.pragma(`synchronous = ${config.sqliteSynchronous.toUpperCase()}`);
  handle.pragma('foreign_keys = ON');
  handle.pragma('busy_timeout = 5000');
  handle.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
  return handle;
}

export function connect(
  config: Pick<Config, 'databaseUrl' | 'sqliteSynchronous' | 'pgPoolSize' | 'pgConnectTimeoutMs' | 'pgPreparedStatements' | 'pgIdleMs'> &
    Partial<Pick<Config, 'sqliteCreateDirectory'>>,
  log?: ConnectionLog,
): Connection {
  if (config.databaseUrl.startsWith('sqlite:')) {
    const handle = openSqlite(config);
    // Kysely's SQLite driver, whose writes wait for the write lock off the event loop (db/sqlite-driver.ts).
    const db = new Kysely<Database>({ dialect: new WriteLockingSqliteDialect(handle) });
    registerSqliteHandle(db, handle);
    return {
      db,
      dialect: 'sqlite',
      sqlite: handle,
      async ping() {
        handle.prepare('select 1').get();
      },
      async close() {
        // SQLite's advice for long-lived connections: refresh the planner's statistics where they
        // have drifted (it decides from the stored ones; cheap when nothing changed much).
        try {
          handle.pragma('optimize');
        } catch {
          // closing matters more than the statistics
        }
        await db.destroy();
      },
    };
  }
  return connectPostgres(config, log);
}

// COUNT(*) and other bigint results arrive as strings from node-postgres (int8 can exceed 2^53); ids
// and counts here are far below that, and the API promises JSON numbers on both backends.
function pgTypeParsers(pg: typeof pgTypes) {
  return {
    getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
      if (oid === (pg.types.builtins.INT8 as number) && format !== 'binary') return (value: string) => Number(value);
      return pg.types.getTypeParser(oid, format) as (value: string) => unknown;
    },
  };
}

/** node-postgres, loaded only when a PostgreSQL URL is configured: it is a tenth of the start-up time on SQLite. */
function loadPg(): typeof pgTypes {
  return createRequire(import.meta.url)('pg') as typeof pgTypes;
}

const MAX_NAMED = 500;

/** What a named statement's rows are, as its connection described them on its first run. */
interface Described {
  fields: unknown[];
  parsers: unknown[] | undefined;
  empty: object | null;
}

/** pg's Query as this module uses it (its protocol steps and its result's internals). */
interface PgQuery {
  name?: string;
  text: string;
  values: unknown[];
  binary?: boolean;
  portal: string;
  callback: (err: Error | null, res?: unknown) => void;
  _result: { fields: unknown[]; _parsers: unknown[] | undefined; _prebuiltEmptyResultObject: object | null };
  _accumulateRows: boolean;
  prepare(connection: PgConnection): void;
  handleRowDescription(msg: { fields: unknown[] }): void;
  handleError(err: Error, connection: PgConnection): void;
  handleReadyForQuery(connection: PgConnection): void;
}

interface PgConnection {
  parsedStatements: Record<string, string>;
  bind(config: { portal: string; statement: string; values: unknown[]; binary?: boolean; valueMapper: unknown }): void;
  execute(config: { portal: string }): void;
  sync(): void;
}

/**
 * A named statement's run. pg's own Query sends Bind, Describe (portal), Execute and Sync on every
 * run, and on each answer parses the row description again and looks up a parser per column. A
 * statement's rows keep the shape its connection described when it first ran it (a change of a
 * table's columns makes PostgreSQL fail the statement, "cached plan must not change result type",
 * described or not), so from its second run on this connection it is not described again: Bind,
 * Execute and Sync, and the rows are read with the first run's fields and parsers.
 */
function namedQueryClass(pg: typeof pgTypes) {
  const Query = pg.Query as unknown as new (text: string, values: unknown[]) => PgQuery;
  const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: unknown };
  return class NamedQuery extends Query {
    private seen: Described | undefined;
    private failed = false;

    constructor(
      name: string,
      text: string,
      values: unknown[],
      private readonly described: Map<string, Described>,
      callback: (err: Error | null, res?: unknown) => void,
    ) {
      super(text, values);
      this.name = name;
      this.callback = callback;
    }

    override prepare(connection: PgConnection): void {
      const known = connection.parsedStatements[this.name!] === this.text ? this.described.get(this.name!) : undefined;
      if (known === undefined) {
        super.prepare(connection);
        return;
      }
      const result = this._result;
      result.fields = known.fields;
      result._parsers = known.parsers;
      result._prebuiltEmptyResultObject = known.empty;
      this._accumulateRows = true;
      try {
        connection.bind({ portal: this.portal, statement: this.name!, values: this.values, binary: this.binary, valueMapper: prepareValue });
      } catch (err) {
        // A value that cannot be sent: nothing but Sync goes out, and the statement stays prepared.
        connection.sync();
        this.handleError(err as Error, connection);
        return;
      }
      connection.execute({ portal: this.portal });
      connection.sync();
    }

    override handleRowDescription(msg: { fields: unknown[] }): void {
      super.handleRowDescription(msg);
      const result = this._result;
      this.seen = { fields: result.fields, parsers: result._parsers, empty: result._prebuiltEmptyResultObject };
    }

    override handleError(err: Error, connection: PgConnection): void {
      this.failed = true;
      super.handleError(err, connection);
    }

    override handleReadyForQuery(connection: PgConnection): void {
      // Described on this run (a statement without rows has no row description: none to remember).
      if (!this.failed && !this.described.has(this.name!) && connection.parsedStatements[this.name!] === this.text)
        this.described.set(this.name!, this.seen ?? { fields: [], parsers: undefined, empty: null });
      super.handleReadyForQuery(connection);
    }
  };
}

/**
 * Server-side prepared statements on PostgreSQL: a query text the service sends again is sent as a
 * named statement, parsed and planned by each connection once instead of on every request (the
 * planning of a deep-page query cost more than running it), and described once (NamedQuery). Only
 * once the schema is migrated (`enable()`): a statement prepared before a migration changes its
 * table would fail afterwards. At most MAX_NAMED texts get names (filter and sort combinations make
 * new texts); the rest run as before.
 * PG_PREPARED_STATEMENTS=off turns this off (a PgBouncer in transaction mode that does not track
 * prepared statements, before 1.21 or without max_prepared_statements, needs that).
 * Every statement a pooled client runs passes `wrap`'s query, so it is also where an answer learns
 * which tables it read (db/reads.ts).
 */
function namedStatements(pg: typeof pgTypes) {
  const names = new Map<string, string>();
  const seen = new Set<string>();
  const NamedQuery = namedQueryClass(pg);
  let enabled = false;
  return {
    enable() {
      enabled = true;
    },
    wrap(client: { query: (...args: never[]) => unknown }) {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      /** This connection's named statements' row descriptions, by name. */
      const described = new Map<string, Described>();
      client.query = (text: unknown, values: unknown, ...rest: unknown[]) => {
        if (typeof text === 'string') readStatement(text);
        else readUnknown();
        if (!enabled || typeof text !== 'string' || !Array.isArray(values) || rest.length > 0) return query(text, values, ...rest);
        let name = names.get(text);
        if (name === undefined) {
          // A name on the second use: one-off texts (DDL, imports) never take a slot.
          if (!seen.has(text)) {
            if (seen.size >= MAX_NAMED * 4) seen.clear();
            seen.add(text);
            return query(text, values);
          }
          if (names.size >= MAX_NAMED) return query(text, values);
          name = `mc${names.size}`;
          names.set(text, name);
        }
        return new Promise((resolve, reject) => {
          query(new NamedQuery(name, text, values, described, (err, res) => (err ? reject(err) : resolve(res))));
        });
      };
    },
  };
}

/**
 * How long a request waits for a pooled connection while all of them are busy. Waiting behind other
 * requests means the database is reachable, only busy: a burst (every cache missing at once after a
 * write) queues rather than failing with 503. node-postgres uses one timeout for this wait and for
 * opening a connection, so the pool gets this one and each client its own connect timeout.
 */
const POOL_WAIT_MS = 30_000;

const TOO_MANY_CONNECTIONS = '53300';

/**
 * pool.connect that waits out "too many clients" (SQLSTATE 53300): the server is up, its connection
 * slots are taken (by other instances' pools, say), and one frees up as soon as any client lets go.
 * Retried with backoff within the same budget as a wait for a busy pooled connection (POOL_WAIT_MS),
 * then it fails as before (503). Only the start of such a wait is logged, not every retry.
 */
function waitingOutExhaustion(pool: pgTypes.Pool, log: ConnectionLog | undefined) {
  let exhausted = false;
  return async (): Promise<pgTypes.PoolClient> => {
    const deadline = Date.now() + POOL_WAIT_MS;
    for (let backoff = 20; ; backoff = Math.min(backoff * 2, 500)) {
      try {
        const client = await pool.connect();
        if (exhausted) log?.info({}, 'PostgreSQL accepts connections again');
        exhausted = false;
        return client;
      } catch (err) {
        if ((err as { code?: unknown }).code !== TOO_MANY_CONNECTIONS || Date.now() + backoff > deadline) throw err;
        if (!exhausted) log?.warn({ code: TOO_MANY_CONNECTIONS }, 'PostgreSQL has no connection slot free (too many clients); waiting for one');
        exhausted = true;
        await sleep(backoff);
      }
    }
  };
}

function connectPostgres(
  config: Pick<Config, 'databaseUrl' | 'pgPoolSize' | 'pgConnectTimeoutMs' | 'pgPreparedStatements' | 'pgIdleMs'>,
  log: ConnectionLog | undefined,
): Connection {
  const pg = loadPg();
  const connectTimeoutMs = config.pgConnectTimeoutMs;
  // Small on purpose: while the database is unreachable a request fails fast with 503 instead of
  // waiting for a connection that will not come.
  class Client extends pg.Client {
    constructor(options?: pgTypes.ClientConfig) {
      super({ ...options, connectionTimeoutMillis: connectTimeoutMs });
    }
  }
  const pool = new pg.Pool({
    connectionString: config.databaseUrl,
    max: config.pgPoolSize,
    Client,
    connectionTimeoutMillis: POOL_WAIT_MS,
    // PG_IDLE_MS (default 60 s): a new connection is a new server process that plans and describes
    // every statement anew, so the pool keeps its connections between bursts; a deployment whose
    // instances share too few slots lowers it (docs/scaling.md, "Connection pooling").
    idleTimeoutMillis: config.pgIdleMs,
    keepAlive: true,
    application_name: 'music-catalogue',
    types: pgTypeParsers(pg),
  });
  // A connection lost while idle is reported on the pool; one lost while checked out (mid-query, or
  // between the queries of a request) is reported on the client, and an 'error' event nobody listens
  // to kills the process. The query itself fails (-> 503) and the pool discards the dead client on
  // release, so the next request opens a fresh one: recovery without a restart.
  pool.on('error', () => {});
  const named = namedStatements(pg);
  pool.on('connect', (client) => {
    client.on('error', () => {});
    named.wrap(client);
  });
  const connectWaiting = waitingOutExhaustion(pool, log);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: { connect: connectWaiting, end: () => pool.end() } }) });
  // Compiled statements on the pool run without Kysely's executor (db/pg-direct.ts), as its driver runs them.
  registerPgDirect(db, async (text, parameters) => {
    const client = await connectWaiting();
    try {
      return await client.query(text, parameters);
    } finally {
      client.release();
    }
  });
  return {
    db,
    dialect: 'postgres',
    async connectionCapacity() {
      const { rows } = await sql<{ available: number; in_use: number }>`
        select current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int as available,
               (select count(*)::int from pg_stat_activity where backend_type = 'client backend') as in_use`.execute(db);
      // pool.totalCount counts the connection running this query, which in_use counts too.
      return { available: rows[0]!.available, others: Math.max(0, rows[0]!.in_use - pool.totalCount), poolSize: config.pgPoolSize };
    },
    prepareStatements: () => {
      if (config.pgPreparedStatements) named.enable();
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: config.pgPoolSize }),
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}
