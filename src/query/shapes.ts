import type { CompiledQuery, Kysely } from 'kysely';
import { allRows, directSqlite } from '../db/precompiled.js';
import { rowsOf } from '../db/pg-direct.js';
import { inOrder, named, type Named } from '../db/named-params.js';
import { orderKeys, type ListPlan } from './sql.js';
import { comparisonKeyOf, fieldsKey } from './comparison.js';
import { BoundedMap, PerOwner } from './kept.js';

// Step 4, fast: a list query is built and compiled by Kysely once per *shape* (which base query,
// which filters with how many values, which sort, which index), then reused with the new values of
// each request. Building and compiling costs tens of microseconds per request, a prepared statement
// a few.
//
// Values are bound by name (db/named-params.ts): a shape's SQL binds param(name) wherever a value
// goes (the base query's scope, each filter's values, the window), the names are read back from the
// compiled SQL once, and each request gives its values as an object.

//
// A shape's key is made of what the SQL is built from, and nothing else: each filter's comparison
// (comparison.ts: the same object the SQL is written from, every field of it: fieldsKey) and the sort keys as the
// SQL orders by them (orderKeys: column, folded or not, direction, with the id tie-break). Two plans
// with one key are one statement; an input the SQL reads that the key missed would run one plan's SQL
// with another's values (an exact filter and a case-insensitive one on the same column were once one
// shape).

export function shapeOf(plan: ListPlan): string {
  let sort = '';
  for (const key of orderKeys(plan)) sort += `${fieldsKey(key)},`;
  return `${filtersShapeOf(plan.filters)}|${sort}`;
}

/** The filters' part of a shape: each filter's comparison, in plan order. */
export function filtersShapeOf(filters: ListPlan['filters']): string {
  let key = '';
  for (const c of filters) key += `${comparisonKeyOf(c)},`;
  return key;
}

/** A shape's SQL and parameter names, and the values it last ran with (what EXPLAIN needs to plan it as run). */
interface Shape extends Named {
  last?: readonly unknown[];
}

/** Any Kysely instance or transaction, whatever its table types: what the list engine compiles and runs statements with. */
export type Executor = Pick<Kysely<unknown>, 'getExecutor' | 'executeQuery'>;

/**
 * Shapes by key, per database (its dialect adapter, which a Kysely instance and its transactions
 * share): at most 1,000 per database, as long as the database is open. `built` counts the shapes built.
 */
const shapesByDatabase = new PerOwner(() => ({ shapes: new BoundedMap<string, Shape>(1000), built: 0 }));

const shapesFor = (db: Executor) => shapesByDatabase.of(db.getExecutor().adapter);

/** The owner the shapes of `db` are kept under (forgetKept). */
export const shapesOwner = (db: Executor): object => db.getExecutor().adapter;

export interface Query {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * The query to run for shape `key` with `values` (by name): its SQL, compiled by `build()` the first
 * time the shape is seen, with the values in the order that SQL binds them.
 */
export function shapeQuery(db: Executor, key: string, values: Readonly<Record<string, unknown>>, build: () => CompiledQuery): Query {
  const kept = shapesFor(db);
  let shape = kept.shapes.get(key);
  if (!shape) {
    kept.shapes.set(key, (shape = named(build(), `list shape ${key}`)));
    kept.built++;
  }
  const parameters = inOrder(shape.names, values);
  shape.last = parameters;
  return { sql: shape.sql, parameters };
}

export async function run<R>(db: Executor, query: Query): Promise<R[]> {
  const handle = directSqlite(db);
  if (handle) return allRows<R>(handle, query.sql, query.parameters);
  return rowsOf<R>(db, query.sql, [...query.parameters]);
}

/**
 * The kept shapes, first built first: each key, its SQL and the values it last ran with (the
 * statements the lists run: to EXPLAIN them, or to write them out, test/query/queries.test.ts).
 */
export function shapeStatements(db: Executor): (Query & { key: string })[] {
  return [...shapesFor(db).shapes.entries()].flatMap(([key, s]) => (s.last ? [{ key, sql: s.sql, parameters: s.last }] : []));
}

/** How many list shapes have their SQL compiled and kept, and how many were built (compiled) in all. */
export function shapeStats(db: Executor): { shapes: number; built: number } {
  const { shapes, built } = shapesFor(db);
  return { shapes: shapes.size, built };
}
