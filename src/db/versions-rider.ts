import { VERSIONED_TABLES, type VersionedTable } from './versioned-tables.js';

// PostgreSQL: the tables' versions carried by a statement of another read (issue 32). The requests
// waiting for a read of the versions (db/arrivals.ts) take them from a statement about to be sent
// anyway (a batch of single rows by key, db/pg-keyed.ts), read in that statement's own snapshot, so
// they need no round trip of their own. Its own module: both of those import it, and neither imports
// the other (no import cycle).

/** Table name -> version, as text. */
export type TableVersions = ReadonlyMap<string, string>;

/**
 * A statement of another read about to be sent that can carry every table's version too, in its own
 * snapshot, so that the requests waiting for a read of them need none of their own.
 */
export interface VersionsRider {
  /** Whether requests have arrived that no read begun so far serves: then the statement should carry the versions. */
  wanted(): boolean;
  /**
   * Called just before the statement carrying them is sent (so they are read after every request
   * that has arrived by now): the requests that arrived so far may use them. A failed statement
   * leaves them to a read of their own.
   */
  carried(versions: Promise<TableVersions>): void;
}

const riders = new WeakMap<object, VersionsRider>();

/** The rider of `db`'s shared versions (PostgreSQL), if any. */
export function versionsRider(db: object): VersionsRider | undefined {
  return riders.get(db);
}

/** Registers `db`'s rider (db/arrivals.ts, once per database). */
export function setVersionsRider(db: object, rider: VersionsRider): void {
  riders.set(db, rider);
}

/** The column of a statement that carries `table`'s version beside its own rows. */
const carriedColumn = (table: VersionedTable) => `__version_${table}`;

/**
 * PostgreSQL: every table's version as one row of columns that no row of ours has (a statement of
 * another read joins it, db/pg-keyed.ts); carriedVersions reads them back.
 */
export const CARRIED_VERSIONS_SQL = `select ${VERSIONED_TABLES.map((t) => `sum(${t}) as "${carriedColumn(t)}"`).join(', ')} from table_version_slots`;

/** The columns CARRIED_VERSIONS_SQL adds to a statement's rows. */
export const CARRIED_VERSION_COLUMNS: ReadonlySet<string> = new Set(VERSIONED_TABLES.map(carriedColumn));

/** The versions a row of a statement that joined CARRIED_VERSIONS_SQL carries. */
export function carriedVersions(row: Record<string, unknown>): TableVersions {
  return new Map(VERSIONED_TABLES.map((t) => [t, String(row[carriedColumn(t)])]));
}
