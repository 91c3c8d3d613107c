import { CompiledQuery, type Kysely } from 'kysely';
import { directSqlite, prepared } from '../db/precompiled.js';
import type { Database } from '../db/database.js';
import { asciiLower } from '../db/sql.js';
import type { Condition } from './request.js';
import type { ListPlan } from './sql.js';

// Step 4, fast: a list query is built and compiled by Kysely once per *shape* (which base query,
// which filters with how many values, which sort, which index), then reused with the new values of
// each request. Building and compiling costs tens of microseconds per request, a prepared statement
// a few.
//
// The values a shape binds are computed here, in the order sql.ts puts them into the SQL: the base
// query's, each filter's, then LIMIT and OFFSET. The first time a shape is seen, that list is checked
// against the parameters Kysely compiled; a shape where they differ is never cached (it is built
// per request, as before), so a mistake here costs speed, never a wrong answer.

/** The parameters one filter binds, as sql.ts's condition() binds them. */
export function filterParams(c: Condition): unknown[] {
  const values = c.values;
  if (c.def.op !== 'eq') return [values[0]];
  if (c.def.caseInsensitive) return values.map((v) => asciiLower(String(v)));
  if (c.def.lowerIndexed && values.length === 1) return [asciiLower(String(values[0])), values[0]];
  return [...values];
}

export function shapeOf(plan: ListPlan): string {
  const filters = plan.filters.map((c) => `${c.def.column}:${c.def.op}:${c.values.length}`).join(',');
  const sort = plan.request.sort.map((k) => `${k.field}:${k.direction}`).join(',');
  return `${filters}|${sort}`;
}

const MAX_SHAPES = 1000;
/** SQL text by shape key, per dialect (adapter class); null: a shape that is not reused. */
const textsByAdapter = new WeakMap<object, Map<string, string | null>>();

function textsFor(db: Kysely<unknown>): Map<string, string | null> {
  const adapter = db.getExecutor().adapter.constructor;
  let texts = textsByAdapter.get(adapter);
  if (!texts) textsByAdapter.set(adapter, (texts = new Map()));
  return texts;
}

const sameValues = (a: readonly unknown[], b: readonly unknown[]) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));

export interface Query {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * The query to run for shape `key` with `params`: its cached SQL with these values, or on first use
 * (and for a shape that is not reusable) what `build()` compiles.
 */
export function shapeQuery(db: Kysely<unknown>, key: string, params: unknown[], build: () => CompiledQuery): Query {
  const texts = textsFor(db);
  const known = texts.get(key);
  if (known) return { sql: known, parameters: params };
  const compiled = build();
  if (known === undefined) {
    if (texts.size >= MAX_SHAPES) texts.clear();
    texts.set(key, sameValues(compiled.parameters, params) ? compiled.sql : null);
  }
  return compiled;
}

export async function run<R>(db: Kysely<unknown>, query: Query): Promise<R[]> {
  const handle = directSqlite(db as unknown as Kysely<Database>);
  if (handle) return prepared(handle, query.sql).all([...query.parameters]) as R[];
  return (await db.executeQuery(CompiledQuery.raw(query.sql, [...query.parameters]))).rows as R[];
}

/** How many list shapes run from cached SQL and how many are built per request (tests: every shape should be reusable). */
export function shapeStats(db: Kysely<unknown>): { reused: number; rebuilt: number } {
  const texts = [...textsFor(db).values()];
  return { reused: texts.filter((t) => t !== null).length, rebuilt: texts.filter((t) => t === null).length };
}
