import { badRequest, type ErrorDetail } from '../errors/index.js';
import { declared, type CollectionDef, type FilterDef, type SortDef } from './collection.js';
import type { RawParam } from './parse.js';
import { readFilterValues } from './values.js';
import { readPage, PAGE_PARAMS, type Page } from './page.js';
import { readSort, SORT_PARAMS, type SortKey } from './sort.js';
import { cursorScope, decodeCursor } from './cursor.js';
import { sortKeys } from './sort.js';

// Step 2: the pairs checked against what the collection declares, into a typed request. Every
// failure is collected, then reported together.

export interface Condition {
  readonly param: string;
  readonly def: FilterDef;
  readonly values: readonly (string | number)[];
  /** Set in the plan for a backend (list/source.ts forDialect): a full-text condition is written in the backend's own syntax. */
  readonly postgres?: boolean;
}

export interface ListRequest {
  /** The collection's name: what a cursor is bound to (cursor.ts). */
  readonly collection: string;
  readonly filters: readonly Condition[];
  readonly sort: readonly Readonly<SortKey & { def: SortDef }>[];
  readonly page: Readonly<Page>;
  /** The request's own non-pagination parameters, in order: what Link URLs carry over. */
  readonly kept: readonly RawParam[];
  /** `embed=`: the related items asked for (one of the collection's `embeds`). */
  readonly embed?: string;
}

/**
 * What a repeated parameter is told. Only a list filter has a way to give several values (`[a,b]`);
 * every other parameter takes one. An unknown parameter is reported as unknown, once.
 */
function repeatedDetail(field: string, filter: FilterDef | undefined, key: string): ErrorDetail | undefined {
  if (filter?.list) return { field, invalid: 'Given more than once; a list filter takes [a,b].' };
  if (filter || isControlParam(key)) return { field, invalid: 'Given more than once; takes a single value.' };
  return undefined;
}

function filtersOf(def: CollectionDef, params: RawParam[], prefix: string, details: ErrorDetail[], other: (p: RawParam) => boolean) {
  const filters: Condition[] = [];
  const seen = new Set<string>();
  for (const p of params) {
    const field = prefix + p.key;
    const filter = declared(def.filters, p.key);
    if (seen.has(p.key)) {
      const detail = repeatedDetail(field, filter, p.key);
      if (detail) details.push(detail);
      continue;
    }
    seen.add(p.key);
    if (filter) {
      const read = readFilterValues(field, p.value, filter);
      if (read.ok) filters.push({ param: p.key, def: filter, values: read.value });
      else details.push(read.detail);
    } else if (!other(p)) {
      details.push({ field, unknown: 'Unknown query parameter.' });
    }
  }
  return filters;
}

/** A list request (filters, sort, page) against a collection; throws 400 with every failure. */
export function checkListRequest(def: CollectionDef, params: RawParam[], parseErrors: ErrorDetail[] = []): ListRequest {
  const details: ErrorDetail[] = [...parseErrors];
  // `fields` is read by http/fields.plugin.ts (every GET), and kept in Link like any parameter.
  const isControl = (p: RawParam) => PAGE_PARAMS.has(p.key) || SORT_PARAMS.has(p.key) || p.key === 'fields' || (p.key === 'embed' && def.embeds !== undefined);
  const embedText = def.embeds ? params.find((p) => p.key === 'embed')?.value : undefined;
  if (embedText !== undefined && declared(def.embeds, embedText) === undefined)
    details.push({ field: 'embed', enum: `Must be one of: ${Object.keys(def.embeds!).join(', ')}.` });
  const filters = filtersOf(def, params, '', details, isControl);
  let sort = readSort(
    def,
    params.filter((p) => SORT_PARAMS.has(p.key)),
    details,
  );
  const page = readPage(
    params.filter((p) => PAGE_PARAMS.has(p.key)),
    details,
  );
  if (sort.length === 0 && def.defaultSort) sort = def.defaultSort.map((k) => ({ ...k, def: def.sortable[k.field]! }));
  let after: unknown[] | undefined;
  if (page.cursor) {
    const keys = sortKeys(sort);
    const read = decodeCursor(page.cursor, cursorScope(def.name, keys), keys);
    if (read.ok) after = read.values;
    else details.push(read.detail);
  }
  if (details.length > 0) throw badRequest(details, 'Request validation failed.');
  return {
    collection: def.name,
    filters,
    sort,
    page: after ? { ...page, after } : page,
    kept: params.filter((p) => !PAGE_PARAMS.has(p.key)),
    ...(embedText ? { embed: embedText } : {}),
  };
}

/**
 * The filters an alias stands for. Sort and page are not part of an alias (they come with each
 * request); details name the parameter under `prefix` (e.g. `query.status`).
 */
export function checkFilterQuery(def: CollectionDef, params: RawParam[], parseErrors: ErrorDetail[], prefix: string): Condition[] {
  const details: ErrorDetail[] = parseErrors.map((d) => ({ ...d, field: prefix + d.field }));
  const filters = filtersOf(def, params, prefix, details, (p) => {
    if (!isControlParam(p.key)) return false;
    details.push({ field: prefix + p.key, invalid: 'An alias holds filters only; sort and page are given with each request.' });
    return true;
  });
  if (details.length > 0) throw badRequest(details, 'Request validation failed.');
  return filters;
}

function isControlParam(key: string): boolean {
  return PAGE_PARAMS.has(key) || SORT_PARAMS.has(key) || key === 'embed';
}
