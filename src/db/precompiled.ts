import type { Compilable, Kysely } from 'kysely';
import type SQLite from 'better-sqlite3';
import type { Database } from './database.js';
import { groupCommit, MAX_ROWS, type ManyRows } from './group-commit.js';
import { InsertBatcher } from './pg-batch.js';
import { keyedSql, ReadBatcher, takeReads } from './pg-keyed.js';
import { inOrder, named, type Named } from './named-params.js';
import { readStatement } from './reads.js';
import { rowsOf } from './pg-direct.js';

export { param } from './named-params.js';
import { isPostgres } from './dialect.js';

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
 * every direct caller; bounded, since dynamic filter/sort combinations make new texts (the first
 * prepared goes first). Every statement run on SQLite passes here, so here is where an answer learns
 * which tables it read (db/reads.ts).
 */
export function prepared(handle: SQLite.Database, text: string): SQLite.Statement {
  readStatement(text);
  let statements = statementsByHandle.get(handle);
  if (!statements) statementsByHandle.set(handle, (statements = new Map<string, SQLite.Statement>()));
  let stmt = statements.get(text);
  if (!stmt) {
    // The oldest prepared goes: dropping them all would prepare the whole working set again at once.
    if (statements.size >= MAX_STATEMENTS) statements.delete(statements.keys().next().value!);
    stmt = handle.prepare(text);
    statements.set(text, stmt);
  }
  return stmt;
}

/**
 * Every row of the handle's prepared `text` with `parameters`, each an object keyed by column name
 * as better-sqlite3 makes them, but built here from the raw row: better-sqlite3 sets each property
 * from C++ with its name made again for every row, about a third of the cost of reading a page's
 * rows (20 users: 44 -> 31 us). The statement is shared (Kysely's driver uses the same one), so raw
 * mode is on only for this synchronous call.
 */
export function allRows<R = Record<string, unknown>>(handle: SQLite.Database, text: string, parameters: readonly unknown[]): R[] {
  const stmt = prepared(handle, text);
  if (!stmt.reader) return stmt.all([...parameters]) as R[];
  const names = columnNames(stmt);
  stmt.raw(true);
  let raw: unknown[][];
  try {
    raw = stmt.all([...parameters]) as unknown[][];
  } finally {
    stmt.raw(false);
  }
  const rows = new Array<R>(raw.length);
  for (let r = 0; r < raw.length; r++) {
    const values = raw[r]!;
    const row: Record<string, unknown> = {};
    for (let c = 0; c < names.length; c++) row[names[c]!] = values[c];
    rows[r] = row as R;
  }
  return rows;
}

const namesByStatement = new WeakMap<SQLite.Statement, readonly string[]>();

function columnNames(stmt: SQLite.Statement): readonly string[] {
  let names = namesByStatement.get(stmt);
  if (!names) namesByStatement.set(stmt, (names = stmt.columns().map((c) => c.name)));
  return names;
}

/** The SQL texts this connection has prepared and keeps (for inspection: EXPLAIN in tests, debugging). */
export function preparedTexts(handle: SQLite.Database): string[] {
  return [...(statementsByHandle.get(handle)?.keys() ?? [])];
}

/**
 * The raw handle for a query that may run outside Kysely, or undefined: not SQLite, a Kysely
 * transaction object (not registered), or a transaction open on the connection, whose uncommitted
 * rows a direct read would see (Kysely's driver makes the query wait for it instead: db/sqlite-driver.ts).
 */
export function directSqlite(db: object): SQLite.Database | undefined {
  const handle = sqliteHandles.get(db);
  return handle && !handle.inTransaction ? handle : undefined;
}

/**
 * A query built with Kysely once per dialect and then run with new parameter values: building and
 * compiling costs tens of microseconds per call, which matters on the hottest paths. `build` binds
 * `param(name)` wherever a value goes, and each call gives the values by name. On SQLite the
 * statement runs on a prepared better-sqlite3 statement directly (a few microseconds), skipping
 * Kysely's driver and its promise chain.
 */
export function precompiled<R, P extends Record<string, unknown>>(
  build: (db: Kysely<Database>) => Compilable<R>,
  options: {
    /**
     * A write that may share its commit with concurrent ones (db/group-commit.ts on SQLite,
     * db/pg-batch.ts on PostgreSQL). `rows` is the same INSERT for n rows, each row binding the
     * same names as `build` (checked), RETURNING the `id`: concurrent writes then run as one
     * statement, their rows matched to them by ascending id, which the database assigns in the
     * order of the VALUES rows.
     */
    groupCommit?: true | { rows: (db: Kysely<Database>, n: number) => Compilable<R & { id: number }> };
    /**
     * A read by key whose concurrent calls on PostgreSQL may run as one statement (db/pg-keyed.ts):
     * each parameter's PostgreSQL type, by its name (`{ id: 'int4' }`). Every name `build` binds
     * must be here.
     */
    keys?: Readonly<Record<keyof P & string, string>>;
  } = {},
) {
  const byAdapter = new Map<unknown, Named>();
  const multi = typeof options.groupCommit === 'object' ? options.groupCommit.rows : undefined;
  /** SQL of the multi-row form by row count and dialect. */
  const multiSql = new Map<string, string>();
  const byId = (rows: unknown[]) => (rows as { id: number }[]).sort((a, b) => a.id - b.id);

  function one(db: Kysely<Database>): Named {
    const adapter = db.getExecutor().adapter.constructor;
    let query = byAdapter.get(adapter);
    if (query === undefined) byAdapter.set(adapter, (query = named(build(db).compile(), 'precompiled query')));
    return query;
  }

  /** The n-row form's SQL; its parameters must be the one-row form's names, row after row. */
  function many(db: Kysely<Database>, n: number): string {
    const key = `${db.getExecutor().adapter.constructor.name}:${n}`;
    let sql = multiSql.get(key);
    if (sql === undefined) {
      const rowNames = one(db).names;
      const query = named(multi!(db, n).compile(), `precompiled ${n}-row query`);
      const expected = Array.from({ length: n }, () => rowNames).flat();
      if (query.names.join() !== expected.join())
        throw new Error(`precompiled ${n}-row query binds ${query.names.join()}, not ${rowNames.join()} per row: ${query.sql}`);
      multiSql.set(key, (sql = query.sql));
    }
    return sql;
  }

  const statement = (handle: SQLite.Database, db: Kysely<Database>) => prepared(handle, one(db).sql);

  function manyRows(handle: SQLite.Database, db: Kysely<Database>): ManyRows | undefined {
    if (!multi) return undefined;
    return (n: number) => ({ stmt: prepared(handle, many(db, n)), order: byId });
  }

  async function viaKysely(db: Kysely<Database>, params: unknown[]): Promise<R[]> {
    return rowsOf<R>(db, one(db).sql, params);
  }

  /** PostgreSQL: concurrent writes as one multi-row statement (db/pg-batch.ts), per database. */
  const pgBatchers = new WeakMap<Kysely<Database>, InsertBatcher<R>>();
  function pgBatched(db: Kysely<Database>, params: unknown[]): Promise<R[]> {
    let batcher = pgBatchers.get(db);
    if (!batcher) {
      batcher = new InsertBatcher<R>(
        db as unknown as Kysely<unknown>,
        MAX_ROWS,
        (n) => many(db, n),
        (p) => viaKysely(db, [...p]),
      );
      pgBatchers.set(db, batcher);
    }
    return batcher.run(params);
  }

  async function run(db: Kysely<Database>, values: P): Promise<R[]> {
    const params = inOrder(one(db).names, values);
    const handle = directSqlite(db);
    if (handle && options.groupCommit) {
      const stmt = statement(handle, db);
      const result = await groupCommit(handle, stmt, params, () => viaKysely(db, params), manyRows(handle, db));
      if (Array.isArray(result)) return result as R[]; // run alone through Kysely: its rows
      return (stmt.reader ? (result === undefined ? [] : [result]) : []) as R[];
    }
    if (handle) {
      const stmt = statement(handle, db);
      return (stmt.reader ? stmt.all(params) : (stmt.run(params), [])) as R[];
    }
    if (multi && isPostgres(db) && !db.isTransaction) return pgBatched(db, params);
    return viaKysely(db, params);
  }

  /** PostgreSQL: concurrent reads by key as one statement (db/pg-keyed.ts), per database. */
  const keyed = new WeakMap<Kysely<Database>, ReadBatcher<R> | null>();
  function keyedBatcher(db: Kysely<Database>): ReadBatcher<R> | undefined {
    if (!options.keys || db.isTransaction || !isPostgres(db)) return undefined;
    let batcher = keyed.get(db);
    if (batcher === null) return undefined;
    if (!batcher) {
      const { sql, names } = one(db);
      const types = names.map((name) => {
        const type = (options.keys as Record<string, string>)[name];
        if (type === undefined) throw new Error(`precompiled keyed read binds ${name}, which has no type in keys: ${sql}`);
        return type;
      });
      const text = keyedSql(sql, types);
      // A text where a `$i` might not be a parameter: its reads run one by one.
      keyed.set(db, text === undefined ? null : (batcher = new ReadBatcher<R>(db as unknown as Kysely<unknown>, text)));
      if (text === undefined) return undefined;
    }
    return batcher;
  }

  return {
    rows: (db: Kysely<Database>, values: P): Promise<R[]> => run(db, values),
    async first(db: Kysely<Database>, values: P): Promise<R | undefined> {
      const handle = directSqlite(db);
      if (handle && !options.groupCommit) {
        const stmt = statement(handle, db);
        if (stmt.reader) return stmt.get(inOrder(one(db).names, values)) as R | undefined;
      }
      const batcher = handle ? undefined : keyedBatcher(db);
      if (batcher) return takeReads(await batcher.run(inOrder(one(db).names, values)))[0];
      return (await run(db, values))[0];
    },
  };
}
