import { sql } from 'kysely';
import type SQLite from 'better-sqlite3';
import { prepared } from '../db/precompiled.js';
import { sqliteTableStamp, postgresTableStampSql, type VersionedTable } from '../db/table-stamps.js';
import { binaryOrder } from '../db/sql.js';
import type { Condition } from './request.js';
import type { Summary } from './summary.js';
import { comparisonOf, summaryAnswers, testOf } from './comparison.js';
import { PerOwner } from './kept.js';
import type { Executor } from './shapes.js';

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
  /** Which rows the summary holds: while the same, the columns below still apply. */
  rowSet: string;
  /** Per summary column, its values coded per row (codedColumn). */
  columns: CodedColumn[];
  /** Per summary row (in the order the counts were read), how many rows of the listed table it counts. */
  n: number[];
  /** The sum of n: the listed table's rows. */
  allRows: number;
  /** Sums of n over the columns no filter reads, per set of filtered columns, made when first asked at this version (marginalOf). */
  marginals: Map<string, Marginal>;
}

/**
 * The counts summed over every column but `dims` (positions in the summary's columns): one cell per
 * combination of those columns' value codes, `dims[0]` varying slowest. A total is then a sum over
 * the combinations the filters select (a country and an age range: one cell per age), not a pass
 * over every summary row; made once per version and set of filtered columns, in one pass.
 */
interface Marginal {
  dims: number[];
  /** Cells per code of each dim (the product of the later dims' sizes). */
  strides: number[];
  cells: Float64Array;
}

/**
 * One summary column: its distinct values (as stored), each row's value as an index into them, and
 * the values' codes in sort order: a sort compares the stored values (text by code point, as the
 * "binary" collation sorts; a name field is held as its collation key, which sorts so: db/collation.ts).
 * A filter is then tested once per distinct value (2 statuses, 15 countries, 100 ages), not once per
 * summary row, and summing is a pass over small integer arrays.
 */
interface CodedColumn {
  values: unknown[];
  codes: Int32Array;
  /** The values' codes in sort order. */
  ascending: number[];
}

function codedColumn(keys: unknown[][], at: number): CodedColumn {
  const values: unknown[] = [];
  const codeOf = new Map<unknown, number>();
  const codes = new Int32Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const value = keys[i]![at];
    let code = codeOf.get(value);
    if (code === undefined) codeOf.set(value, (code = values.push(value) - 1));
    codes[i] = code;
  }
  const ascending = values.map((_, i) => i).sort((a, b) => binaryOrder(values[a], values[b]));
  return { values, codes, ascending };
}

/**
 * Held summaries by summary table, per SQLite connection or PostgreSQL Kysely instance: one per
 * declared summary (a handful), as long as the connection or instance.
 */
const heldByConnection = new PerOwner(() => new Map<string, HeldSummary>());
const heldOf = (connection: object) => heldByConnection.of(connection);

/**
 * The summary at `stamp`: its counts, and the keys of the held copy while the summary has the same
 * rows (triggers update counts in place and only ever add rows), else the keys `readKeys` gives.
 */
function heldAt(previous: HeldSummary | undefined, stamp: string, rowSet: string, n: number[], readKeys: () => unknown[][]): HeldSummary {
  const allRows = n.reduce((sum, x) => sum + x, 0);
  if (previous?.rowSet === rowSet) return { ...previous, stamp, n, allRows, marginals: new Map() };
  const keys = readKeys();
  const width = keys[0]?.length ?? 0;
  return { stamp, rowSet, columns: Array.from({ length: width }, (_, at) => codedColumn(keys, at)), n, allRows, marginals: new Map() };
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
  const read = prepared(handle, `select count(*) || ':' || coalesce(sum(rowid), 0) || ':' || coalesce(max(rowid), 0) as row_set from ${name}`).get() as {
    row_set: string;
  };
  // The counts as numbers, in rowid order (the scan's own: nothing sorted). Once per write to the
  // table, in every worker: as one group_concat(n order by rowid) string split here it cost twice as
  // much (3,000 counts: 1.1 ms -> 0.5 ms), in the mix with a user PATCH in every 20 requests.
  const n = prepared(handle, `select n from ${name} order by rowid`).pluck().all() as number[];
  return heldAt(
    previous,
    stamp,
    read.row_set,
    n,
    () =>
      prepared(handle, `select ${summary.columns.map((c) => `"${c}"`).join(', ')} from ${name} order by rowid`)
        .raw(true)
        .all() as unknown[][],
  );
}

/**
 * PostgreSQL: reads of a summary under way, by summary and the version that asked for them, per
 * Kysely instance: each only until it settles (so at most one per summary and version in flight).
 */
const readsByPool = new PerOwner(() => new Map<string, Promise<HeldSummary>>());

/**
 * PostgreSQL: the summary at `stamp`, the version a page statement has just read its rows at
 * (stampedPageQuery): the held copy, without a statement, when it is at that version; else the
 * summary as of now, as postgresHeld reads it (a write came in between, as it could between the
 * version check and the page when the total was read first).
 */
export async function postgresHeldAt(db: Executor, summary: Summary, table: VersionedTable, stamp: string): Promise<HeldSummary> {
  const current = heldOf(db).get(summary.table);
  if (current?.stamp === stamp) return current;
  return postgresHeld(db, summary, table);
}

/**
 * PostgreSQL: how reading as of the summary last held has fared lately, per Kysely instance (lastHeldTrusted):
 * +1 when the page statements read their rows at its version, -3 when a write had come in between
 * (the reads are wasted: the page is read again), kept between -12 and 12; asks counts the asks.
 */
const lastHeldOdds = new PerOwner(() => ({ score: 0, asks: 0 }));
const oddsOf = (db: object) => lastHeldOdds.of(db);

/** PostgreSQL: the summary this pool holds, at whatever version it was read (undefined: none yet); a guess, until its stamp is checked. */
export function postgresLastHeld(db: Executor, summary: Summary): HeldSummary | undefined {
  return heldOf(db).get(summary.table);
}

/**
 * PostgreSQL: whether to read a page as of postgresLastHeld's summary, kept when a page statement's
 * stamp says it read the rows at that summary's version (then report how it fared: lastHeldFared).
 * Not when lately that was mostly not so: under steady writes (a user PATCH in every 20 requests of
 * the benchmark's mix) 7 in 10 such reads found the version moved, and reading the page again cost
 * more than checking the version first saves. Asked again every 16th time while so, to notice when
 * the writes stop.
 */
export function lastHeldTrusted(db: Executor): boolean {
  const odds = oddsOf(db);
  odds.asks++;
  return odds.score >= 0 || odds.asks % 16 === 0;
}

/** PostgreSQL: whether a read as of postgresLastHeld's summary (lastHeldTrusted) was at its version (`atIt`) or not. */
export function lastHeldFared(db: Executor, atIt: boolean): void {
  const odds = oddsOf(db);
  odds.score = Math.max(-12, Math.min(12, odds.score + (atIt ? 1 : -3)));
}

/**
 * PostgreSQL: the summary as of the listed table's version now. First the version alone (one small
 * statement); when it is not the held one, the summary is read again, once for all the requests that
 * found the same new version (after a write, every list in flight finds it at once: each reading the
 * summary would scan it as many times). That read is one statement, one snapshot: the version, the
 * counts in key order, which rows there are and, when those are not the held ones, the keys. It
 * starts after the new version was seen, so what it reads is at least that new.
 */
export async function postgresHeld(db: Executor, summary: Summary, table: VersionedTable): Promise<HeldSummary> {
  const held = heldOf(db);
  const { rows } = await sql<{ stamp: string }>`select ${postgresTableStampSql(table)} as stamp`.execute(db);
  const stamp = rows[0]!.stamp;
  const current = held.get(summary.table);
  if (current?.stamp === stamp) return current;
  const reads = readsByPool.of(db);
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

/** PostgreSQL: a held summary and the one it was made from, as of the folded rows alone (withDelta). */
interface PostgresHeldSummary extends HeldSummary {
  folded: HeldSummary;
  /** The keys of the delta that the folded rows lack (keyText of each, in key order), held as rows after the folded ones. */
  added: string;
}

/**
 * PostgreSQL: a summary is the folded rows and the delta not folded yet (migration 20261126T0300:
 * `<summary>_folded`, `<summary>_delta`, the view `<summary>` their union). Read as two parts in one
 * statement: the folded rows as SQLite's table is read (the counts in key order, the keys when the
 * rows are not the held ones: they change only when a fold adds a key), and the delta summed per key
 * (as many rows as keys written since the last fold). The delta is added here: summing the view per
 * key in SQL costs a sort of its 3,000 rows on every read (2.2 -> 6.0 ms per read, 100,000 users).
 */
async function readPostgres(db: Executor, summary: Summary, table: VersionedTable, previous: HeldSummary | undefined): Promise<HeldSummary> {
  const columns = sql.join(summary.columns.map((c) => sql.ref(c)));
  const folded = sql.table(`${summary.table}_folded`);
  const delta = sql.table(`${summary.table}_delta`);
  const before = (previous as PostgresHeldSummary | undefined)?.folded;
  const { rows } = await sql<{ stamp: string; row_set: string; ns: string | null; keys: unknown[][] | null; delta: unknown[][] | null }>`
    with c as (select count(*) || ':' || coalesce(sum(hashtext(concat_ws('|', ${columns}))), 0) as row_set,
      string_agg(cast(n as text), ',' order by ${columns}) as ns from ${folded})
    select ${postgresTableStampSql(table)} as stamp, c.row_set, c.ns,
      case when c.row_set is distinct from ${before?.rowSet ?? null}
        then (select json_agg(json_build_array(${columns}) order by ${columns}) from ${folded}) end as keys,
      (select json_agg(json_build_array(${columns}, n) order by ${columns}) from (select ${columns}, sum(n) as n from ${delta} group by ${columns} having sum(n) <> 0) as d) as delta
    from c`.execute(db);
  const row = rows[0]!;
  // The statement read the keys exactly when the rows differ from the held copy's (heldAt's test).
  const base = heldAt(before, row.stamp, row.row_set, row.ns ? row.ns.split(',').map(Number) : [], () => row.keys ?? []);
  return withDelta(base, row.delta ?? [], summary.columns.length, previous as PostgresHeldSummary | undefined);
}

/** Per coded columns (shared by the held copies of one set of rows), each row's key (keyText) -> its position. */
const rowsByKey = new WeakMap<CodedColumn[], Map<string, number>>();
const keyText = (values: unknown[]) => JSON.stringify(values);

function keysOf(held: HeldSummary): unknown[][] {
  return Array.from({ length: held.n.length }, (_, i) => held.columns.map((c) => c.values[c.codes[i]!]));
}

/**
 * `folded` with the delta rows ([...key, n], in key order) added: to its rows' counts, and as rows of
 * their own for keys it does not have yet. Those rows' coded columns are made once per set of such
 * keys (`previous`'s are reused while the folded rows and those keys are the same), not per read.
 */
function withDelta(folded: HeldSummary, delta: unknown[][], width: number, previous: PostgresHeldSummary | undefined): PostgresHeldSummary {
  if (delta.length === 0) return { ...folded, folded, added: '' };
  let positions = rowsByKey.get(folded.columns);
  if (!positions) {
    positions = new Map(keysOf(folded).map((key, i) => [keyText(key), i]));
    rowsByKey.set(folded.columns, positions);
  }
  const n = folded.n.slice();
  const added: unknown[][] = [];
  const addedN: number[] = [];
  for (const row of delta) {
    const at = positions.get(keyText(row.slice(0, width)));
    if (at !== undefined) n[at]! += Number(row[width]);
    else {
      added.push(row.slice(0, width));
      addedN.push(Number(row[width]));
    }
  }
  n.push(...addedN);
  const allRows = n.reduce((sum, x) => sum + x, 0);
  if (added.length === 0) return { ...folded, n, allRows, marginals: new Map(), folded, added: '' };
  // Keys no fold has added yet (a status, country or age no user had): the columns coded again, once.
  const addedText = keyText(added);
  const rowSet = `${folded.rowSet}+${addedText}`;
  let columns = previous?.folded.columns === folded.columns && previous.added === addedText ? previous.columns : undefined;
  if (!columns) {
    const keys = [...keysOf(folded), ...added];
    columns = Array.from({ length: width }, (_, at) => codedColumn(keys, at));
  }
  return { stamp: folded.stamp, rowSet, columns, n, allRows, marginals: new Map(), folded, added: addedText };
}

/** A column the filters narrow (its position in the summary's columns), and which of its values (by code) they select. */
interface Selection {
  at: number;
  selected: Uint8Array;
}

/**
 * Per filtered column, the values every filter on it selects (each filter's test, comparison.ts, once
 * per distinct value), in column order; undefined when the summary does not answer a filter
 * (summaryAnswers: the stored column it compares, its operator).
 */
function selectionsOf(held: HeldSummary, summary: Summary, filters: readonly Condition[]): Selection[] | undefined {
  const byColumn = new Map<number, Selection>();
  for (const c of filters) {
    const comparison = comparisonOf(c);
    if (!summaryAnswers(summary.holds.get(comparison.column), comparison, (column) => summary.holds.has(column))) return undefined;
    const at = summary.columns.indexOf(comparison.column);
    const test = testOf(comparison, c.values);
    const column = held.columns[at];
    if (!test || !column) return undefined;
    let selection = byColumn.get(at);
    if (!selection) byColumn.set(at, (selection = { at, selected: new Uint8Array(column.values.length).fill(1) }));
    const { values } = column;
    for (let code = 0; code < values.length; code++) if (selection.selected[code] && !test(values[code])) selection.selected[code] = 0;
  }
  return [...byColumn.values()].sort((a, b) => a.at - b.at);
}

/** The counts summed over every column but `dims` (positions, in the order the cells nest), made at the first ask for this version. */
function marginalOf(held: HeldSummary, dims: number[]): Marginal {
  const key = dims.join(',');
  let marginal = held.marginals.get(key);
  if (marginal) return marginal;
  const strides = new Array<number>(dims.length);
  let size = 1;
  for (let d = dims.length - 1; d >= 0; d--) {
    strides[d] = size;
    size *= held.columns[dims[d]!]!.values.length;
  }
  const cells = new Float64Array(size);
  const codes = dims.map((at) => held.columns[at]!.codes);
  const { n } = held;
  for (let i = 0; i < n.length; i++) {
    let cell = 0;
    for (let d = 0; d < dims.length; d++) cell += codes[d]![i]! * strides[d]!;
    cells[cell]! += n[i]!;
  }
  held.marginals.set(key, (marginal = { dims, strides, cells }));
  return marginal;
}

/** Calls `each` with every cell of `marginal` whose codes all selections select, and the code of its last dim. */
function forSelectedCells(marginal: Marginal, selections: readonly Selection[], each: (cell: number, last: number) => void): void {
  const walk = (d: number, base: number): void => {
    const { selected } = selections[d]!;
    const stride = marginal.strides[d]!;
    const last = d === selections.length - 1;
    for (let code = 0; code < selected.length; code++) {
      if (selected[code] === 0) continue;
      if (last) each(base + code * stride, code);
      else walk(d + 1, base + code * stride);
    }
  };
  if (selections.length > 0) walk(0, 0);
}

/** The exact total the filters select and the listed table's row count; undefined: sum it in SQL. */
export function totalsOf(held: HeldSummary, summary: Summary, filters: readonly Condition[]): { total: number; allRows: number } | undefined {
  const selections = selectionsOf(held, summary, filters);
  if (!selections) return undefined;
  if (selections.length === 0) return { total: held.allRows, allRows: held.allRows };
  const marginal = marginalOf(
    held,
    selections.map((s) => s.at),
  );
  let total = 0;
  forSelectedCells(marginal, selections, (cell) => (total += marginal.cells[cell]!));
  return { total, allRows: held.allRows };
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
  const selections = selectionsOf(held, summary, filters);
  const at = summary.columns.indexOf(column);
  const sorted = held.columns[at];
  if (!selections || !sorted) return undefined;
  // The sorted column last, selecting what its filters select (every value when none).
  const own = selections.find((s) => s.at === at) ?? { at, selected: new Uint8Array(sorted.values.length).fill(1) };
  const walked = [...selections.filter((s) => s.at !== at), own];
  const marginal = marginalOf(
    held,
    walked.map((s) => s.at),
  );
  const sums = new Float64Array(sorted.values.length);
  forSelectedCells(marginal, walked, (cell, code) => (sums[code]! += marginal.cells[cell]!));
  const order = direction === 'asc' ? sorted.ascending : [...sorted.ascending].reverse();
  return order.filter((code) => sums[code]! > 0).map((code) => ({ value: sorted.values[code] as string | number, n: sums[code]! }));
}
