import type SQLite from 'better-sqlite3';
import { SqliteDialect, SqliteDriver, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';
import { prepared } from './precompiled.js';
import { writeLock } from './write-lock.js';

// Kysely's SQLite driver, as Kysely's own (statements run synchronously on the one better-sqlite3
// handle, each prepared once: db/precompiled.ts), except for how it waits:
//
// - Writes take the file's write lock off the event loop (db/write-lock.ts). An INSERT / UPDATE /
//   DELETE outside a transaction runs in a transaction of its own once the lock is had, which commits
//   what the statement alone would have (a statement that fails is rolled back, as alone). A
//   transaction begins with BEGIN IMMEDIATE once the lock is had: every transaction here writes
//   (imports, idempotency keys, webhooks, migrations), and a deferred BEGIN would take the lock at its
//   first write, asleep on the event loop.
// - Nothing else waits for a write waiting for the lock. Kysely's own driver has one mutex for the
//   connection, held by every query until it is done: a read behind a write that waits for the lock
//   would wait with it. Here a statement waits only for a transaction that is open on the handle (its
//   statements are the transaction's own, and nothing else may run inside it); a transaction holds the
//   write lock from BEGIN to COMMIT, so writes wait for it there too.

/** A statement that writes rows (not a read, a pragma, DDL or VACUUM): it takes the file's write lock. */
const DML = /^\s*(insert|update|delete|replace|with)\b/i;

class LockingConnection implements DatabaseConnection {
  constructor(private readonly driver: WriteLockingDriver) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { driver } = this;
    if (driver.transaction === this) return driver.run<R>(query);
    while (driver.transaction) await driver.transactionEnded;
    if (!DML.test(query.sql) || prepared(driver.handle, query.sql).readonly) return driver.run<R>(query);
    const lock = writeLock(driver.handle);
    // The statement and its COMMIT right after BEGIN, with nothing in between.
    const write = () => {
      let result: QueryResult<R>;
      try {
        result = driver.run<R>(query);
      } catch (error) {
        lock.rollback();
        throw error;
      }
      lock.commit();
      return result;
    };
    return lock.beginNow() ? write() : lock.begin(write);
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    // Read whole, then given row by row: no statement stays open on the handle across awaits.
    const { rows } = await this.executeQuery<R>(query);
    for (const row of rows) yield { rows: [row] };
  }
}

export class WriteLockingDriver implements Driver {
  /** The connection whose transaction is open on the handle (one at a time: it holds the write lock). */
  transaction: LockingConnection | undefined;
  /** Resolves when that transaction ends. */
  transactionEnded: Promise<void> = Promise.resolve();
  private end: (() => void) | undefined;
  /** Kysely's own, for the savepoint statements it compiles (it runs them on the connection it is given). */
  private readonly kysely = new SqliteDriver({ database: undefined as never });

  constructor(readonly handle: SQLite.Database) {}

  /** One statement, synchronously, as Kysely's SQLite connection runs it. */
  run<R>(query: CompiledQuery): QueryResult<R> {
    const stmt = prepared(this.handle, query.sql);
    const parameters = query.parameters as unknown[];
    if (stmt.reader) return { rows: stmt.all(parameters) as R[] };
    const { changes, lastInsertRowid } = stmt.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new LockingConnection(this);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const lock = writeLock(this.handle);
    const open = () => {
      this.transactionEnded = new Promise<void>((resolve) => (this.end = resolve));
      this.transaction = connection as LockingConnection;
    };
    if (lock.beginNow()) open();
    else await lock.begin(open);
  }

  async commitTransaction(): Promise<void> {
    // Kysely rolls back after a failed COMMIT: the lock has let go by then (commit rolled back), once only.
    this.ended();
    writeLock(this.handle).commit();
  }

  async rollbackTransaction(): Promise<void> {
    if (this.ended()) writeLock(this.handle).rollback();
  }

  /** The open transaction is over for the other connections; false if none was open. */
  private ended(): boolean {
    const end = this.end;
    if (!end) return false;
    this.transaction = undefined;
    this.end = undefined;
    end();
    return true;
  }

  savepoint: Driver['savepoint'] = (connection, name, compile) => this.kysely.savepoint(connection, name, compile);
  rollbackToSavepoint: Driver['rollbackToSavepoint'] = (connection, name, compile) => this.kysely.rollbackToSavepoint(connection, name, compile);
  releaseSavepoint: Driver['releaseSavepoint'] = (connection, name, compile) => this.kysely.releaseSavepoint(connection, name, compile);

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    this.handle.close();
  }
}

/** Kysely's SQLite dialect on `handle`, with the driver above. */
export class WriteLockingSqliteDialect extends SqliteDialect {
  constructor(private readonly handle: SQLite.Database) {
    super({ database: handle });
  }

  override createDriver(): Driver {
    return new WriteLockingDriver(this.handle);
  }
}
