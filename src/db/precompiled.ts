import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type SQLite from 'better-sqlite3';
import type { Database } from './database.js';
import { groupCommit, MAX_ROWS, type ManyRows } from './group-commit.js';
import { InsertBatcher } from './pg-batch.js';
import { isPostgres } from './table-stamps.js';

/** The better-sqlite3 handle behind a Kysely instance (SQLite connections register theirs). */
const sqliteHandles = new WeakMap<object, SQLite.Database>();

export function registerSqliteHandle(db: Kysely<Database>, handle: SQLite.Database): void {
  sqliteHandles.set(db, handle);
}

const MAX_STATEMENTS = 1000;
const statementsByHandle = new WeakMap<SQLite.Database, Map<string, SQLite.Statement>>();

/**
 * The handle's prepared statement for `text`, prepared once: preparing costs several microseconds, a
 * cached statement nothing. One cache per connection, shared by Kysely's driver (db/connect.ts) and
 * every direct caller; bounded, since dynamic filter/sort combinations make new texts.
 */
export function prepared(handle: SQLite.Database, text: string): SQLite.Statement {
  let statements = statementsByHandle.get(handle);
  if (!statements) statementsByHandle.set(handle, (statements = new Map()));
  let stmt = statements.get(text);
  if (!stmt) {
    if (statements.size >= MAX_STATEMENTS) statements.clear();
    stmt = handle.prepare(text);
    statements.set(text, stmt);
  }
  return stmt;
}

/**
 * The raw handle for a query that may run outside Kysely, or undefined: not SQLite, a Kysely
 * transaction object (not registered), or a transaction open on the connection, whose uncommitted
 * rows a direct read would see (Kysely's connection lock makes the query wait for it instead).
 */
export function directSqlite(db: Kysely<Database>): SQLite.Database | undefined {
  const handle = sqliteHandles.get(db);
  return handle && !handle.inTransaction ? handle : undefined;
}

/**
 * A query built with Kysely once per dialect and then run with new parameter values: building and
 * compiling costs tens of microseconds per call, which matters on the hottest paths. `build` must
 * use placeholder values in the same order as the parameters passed to `rows`/`first` (checked).
 * On SQLite the statement runs on a prepared better-sqlite3 statement directly (a few
 * microseconds), skipping Kysely's driver and its promise chain.
 */
export function precompiled<R, P extends readonly unknown[]>(
  build: (db: Kysely<Database>) => Compilable<R>,
  options: {
    /**
     * A write that may share its commit with concurrent ones (db/group-commit.ts). `rows` is the same
     * INSERT for n rows (placeholders each row's in turn, RETURNING the `id`): concurrent writes then
     * run as one statement, their rows matched to them by ascending id, which SQLite assigns in the
     * order of the VALUES rows.
     */
    groupCommit?: true | { rows: (db: Kysely<Database>, n: number) => Compilable<R & { id: number }> };
  } = {},
) {
  const sqlByAdapter = new Map<unknown, string>();
  const multi = typeof options.groupCommit === 'object' ? options.groupCommit.rows : undefined;
  /** SQL of the multi-row form by row count, for SQLite's group commit. */
  const multiSql = new Map<number, string>();
  const byId = (rows: unknown[]) => (rows as { id: number }[]).sort((a, b) => a.id - b.id);

  function text(db: Kysely<Database>, params: P): string {
    const adapter = db.getExecutor().adapter.constructor;
    let sql = sqlByAdapter.get(adapter);
    if (sql === undefined) {
      const query = build(db).compile();
      if (query.parameters.length !== params.length) {
        throw new Error(`precompiled query expects ${query.parameters.length} parameters, got ${params.length}: ${query.sql}`);
      }
      sql = query.sql;
      sqlByAdapter.set(adapter, sql);
    }
    return sql;
  }

  const statement = (handle: SQLite.Database, db: Kysely<Database>, params: P) => prepared(handle, text(db, params));

  function manyRows(handle: SQLite.Database, db: Kysely<Database>, width: number): ManyRows | undefined {
    if (!multi) return undefined;
    return (n: number) => {
      let sql = multiSql.get(n);
      if (sql === undefined) {
        const query = multi(db, n).compile();
        if (query.parameters.length !== n * width) {
          throw new Error(`precompiled ${n}-row query expects ${query.parameters.length} parameters, got ${n * width}: ${query.sql}`);
        }
        multiSql.set(n, (sql = query.sql));
      }
      return { stmt: prepared(handle, sql), order: byId };
    };
  }

  async function viaKysely(db: Kysely<Database>, params: P): Promise<R[]> {
    return (await db.executeQuery(CompiledQuery.raw(text(db, params), params as unknown as unknown[]) as CompiledQuery<R>)).rows;
  }

  /** PostgreSQL: concurrent writes as one multi-row statement (db/pg-batch.ts), per database. */
  const pgBatchers = new WeakMap<Kysely<Database>, InsertBatcher<R>>();
  function pgBatched(db: Kysely<Database>, params: P): Promise<R[]> {
    let batcher = pgBatchers.get(db);
    if (!batcher) {
      const texts = new Map<number, string>();
      const rowsSql = (n: number) => {
        let text = texts.get(n);
        if (text === undefined) {
          const query = multi!(db, n).compile();
          if (query.parameters.length !== n * params.length) {
            throw new Error(`precompiled ${n}-row query expects ${query.parameters.length} parameters, got ${n * params.length}: ${query.sql}`);
          }
          texts.set(n, (text = query.sql));
        }
        return text;
      };
      batcher = new InsertBatcher<R>(db as unknown as Kysely<unknown>, MAX_ROWS, rowsSql, (p) => viaKysely(db, p as unknown as P));
      pgBatchers.set(db, batcher);
    }
    return batcher.run(params as unknown as unknown[]);
  }

  async function run(db: Kysely<Database>, params: P): Promise<R[]> {
    const handle = directSqlite(db);
    if (handle && options.groupCommit) {
      const stmt = statement(handle, db, params);
      const many = manyRows(handle, db, params.length);
      const result = await groupCommit(handle, stmt, params as unknown as unknown[], () => viaKysely(db, params), many);
      if (Array.isArray(result)) return result as R[]; // run alone through Kysely: its rows
      return (stmt.reader ? (result === undefined ? [] : [result]) : []) as R[];
    }
    if (handle) {
      const stmt = statement(handle, db, params);
      return (stmt.reader ? stmt.all(params as unknown as unknown[]) : (stmt.run(params as unknown as unknown[]), [])) as R[];
    }
    if (multi && isPostgres(db as unknown as Kysely<unknown>) && !db.isTransaction) return pgBatched(db, params);
    return viaKysely(db, params);
  }

  return {
    rows: (db: Kysely<Database>, ...params: P): Promise<R[]> => run(db, params),
    async first(db: Kysely<Database>, ...params: P): Promise<R | undefined> {
      const handle = directSqlite(db);
      if (handle && !options.groupCommit) {
        const stmt = statement(handle, db, params);
        if (stmt.reader) return stmt.get(params as unknown as unknown[]) as R | undefined;
      }
      return (await run(db, params))[0];
    },
  };
}
