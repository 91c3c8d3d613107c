import { AsyncLocalStorage } from 'node:async_hooks';
import { VERSIONED_TABLES } from './versioned-tables.js';

// What an answer read, learnt where it is read, so that a stored answer (http/response-cache.ts) is
// stamped with exactly the tables its data came from, whichever code read them: list pages, totals,
// embeds, precompiled reads, the token lookup, a repository's Kysely query, a query added tomorrow.
//
// A request that may be stored runs inside `readsWhile(reads, ...)` (AsyncLocalStorage: the set
// follows the request across its awaits, and only that request's). Every statement passes one of two
// places, whatever built it, and each adds the tables its SQL text names to the current set:
// - SQLite: `prepared()` (db/precompiled.ts), which every statement goes through: Kysely's driver,
//   the precompiled reads, the list shapes and the held summary alike;
// - PostgreSQL: the pool clients' `query` (db/connect.ts), which every Kysely statement calls.
// What is answered from memory instead (a total, a summary, page boundaries) is only ever used under
// the version of its table (db/table-stamps.ts), and reading that version adds the table too
// (sqliteTableStamp, tableStamp; tableStampSql names it in the statement's text).
//
// A statement's tables are the words of its text that name a table (memoised per text): derived
// tables count as the tables they are derived from in the same transaction (users_counts: users;
// search_index: the three catalogue tables). Reading a table no version covers (events, webhooks, a
// table a later migration adds and nobody mapped here: `learnTables` marks every table the database
// has) makes the answer one that cannot be stored: fail safe. So does reading nothing at all.
// Over-counting (a column or a literal that happens to be a table's name) costs a stored answer a
// retirement it did not need, never a stale one.
//
// An answer can also change without a write: one read with a token, or listing tokens, stops being
// true when a token expires. `readUntil(instant)` says so; a stored answer is not served from then on.

export type VersionedTable = (typeof VERSIONED_TABLES)[number];

/** What one answer read. */
export class Reads {
  /** A bit per versioned table (VERSIONED_TABLES order), and UNKNOWN. */
  tables = 0;
  /** The first instant (ms since the epoch) at which the answer may change without a write; Infinity: none. */
  until = Infinity;
}

const bit = (table: VersionedTable) => 1 << VERSIONED_TABLES.indexOf(table);
/** A table no version covers: an answer that read it is not stored. */
const UNKNOWN = 1 << VERSIONED_TABLES.length;

/**
 * What reading each table means: the versioned tables that move in the same transaction as any
 * change to it (migration 20261124T0100 and the triggers of the tables derived from them).
 */
const DERIVED: Readonly<Record<string, readonly VersionedTable[]>> = {
  users_counts: ['users'],
  users_name_counts: ['users'],
  // PostgreSQL: the two tables behind each of those views (migration 20261126T0300). The folder moves
  // rows from one to the other without changing any sum: no version moves, none needs to.
  users_counts_folded: ['users'],
  users_counts_delta: ['users'],
  users_name_counts_folded: ['users'],
  users_name_counts_delta: ['users'],
  search_index: ['artists', 'albums', 'songs'],
  // The versions themselves: whoever uses one records its table (table-stamps.ts), and a statement
  // that reads one names its table (SQLite: `where name = 'users'`; PostgreSQL: `sum(users)`).
  table_versions: [],
  table_version_slots: [],
};

const bitsByName = new Map<string, number>();
for (const table of VERSIONED_TABLES) bitsByName.set(table, bit(table));
for (const [name, sources] of Object.entries(DERIVED))
  bitsByName.set(
    name,
    sources.reduce((bits, t) => bits | bit(t), 0),
  );

const MAX_TEXTS = 4000;
const bitsByText = new Map<string, number>();
const WORD = /[A-Za-z_][A-Za-z0-9_$]*/g;

/** The tables a statement's text names (as bits), memoised per text. */
function bitsOfText(text: string): number {
  let bits = bitsByText.get(text);
  if (bits === undefined) {
    bits = 0;
    for (const [word] of text.matchAll(WORD)) bits |= bitsByName.get(word.toLowerCase()) ?? 0;
    if (bitsByText.size >= MAX_TEXTS) bitsByText.delete(bitsByText.keys().next().value!);
    bitsByText.set(text, bits);
  }
  return bits;
}

/**
 * The tables the database has (catalogue names): those not mapped above are ones no version covers,
 * and an answer that reads one is not stored.
 */
export function learnTables(names: Iterable<string>): void {
  let added = false;
  for (const name of names) {
    const key = name.toLowerCase();
    if (bitsByName.has(key)) continue;
    bitsByName.set(key, UNKNOWN);
    added = true;
  }
  if (added) bitsByText.clear();
}

const storage = new AsyncLocalStorage<Reads | undefined>();

/** Runs `fn` (a request's handling) with `reads` collecting what it reads, across its awaits. */
export function readsWhile<T>(reads: Reads, fn: () => T): T {
  return storage.run(reads, fn);
}

/**
 * Runs `fn` outside any answer's reads: for a read shared by many requests (db/arrivals.ts), which
 * must not count for the one request that happened to start it; each user records what it uses.
 * `run(undefined)`, not `exit()`: the same store (none) inside `fn` and what it starts, but on Node 20
 * `exit()` disables and re-enables the async hooks on every call.
 */
export function unrecorded<T>(fn: () => T): T {
  return storage.run(undefined, fn);
}

/** A statement about to run: its tables join the current answer's reads. */
export function readStatement(text: string): void {
  const reads = storage.getStore();
  if (reads !== undefined) reads.tables |= bitsOfText(text);
}

/** A statement whose text cannot be told (a driver object): the current answer cannot be stored. */
export function readUnknown(): void {
  const reads = storage.getStore();
  if (reads !== undefined) reads.tables |= UNKNOWN;
}

/** What `inner` read (run under its own Reads) joins the current answer's reads too. */
export function joinReads(inner: Reads): void {
  const reads = storage.getStore();
  if (reads === undefined) return;
  reads.tables |= inner.tables;
  if (!(inner.until >= reads.until)) reads.until = inner.until;
}

/** Something read from memory under `table`'s version: the table joins the current answer's reads. */
export function readTable(table: VersionedTable): void {
  const reads = storage.getStore();
  if (reads !== undefined) reads.tables |= bit(table);
}

/** What was read may change at `instant` (ms since the epoch) without a write: a token expiring. NaN: at once. */
export function readUntil(instant: number): void {
  const reads = storage.getStore();
  if (reads !== undefined && !(instant >= reads.until)) reads.until = Number.isNaN(instant) ? -Infinity : instant;
}

const tablesByBits: (readonly VersionedTable[])[] = [];

/**
 * The versioned tables an answer read, in VERSIONED_TABLES order; undefined when it cannot be
 * stored: it read a table no version covers, or nothing (then what it depends on is not known).
 */
export function tablesRead(reads: Reads): readonly VersionedTable[] | undefined {
  const bits = reads.tables;
  if (bits === 0 || bits & UNKNOWN) return undefined;
  return (tablesByBits[bits] ??= VERSIONED_TABLES.filter((t) => bits & bit(t)));
}
