import type SQLite from 'better-sqlite3';
import { prepared } from '../db/precompiled.js';
import { sqliteTableStamp, type VersionedTable } from '../db/table-stamps.js';
import { asciiLower } from '../db/sql.js';
import type { Condition } from './request.js';
import type { Summary } from './summary.js';

// SQLite: a summary (query/summary.ts, users_counts) held in memory per connection, at the version of
// the listed table it was read at. Summing it in SQL scans all its rows on every list request (3,000
// rows on the seeded data: 150-600 us, the largest single cost of a users list in the benchmark's
// mix); summed here, the same total costs a few microseconds. It is exact the same way every stamped
// thing is (db/table-stamps.ts): the held copy is used only while the listed table's version is the
// one it was read at, and it is read again, in one read transaction with that version, as soon as
// the version moves, whichever process or instance wrote.
//
// Reading it again costs a fraction of a millisecond: only the counts, in row order, when the summary
// still has the same rows (triggers update counts in place and only ever add rows); the whole summary
// when it has not. PostgreSQL keeps summing in SQL: there the sum rides along with the round trip.

interface Held {
  /** The listed table's version the counts belong to. */
  stamp: string;
  /** Which rows the summary holds (count, sum and largest rowid): the same, the keys below still apply. */
  rowSet: string;
  /** Per summary row (rowid order), the values of the summary's columns. */
  keys: unknown[][];
  /** The same with text folded as ciKey folds it (what a case-insensitive filter compares). */
  folded: unknown[][];
  /** Per summary row, how many rows of the listed table it counts. */
  n: number[];
}

const heldByHandle = new WeakMap<SQLite.Database, Map<string, Held>>();

/** The summary as of the listed table's current version (read again only when that moved). */
function heldSummary(handle: SQLite.Database, summary: Summary, table: VersionedTable): Held {
  let held = heldByHandle.get(handle);
  if (!held) heldByHandle.set(handle, (held = new Map<string, Held>()));
  const current = held.get(summary.table);
  if (current?.stamp === sqliteTableStamp(handle, table)) return current;
  // Deferred: the first read starts one snapshot, so the version and the counts belong together.
  const read = handle.transaction(() => readSummary(handle, summary, table, current));
  const fresh = read();
  held.set(summary.table, fresh);
  return fresh;
}

function readSummary(handle: SQLite.Database, summary: Summary, table: VersionedTable, previous: Held | undefined): Held {
  const stamp = sqliteTableStamp(handle, table);
  const name = `"${summary.table}"`; // a declared table name, never a request's
  const counts = prepared(
    handle,
    `select count(*) || ':' || coalesce(sum(rowid), 0) || ':' || coalesce(max(rowid), 0) as row_set, group_concat(n, ',' order by rowid) as ns from ${name}`,
  ).get() as { row_set: string; ns: string | null };
  const n = counts.ns ? counts.ns.split(',').map(Number) : [];
  if (previous?.rowSet === counts.row_set) return { ...previous, stamp, n };
  const keys = prepared(handle, `select ${summary.columns.map((c) => `"${c}"`).join(', ')} from ${name} order by rowid`)
    .raw(true)
    .all() as unknown[][];
  const folded = keys.map((row) => row.map((v) => (typeof v === 'string' ? asciiLower(v) : v)));
  return { stamp, rowSet: counts.row_set, keys, folded, n };
}

/** A filter as a test of one summary value: `folded`, of the value folded (a case-insensitive filter's `lower(col collate "binary")`). */
interface Test {
  at: number;
  folded: boolean;
  test: (value: unknown) => boolean;
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
    tests.push({ at, folded: c.def.caseInsensitive === true, test });
  }
  return tests;
}

/** Per summary row, 1 when every filter selects it (one pass per filter over one column). */
function selectedRows(held: Held, tests: Test[]): Uint8Array {
  const selected = new Uint8Array(held.n.length).fill(1);
  for (const { at, folded, test } of tests) {
    const rows = folded ? held.folded : held.keys;
    for (let i = 0; i < rows.length; i++) if (selected[i] && !test(rows[i]![at])) selected[i] = 0;
  }
  return selected;
}

/** The exact total the filters select and the listed table's row count, from the held summary; undefined: sum it in SQL. */
export function heldTotals(
  handle: SQLite.Database,
  summary: Summary,
  table: VersionedTable,
  filters: readonly Condition[],
): { total: number; allRows: number } | undefined {
  const tests = testsOf(summary, filters);
  if (!tests) return undefined;
  const held = heldSummary(handle, summary, table);
  const { n } = held;
  const selected = selectedRows(held, tests);
  let total = 0;
  let allRows = 0;
  for (let i = 0; i < n.length; i++) {
    allRows += n[i]!;
    if (selected[i]) total += n[i]!;
  }
  return { total, allRows };
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
export function heldValues(
  handle: SQLite.Database,
  summary: Summary,
  table: VersionedTable,
  column: string,
  direction: 'asc' | 'desc',
  filters: readonly Condition[],
): { value: string | number; n: number }[] | undefined {
  const tests = testsOf(summary, filters);
  const at = summary.columns.indexOf(column);
  if (!tests || at < 0) return undefined;
  const held = heldSummary(handle, summary, table);
  const { keys, n } = held;
  const selected = selectedRows(held, tests);
  const byValue = new Map<string | number, number>();
  for (let i = 0; i < n.length; i++) {
    if (!selected[i]) continue;
    const value = keys[i]![at] as string | number;
    byValue.set(value, (byValue.get(value) ?? 0) + n[i]!);
  }
  const values = [...byValue].filter(([, count]) => count > 0).map(([value, count]) => ({ value, n: count }));
  values.sort((a, b) => binaryOrder(a.value, b.value) * (direction === 'asc' ? 1 : -1));
  return values;
}
