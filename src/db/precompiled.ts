import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type { Database } from './database.js';

/**
 * A query built with Kysely once per dialect and then run with new parameter values: building and
 * compiling costs tens of microseconds per call, which matters on the hottest paths. `build` must
 * use placeholder values in the same order as the parameters passed to `rows`/`first` (checked).
 */
export function precompiled<R, P extends readonly unknown[]>(build: (db: Kysely<Database>) => Compilable<R>) {
  const sqlByAdapter = new Map<unknown, string>();

  function compiled(db: Kysely<Database>, params: P): CompiledQuery<R> {
    const adapter = db.getExecutor().adapter.constructor;
    let text = sqlByAdapter.get(adapter);
    if (text === undefined) {
      const query = build(db).compile();
      if (query.parameters.length !== params.length) {
        throw new Error(`precompiled query expects ${query.parameters.length} parameters, got ${params.length}: ${query.sql}`);
      }
      text = query.sql;
      sqlByAdapter.set(adapter, text);
    }
    return CompiledQuery.raw(text, params as unknown as unknown[]) as CompiledQuery<R>;
  }

  return {
    async rows(db: Kysely<Database>, ...params: P): Promise<R[]> {
      return (await db.executeQuery(compiled(db, params))).rows;
    },
    async first(db: Kysely<Database>, ...params: P): Promise<R | undefined> {
      return (await db.executeQuery(compiled(db, params))).rows[0];
    },
  };
}
