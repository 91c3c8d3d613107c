import { CompiledQuery, type Kysely } from 'kysely';
import { allRows, directSqlite } from '../db/precompiled.js';
import type { Database } from '../db/database.js';
import { inOrder, named, type Named } from '../db/named-params.js';
import { orderKeys, type ListPlan } from './sql.js';
import { comparisonKeyOf, fieldsKey } from './comparison.js';

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

const MAX_SHAPES = 1000;
/** A shape's SQL and parameter names, and the values it last ran with (what EXPLAIN needs to plan it as run). */
interface Shape extends Named {
  last?: readonly unknown[];
}

/** Shapes by key, per dialect (adapter class). */
const shapesByAdapter = new WeakMap<object, Map<string, Shape>>();

function shapesFor(db: Kysely<unknown>): Map<string, Shape> {
  const adapter = db.getExecutor().adapter.constructor;
  let shapes = shapesByAdapter.get(adapter);
  if (!shapes) shapesByAdapter.set(adapter, (shapes = new Map<string, Named>()));
  return shapes;
}

export interface Query {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * The query to run for shape `key` with `values` (by name): its SQL, compiled by `build()` the first
 * time the shape is seen, with the values in the order that SQL binds them.
 */
export function shapeQuery(db: Kysely<unknown>, key: string, values: Readonly<Record<string, unknown>>, build: () => CompiledQuery): Query {
  const shapes = shapesFor(db);
  let shape = shapes.get(key);
  if (!shape) {
    // The first built goes: clearing them all would build the whole working set again at once.
    if (shapes.size >= MAX_SHAPES) shapes.delete(shapes.keys().next().value!);
    shapes.set(key, (shape = named(build(), `list shape ${key}`)));
  }
  const parameters = inOrder(shape.names, values);
  shape.last = parameters;
  return { sql: shape.sql, parameters };
}

export async function run<R>(db: Kysely<unknown>, query: Query): Promise<R[]> {
  const handle = directSqlite(db as unknown as Kysely<Database>);
  if (handle) return allRows<R>(handle, query.sql, query.parameters);
  return (await db.executeQuery(CompiledQuery.raw(query.sql, [...query.parameters]))).rows as R[];
}

/** The kept shapes' SQL with the values each last ran with: the statements the lists run, to EXPLAIN. */
export function shapeStatements(db: Kysely<unknown>): Query[] {
  return [...shapesFor(db).values()].flatMap((s) => (s.last ? [{ sql: s.sql, parameters: s.last }] : []));
}

/** How many list shapes have their SQL compiled and kept. */
export function shapeStats(db: Kysely<unknown>): { shapes: number } {
  return { shapes: shapesFor(db).size };
}
