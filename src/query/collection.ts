// What a collection declares; the engine allows nothing else. Column names here are the only
// identifiers that ever reach SQL text, so they are written by us, never taken from a request.

export type ValueType = 'string' | 'integer';

export interface FilterDef {
  /** The column the filter reads. */
  column: string;
  /** eq: equal (any of, for a list); gt/lt: greater/less than the value. */
  op: 'eq' | 'gt' | 'lt';
  type: ValueType;
  /** Compare lower(column) with lower(value). */
  caseInsensitive?: boolean;
  /**
   * Exact match that also says lower(column) = lower(value), so an index on lower(column) (the
   * one that serves case-insensitive sorting) narrows the rows before the exact test.
   */
  lowerIndexed?: boolean;
  /** Accept `[a,b]`: any of the listed values. */
  list?: boolean;
  /** The only values that can match; others are rejected instead of silently matching nothing. */
  values?: readonly string[];
  description: string;
}

export interface SortDef {
  column: string;
  /** Strings sort by lower(column): a-to-z case-insensitively on every backend. */
  type: ValueType;
}

export interface CollectionDef {
  /** Used in messages and alias lookups. */
  name: string;
  filters: Readonly<Record<string, FilterDef>>;
  /** Must include `id`: it breaks every tie. */
  sortable: Readonly<Record<string, SortDef>>;
}

export const PAGE_DEFAULT_SIZE = 20;
export const PAGE_MAX_SIZE = 100;
/** Lists given as `[a,b]` hold at most this many values. */
export const LIST_MAX_ITEMS = 50;
/** Longest accepted filter value. */
export const VALUE_MAX_LENGTH = 200;
/** Largest integer accepted anywhere in a query (32-bit, as ids and ages are stored). */
export const INT_MAX = 2147483647;
