import { PostgresAdapter, type Kysely } from 'kysely';

// Which backend a handle talks to: the one place that tells (runtime code and migrations alike).

/** The backends this service runs on. */
export type Dialect = 'sqlite' | 'postgres';

/** Works on any Kysely handle or transaction, whatever its table types. */
export function isPostgres(db: Pick<Kysely<unknown>, 'getExecutor'>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
