// What a collection declares; the engine allows nothing else. Column names here are the only
// identifiers that ever reach SQL text, so they are written by us, never taken from a request.

export type ValueType = 'string' | 'integer';

export interface FilterDef {
  /** The column the filter reads (a name field: through its keys, `text`). */
  column: string;
  /**
   * eq: equal (any of, for a list); gt/lt: greater/less than the value; prefix: starts with the
   * value, accents and case ignored (a range of the column's collation key, `<column>_key`, so the
   * index that sorts by it serves it); match: every word of the value starts a word of the name,
   * accents and case ignored (the search index, `search` below).
   */
  op: 'eq' | 'gt' | 'lt' | 'prefix' | 'match';
  type: ValueType;
  /**
   * How a text filter compares, through the columns kept beside a name (src/db/collation.ts):
   * - 'exact': the text as written (NFC: composed and decomposed input alike), through the collation
   *   key `<column>_key` (the sort index serves it);
   * - 'fold': accents and case ignored, through the fold `<column>_fold` (the users' country only);
   * - 'key': the values are collation keys themselves (the engine's own filters: one value of a sort
   *   key, from a summary), `<column>_key` equal to one; `probe` also compares `<column>_fold` with the
   *   key's fold, so that an index led by the fold serves it;
   * - 'binary' (the engine's own filters too): the column as stored, written `collate "binary"` as a
   *   sort orders other text (so PostgreSQL sees that sort key constant under one value of it).
   * Unset: the column as stored (status, a duration).
   */
  text?: 'exact' | 'fold' | 'key' | 'binary';
  /** With text 'key': also `<column>_fold` = the value's fold (the same rows; an index led by the fold finds them). */
  probe?: boolean;
  /** Accept `[a,b]`: any of the listed values. */
  list?: boolean;
  /** The only values that can match; others are rejected instead of silently matching nothing. */
  values?: readonly string[];
  /** The form a string value must have (e.g. mm:ss), with the message a value that lacks it gets. */
  pattern?: { regex: string; message: string; example: string };
  /** op match: the kind code of the listed table's rows in the search index (1 artist, 2 album, 3 song). */
  search?: { code: 1 | 2 | 3 };
  description: string;
}

export interface SortDef {
  column: string;
  /**
   * Text sorts by code point (the same on both backends: collation "binary"); a name field (`key`)
   * by its collation key `<column>_key`, as people read (src/db/collation.ts): accents and case
   * ignored first, then the exact text. `fold`: the field also has `<column>_fold` (an equality of
   * its key then probes it: page-strategy.ts, list/by-value.ts).
   */
  type: ValueType;
  key?: boolean;
  fold?: boolean;
}

export interface CollectionDef {
  /** Used in messages and alias lookups. */
  name: string;
  filters: Readonly<Record<string, FilterDef>>;
  /** Must include `id`: it breaks every tie. */
  sortable: Readonly<Record<string, SortDef>>;
  /** `embed=<name>`: related items each row may carry (the route reads them, one query per level), with their description. */
  embeds?: Readonly<Record<string, string>>;
  /** The order without a sort parameter (id ascending when absent). */
  defaultSort?: readonly { field: string; direction: 'asc' | 'desc' }[];
}

/**
 * What a declaration holds under `name`, or undefined. Every name a client sends (a parameter, a sort
 * field, an embed, an alias's collection) is looked up through here: it is data, and `constructor` or
 * `__proto__` must be as unknown as any other undeclared name, never a property every object inherits.
 */
export function declared<T>(record: Readonly<Record<string, T>> | undefined, name: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, name) ? record[name] : undefined;
}

export const PAGE_DEFAULT_SIZE = 20;
export const PAGE_MAX_SIZE = 100;
/** Lists given as `[a,b]` hold at most this many values. */
export const LIST_MAX_ITEMS = 50;
/** Longest accepted filter value. */
export const VALUE_MAX_LENGTH = 200;
/** Largest integer accepted anywhere in a query (32-bit, as ids and ages are stored). */
export const INT_MAX = 2147483647;

/** The typeahead filter of a collection's `name`. */
export const NAME_STARTS_WITH: FilterDef = {
  column: 'name',
  op: 'prefix',
  type: 'string',
  description: 'Name starts with the value, accents and case ignored (typeahead: `vini` finds Vinícius, `MOT` Mötley Crüe).',
};

/** The exact `name` filter of a collection. */
export const NAME_EQUALS: FilterDef = {
  column: 'name',
  op: 'eq',
  type: 'string',
  text: 'exact',
  description: 'Exact name, as written (accents and case count; composed and decomposed accents are one text).',
};

/** `q`: full text on `name` through the search index (the rows of kind `code` in it), as GET /search matches. */
export const nameMatches = (code: 1 | 2 | 3): FilterDef => ({
  column: 'name',
  op: 'match',
  type: 'string',
  search: { code },
  description: 'Full text: every word of the value must start a word of the name, accents and case ignored, as GET /search matches.',
});
