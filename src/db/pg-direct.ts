import { CompiledQuery, type Kysely } from 'kysely';

// PostgreSQL: a statement already compiled (db/precompiled.ts, the list shapes of query/shapes.ts, the
// keyed reads of db/pg-keyed.ts) runs on a pooled connection directly: checked out, queried, released,
// as Kysely's driver does, without Kysely's executor around it (its connection provider, plugins'
// result transforms and promise layers: a few microseconds of every statement). Only on the pool's
// own Kysely instance (db/connect.ts registers it): a transaction, or any other Kysely object, is not
// registered and runs through Kysely on its own connection.

type Direct = (text: string, parameters: unknown[]) => Promise<{ rows: unknown[] }>;

const directs = new WeakMap<object, Direct>();

export function registerPgDirect(db: object, run: Direct): void {
  directs.set(db, run);
}

/** The rows of `text` with `parameters` (a fresh array: the driver may keep it), on `db`. */
export async function rowsOf<R>(db: Pick<Kysely<unknown>, 'executeQuery'>, text: string, parameters: unknown[]): Promise<R[]> {
  const direct = directs.get(db);
  if (direct) return (await direct(text, parameters)).rows as R[];
  return (await db.executeQuery<R>(CompiledQuery.raw(text, parameters))).rows;
}
