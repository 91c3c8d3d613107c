import type { ErrorDetail } from '../errors/index.js';
import { declared, type CollectionDef, type SortDef } from './collection.js';
import type { RawParam } from './parse.js';

// `sort_by=f&order=asc|desc` or `sort=f1:asc,f2:desc` (a bare field means asc). Only declared fields.

export const SORT_PARAMS = new Set(['sort', 'sort_by', 'order']);
const DIRECTIONS = ['asc', 'desc'] as const;
export type Direction = (typeof DIRECTIONS)[number];

export interface SortKey {
  field: string;
  direction: Direction;
}

const isDirection = (s: string): s is Direction => (DIRECTIONS as readonly string[]).includes(s);

function firstOf(params: RawParam[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of params) if (!out.has(p.key)) out.set(p.key, p.value);
  return out;
}

export function readSort(def: CollectionDef, params: RawParam[], details: ErrorDetail[]): (SortKey & { def: SortDef })[] {
  const given = firstOf(params);
  // Only an error names the sortable fields.
  const fieldsText = () => `Must be one of: ${Object.keys(def.sortable).join(', ')}.`;
  const sortDef = (field: string) => declared(def.sortable, field);
  const keys: (SortKey & { def: SortDef })[] = [];

  const sort = given.get('sort');
  if (sort !== undefined) {
    for (const other of ['sort_by', 'order']) {
      if (given.has(other)) details.push({ field: other, invalid: 'Cannot be combined with sort.' });
    }
    const seen = new Set<string>();
    for (const item of sort.split(',')) {
      const parts = item.split(':');
      const [field = '', direction = 'asc'] = parts.map((s) => s.trim());
      if (field === '' || parts.length > 2) {
        details.push({ field: 'sort', invalid: 'Write sort as field:asc or field:desc, separated by commas.' });
        continue;
      }
      const found = sortDef(field);
      if (!found) details.push({ field: 'sort', enum: `Sort field "${field}" is not sortable. ${fieldsText()}` });
      if (!isDirection(direction)) details.push({ field: 'sort', enum: `Direction of "${field}" must be asc or desc.` });
      if (seen.has(field)) details.push({ field: 'sort', invalid: `Field "${field}" is given more than once.` });
      seen.add(field);
      if (found && isDirection(direction)) keys.push({ field, direction, def: found });
    }
    return keys;
  }

  const sortBy = given.get('sort_by');
  const order = given.get('order');
  if (order !== undefined && !isDirection(order)) details.push({ field: 'order', enum: 'Must be one of: asc, desc.' });
  if (sortBy === undefined) {
    if (order !== undefined) details.push({ field: 'order', invalid: 'Needs sort_by.' });
    return keys;
  }
  const found = sortDef(sortBy);
  if (!found) details.push({ field: 'sort_by', enum: fieldsText() });
  else if (order === undefined || isDirection(order)) keys.push({ field: sortBy, direction: order ?? 'asc', def: found });
  return keys;
}

/**
 * A sort key as the SQL orders by it: the stored column (a name's collation key `<column>_key`,
 * db/collation.ts), whether it holds text, and whether that text is compared as `collate "binary"`
 * (other text; a key column is declared in that collation, and compares so as it is).
 */
export interface OrderKey {
  column: string;
  string: boolean;
  binary: boolean;
  direction: 'asc' | 'desc';
}

/** The stored column a sort key orders by: a name field's collation key, else the column. */
export const sortColumnOf = (def: SortDef): string => (def.key ? `${def.column}_key` : def.column);

/** orderKeys of a request's sort. */
export function sortKeys(sort: readonly (SortKey & { def: SortDef })[]): OrderKey[] {
  const keys: OrderKey[] = sort.map((k) => ({
    column: sortColumnOf(k.def),
    string: k.def.type === 'string',
    binary: k.def.type === 'string' && k.def.key !== true,
    direction: k.direction,
  }));
  if (!sort.some((k) => k.field === 'id')) keys.push({ column: 'id', string: false, binary: false, direction: 'asc' });
  return keys;
}
