import { sql, type Kysely } from 'kysely';
import type SQLite from 'better-sqlite3';
import { prepared } from '../db/precompiled.js';
import { sqliteTableStamp, tableStampSql, type VersionedTable } from '../db/table-stamps.js';
import { asciiLower } from '../db/sql.js';
import type { Condition } from './request.js';
import type { Summary } from './summary.js';

// A summary (query/summary.ts, users_counts) held in memory per connection (SQLite) or pool
// (PostgreSQL), at the version of the listed table it was read at. Summing it in SQL scans all its
// rows on every list request (3,000 rows on the seeded data: 150-600 us, the largest single cost of
// a users list in the benchmark's mix); summed here, the same total costs a few microseconds. It is
// exact the same way every stamped thing is (db/table-stamps.ts): the held copy is used only while
// the listed table's version is the one it was read at, and it is read again, in one snapshot with
// that version, as soon as the version moves, whichever process or instance wrote.
//
// Reading it again costs a fraction of a millisecond: only the counts, in row order, when the summary
// still has the same rows (triggers update counts in place and only ever add rows); the whole summary
// when it has not. On PostgreSQL the version check is one small statement (the round trip the SQL sum
// took, without the scan), and the summary is read again once per new version, however many requests
// found it.

export interface HeldSummary {
  /** The listed table's version the counts belong to. */
  stamp: string;
  /** Which rows the summary holds: while the same, the keys below still apply. */
  rowSet: string;
  /** Per summary row (in the order the counts were read), the values of the summary's columns. */
  keys: unknown[][];
  /** The same with text folded as ciKey folds it (what a case-insensitive filter compares). */
  folded: unknown[][];
  /** Per summary row, how many rows of the listed table it counts. */
  n: number[];
  /** The sum of n: the listed table's rows. */
  allRows: number;
  /** Per column (folded or not), the rows holding each value (rowsByValue). */
  rowsByValue: Map<string, Map<unknown, number[]>>;
}

const heldByConnection = new WeakMap<object, Map<string, HeldSummary>>();

function heldOf(connection: object): Map<string, HeldSummary> {
  let held = heldByConnection.get(connection);
  if (!held) heldByConnection.set(connection, (held = new Map<string, HeldSummary>()));
  return held;
}

/**
 * The summary at `stamp`: its counts, and the keys of the held copy while the summary has the same
 * rows (triggers update counts in place and only ever add rows), else the keys `readKeys` gives.
 */
function heldAt(previous: HeldSummary | undefined, stamp: string, rowSet: string, ns: string | null, readKeys: () => unknown[][]): HeldSummary {
  const n = ns ? ns.split(',').map(Number) : [];
  const allRows = n.reduce((sum, x) => sum + x, 0);
  if (previous?.rowSet === rowSet) return { ...previous, stamp, n, allRows };
  const keys = readKeys();
  const folded = keys.map((row) => row.map((v) => (typeof v === 'string' ? asciiLower(v) : v)));
  return { stamp, rowSet, keys, folded, n, allRows, rowsByValue: new Map() };
}

/** SQLite: the summary as of the listed table's current version (synchronous; read again only when that moved). */
export function sqliteHeld(handle: SQLite.Database, summary: Summary, table: VersionedTable): HeldSummary {
  const held = heldOf(handle);
  const current = held.get(summary.table);
  if (current?.stamp === sqliteTableStamp(handle, table)) return current;
  // Deferred: the first read starts one snapshot, so the version and the counts belong together.
  const fresh = handle.transaction(() => readSqlite(handle, summary, table, current))();
  held.set(summary.table, fresh);
  return fresh;
}

function readSqlite(handle: SQLite.Database, summary: Summary, table: VersionedTable, previous: HeldSummary | undefined): HeldSummary {
  const stamp = sqliteTableStamp(handle, table);
  const name = `"${summary.table}"`; // a declared table name, never a request's
  const read = prepared(
    handle,
    `select count(*) || ':' || coalesce(sum(rowid), 0) || ':' || coalesce(max(rowid), 0) as row_set, group_concat(n, ',' order by rowid) as ns from ${name}`,
  ).get() as { row_set: string; ns: string | null };
  return heldAt(
    previous,
    stamp,
    read.row_set,
    read.ns,
    () =>
      prepared(handle, `select ${summary.columns.map((c) => `"${c}"`).join(', ')} from ${name} order by rowid`)
        .raw(true)
        .all() as unknown[][],
  );
}

/** PostgreSQL: reads of a summary under way, by summary and the version that asked for them. */
const readsByPool = new WeakMap<object, Map<string, Promise<HeldSummary>>>();

/**
 * PostgreSQL: the summary as of the listed table's version now. First the version alone (one small
 * statement); when it is not the held one, the summary is read again, once for all the requests that
 * found the same new version (after a write, every list in flight finds it at once: each reading the
 * summary would scan it as many times). That read is one statement, one snapshot: the version, the
 * counts in key order, which rows there are and, when those are not the held ones, the keys. It
 * starts after the new version was seen, so what it reads is at least that new.
 */
export async function postgresHeld(db: Kysely<unknown>, summary: Summary, table: VersionedTable): Promise<HeldSummary> {
  const held = heldOf(db);
  const { rows } = await sql<{ stamp: string }>`select ${tableStampSql(table)} as stamp`.execute(db);
  const stamp = rows[0]!.stamp;
  const current = held.get(summary.table);
  if (current?.stamp === stamp) return current;
  let reads = readsByPool.get(db);
  if (!reads) readsByPool.set(db, (reads = new Map<string, Promise<HeldSummary>>()));
  const key = `${summary.table}\u0000${stamp}`;
  let read = reads.get(key);
  if (!read) {
    read = readPostgres(db, summary, table, current).finally(() => reads.delete(key));
    reads.set(key, read);
  }
  const fresh = await read;
  held.set(summary.table, fresh);
  return fresh;
}

async function readPostgres(db: Kysely<unknown>, summary: Summary, table: VersionedTable, previous: HeldSummary | undefined): Promise<HeldSummary> {
  const name = sql.table(summary.table);
  const columns = sql.join(summary.columns.map((c) => sql.ref(c)));
  const { rows } = await sql<{ stamp: string; row_set: string; ns: string | null; keys: unknown[][] | null }>`
    with c as (select count(*) || ':' || coalesce(sum(hashtext(concat_ws('|', ${columns}))), 0) as row_set,
      string_agg(cast(n as text), ',' order by ${columns}) as ns from ${name})
    select ${tableStampSql(table)} as stamp, c.row_set, c.ns,
      case when c.row_set is distinct from ${previous?.rowSet ?? null}
        then (select json_agg(json_build_array(${columns}) order by ${columns}) from ${name}) end as keys
    from c`.execute(db);
  const row = rows[0]!;
  // The statement read the keys exactly when the rows differ from the held copy's (heldAt's test).
  return heldAt(previous, row.stamp, row.row_set, row.ns, () => row.keys ?? []);
}

/** A filter as a test of one summary value: `folded`, of the value folded (a case-insensitive filter's `lower(col collate "binary")`). */
interface Test {
  at: number;
  folded: boolean;
  test: (value: unknown) => boolean;
  /** An equality's values (as compared): its rows can be looked up instead of tested one by one. */
  equals?: readonly unknown[];
}

/**
 * A filter as a test meaning what its SQL (query/sql.ts) means on a summary row; undefined for a kind
 * of filter no summary column takes (then SQL sums it).
 */
function testOf(c: Condition): Test['test'] | undefined {
  const value = c.values[0];
  if (c.def.op === 'gt') return (v) => (v as number) > (value as number);
  if (c.def.op === 'lt') return (v) => (v as number) < (value as number);
  if (c.def.op !== 'eq') return undefined;
  const wanted = new Set<unknown>(c.def.caseInsensitive ? c.values.map((v) => asciiLower(String(v))) : c.values);
  return (v) => wanted.has(v);
}

/** Per filter, the summary column it reads and its test; undefined when one cannot be tested here. */
function testsOf(summary: Summary, filters: readonly Condition[]): Test[] | undefined {
  const tests: Test[] = [];
  for (const c of filters) {
    const at = summary.columns.indexOf(c.def.column);
    const test = testOf(c);
    if (at < 0 || !test) return undefined;
    const folded = c.def.caseInsensitive === true;
    tests.push({ at, folded, test, equals: c.def.op === 'eq' ? (folded ? c.values.map((v) => asciiLower(String(v))) : c.values) : undefined });
  }
  return tests;
}

/** The rows holding each value of one column (folded or as stored), built the first time an equality asks. */
function rowsByValue(held: HeldSummary, at: number, folded: boolean): Map<unknown, number[]> {
  const key = `${folded ? 'folded' : 'keys'}:${at}`;
  let index = held.rowsByValue.get(key);
  if (!index) {
    index = new Map<unknown, number[]>();
    const rows = folded ? held.folded : held.keys;
    for (let i = 0; i < rows.length; i++) {
      const value = rows[i]![at];
      let list = index.get(value);
      if (!list) index.set(value, (list = []));
      list.push(i);
    }
    held.rowsByValue.set(key, index);
  }
  return index;
}

/**
 * The summary rows every filter selects: those of the narrowest equality's values, looked up, then
 * tested against the other filters (every row when there is no equality).
 */
function selectedRows(held: HeldSummary, tests: Test[]): number[] {
  let candidates: number[] | undefined;
  let by: Test | undefined;
  for (const t of tests) {
    if (!t.equals) continue;
    const index = rowsByValue(held, t.at, t.folded);
    const rows = [...new Set(t.equals)].flatMap((v) => index.get(v) ?? []); // a value given twice selects its rows once
    if (!candidates || rows.length < candidates.length) [candidates, by] = [rows, t];
  }
  const rest = tests.filter((t) => t !== by);
  const out: number[] = [];
  const each = (i: number) => {
    for (const { at, folded, test } of rest) if (!test((folded ? held.folded : held.keys)[i]![at])) return;
    out.push(i);
  };
  if (candidates) candidates.forEach(each);
  else for (let i = 0; i < held.n.length; i++) each(i);
  return out;
}

/** The exact total the filters select and the listed table's row count; undefined: sum it in SQL. */
export function totalsOf(held: HeldSummary, summary: Summary, filters: readonly Condition[]): { total: number; allRows: number } | undefined {
  const tests = testsOf(summary, filters);
  if (!tests) return undefined;
  const { n } = held;
  let total = 0;
  for (const i of selectedRows(held, tests)) total += n[i]!;
  return { total, allRows: held.allRows };
}

/** Code point order, as the BINARY collation compares (UTF-8 bytes). */
function binaryOrder(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return Buffer.compare(Buffer.from(String(a)), Buffer.from(String(b)));
}

/**
 * Every value of `column` the filters select, with how many rows have it, in the sort order of the
 * values: what summaryValuesQuery answers in SQL. Undefined: ask SQL.
 */
export function valuesOf(
  held: HeldSummary,
  summary: Summary,
  column: string,
  direction: 'asc' | 'desc',
  filters: readonly Condition[],
): { value: string | number; n: number }[] | undefined {
  const tests = testsOf(summary, filters);
  const at = summary.columns.indexOf(column);
  if (!tests || at < 0) return undefined;
  const { keys, n } = held;
  const byValue = new Map<string | number, number>();
  for (const i of selectedRows(held, tests)) {
    const value = keys[i]![at] as string | number;
    byValue.set(value, (byValue.get(value) ?? 0) + n[i]!);
  }
  const values = [...byValue].filter(([, count]) => count > 0).map(([value, count]) => ({ value, n: count }));
  values.sort((a, b) => binaryOrder(a.value, b.value) * (direction === 'asc' ? 1 : -1));
  return values;
}
