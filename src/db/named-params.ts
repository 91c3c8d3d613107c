import type { CompiledQuery } from 'kysely';

// Values bound by name. A query built once and run many times (db/precompiled.ts, the list shapes of
// query/shapes.ts) is built with `param(name)` wherever a value goes; the names are read back from
// the compiled query in the order its SQL binds them, and each run gives its values as an object.
// So the order of parameters is never kept in step by hand: a value bound in two places (the
// filters of every seek arm) is one name, and a name with no value is an error, not a wrong answer.

class Param {
  constructor(readonly name: string) {}
}

/** Stands for the value named `name` where a query is built: `.where('id', '=', param<number>('id'))`. */
export function param<T>(name: string): T {
  return new Param(name) as unknown as T;
}

/** A compiled query's SQL and the names of its parameters, in the order the SQL binds them. */
export interface Named {
  sql: string;
  names: string[];
}

export function named(query: CompiledQuery, what: string): Named {
  const names = query.parameters.map((p, i) => {
    if (!(p instanceof Param)) throw new Error(`${what}: parameter ${i + 1} is a value, not param(name): ${query.sql}`);
    return p.name;
  });
  return { sql: query.sql, names };
}

/** The values in the order `names` binds them; every name must have one. */
export function inOrder(names: readonly string[], values: Readonly<Record<string, unknown>>): unknown[] {
  return names.map((name) => {
    if (!Object.hasOwn(values, name)) throw new Error(`no value for query parameter ${name}`);
    return values[name];
  });
}
