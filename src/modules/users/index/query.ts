import { comparedValue, comparisonOf } from '../../../query/comparison.js';
import { orderKeys, type ListPlan } from '../../../query/sql.js';
import type { ListResult } from '../../../query/index.js';
import { cursorScope, encodeCursor } from '../../../query/cursor.js';
import { AGE_CELLS, type SortField, type UserRow, type UsersIndex } from './users-index.js';
import type { IndexAnswers, IndexSort } from './answers.js';
import type { Permutation } from './permutation.js';

// A page and its exact total from the index, for a plan the declaration answers (answers.ts): the
// filters as masks over dictionary codes and an age window, the total a sum of the count table, the
// page a walk of the first sort key's permutation (whole groups skipped by their counts when the key
// is one the count table is by), and within a group of the first key, the second key's order.

interface Selection {
  /** Per status code, 1 when selected; null: every status. */
  status: Uint8Array | null;
  /** Per country code, 1 when selected; null: every country. */
  country: Uint8Array | null;
  /** Inclusive age window of the count table's cells (integer ages). */
  low: number;
  high: number;
  /** The filters' own bounds, compared as SQL does (age > gt and age < lt): a hand-written age may be a real. */
  gt: number;
  lt: number;
  all: boolean;
}

function selectionOf(index: UsersIndex, plan: ListPlan): Selection {
  let status: Uint8Array | null = null;
  let country: Uint8Array | null = null;
  let low = -Infinity;
  let high = Infinity;
  let gt = -Infinity;
  let lt = Infinity;
  for (const c of plan.filters) {
    const comparison = comparisonOf(c);
    const values = c.values.map((v) => comparedValue(comparison, v));
    if (comparison.column === 'status') {
      const mask = new Uint8Array(index.status.size);
      for (const v of values) {
        const code = index.status.find(String(v));
        if (code !== undefined && (status === null || status[code] === 1)) mask[code] = 1;
      }
      status = mask;
    } else if (comparison.column === 'country_fold') {
      const folds = new Set<number>();
      for (const v of values) {
        const code = index.fold.find(String(v));
        if (code !== undefined) folds.add(code);
      }
      const mask = new Uint8Array(index.country.size);
      for (let code = 0; code < index.country.size; code++)
        if (folds.has(index.countryFold[code]!) && (country === null || country[code] === 1)) mask[code] = 1;
      country = mask;
    } else if (comparison.column === 'age') {
      // Ages are integers: > v is >= floor(v) + 1, < v is <= ceil(v) - 1.
      const v = Number(values[0]);
      if (comparison.op === 'gt') {
        low = Math.max(low, Math.floor(v) + 1);
        gt = Math.max(gt, v);
      } else if (comparison.op === 'lt') {
        high = Math.min(high, Math.ceil(v) - 1);
        lt = Math.min(lt, v);
      } else throw new Error(`users index: age ${comparison.op} is not declared`);
    } else {
      throw new Error(`users index: ${comparison.column} is not declared`);
    }
  }
  return { status, country, low, high, gt, lt, all: status === null && country === null && low === -Infinity && high === Infinity };
}

function matches(index: UsersIndex, s: Selection, slot: number): boolean {
  if (s.status !== null && s.status[index.statuses[slot]!] !== 1) return false;
  if (s.country !== null && s.country[index.countries[slot]!] !== 1) return false;
  const age = index.ages[slot]!;
  return age > s.gt && age < s.lt;
}

/**
 * Sums the count table over the selection; `by` (status, age or country), when given, receives each
 * selected cell's count under that field's sort value (a rank for text), so that a walk can skip groups.
 */
function countSelected(index: UsersIndex, s: Selection, by?: { field: SortField; into: Map<number, number> }): number {
  let total = 0;
  const ageLow = Math.max(0, s.low);
  const ageHigh = Math.min(AGE_CELLS - 1, s.high);
  const { counts, below, statusCap } = index;
  const statusCount = index.status.size;
  const into = by?.into;
  const add = (value: number, n: number) => into!.set(value, (into!.get(value) ?? 0) + n);
  for (let country = 0; country < index.country.size && country < index.countryCap; country++) {
    if (s.country !== null && s.country[country] !== 1) continue;
    const countryRank = index.country.rank(country);
    for (let status = 0; status < statusCount && status < statusCap; status++) {
      if (s.status !== null && s.status[status] !== 1) continue;
      const base = (country * statusCap + status) * AGE_CELLS;
      let sum = 0;
      if (by?.field === 'age') {
        for (let age = ageLow; age <= ageHigh; age++) {
          const n = counts[base + age]!;
          if (n !== 0) add(age, n);
          sum += n;
        }
      } else if (ageLow <= ageHigh) {
        const row = (country * statusCap + status) * (AGE_CELLS + 1);
        sum = below[row + ageHigh + 1]! - below[row + ageLow]!;
        if (sum !== 0 && by?.field === 'status') add(index.status.rank(status), sum);
        if (sum !== 0 && by?.field === 'country') add(countryRank, sum);
      }
      total += sum;
    }
  }
  for (const slot of index.oddAges) {
    if (!matches(index, s, slot)) continue;
    total++;
    if (into) add(index.value(by.field, slot), 1);
  }
  return total;
}

const GROUPED: ReadonlySet<SortField> = new Set(['status', 'age', 'country']);

/** The page (offset, limit) of the matching slots in the order of `first` (ties by id). */
function walkOne(
  index: UsersIndex,
  p: Permutation,
  s: Selection,
  groups: Map<number, number> | undefined,
  offset: number,
  limit: number,
  total: number,
): number[] {
  const out: number[] = [];
  if (s.all) {
    for (let at = offset; at < p.length && out.length < limit; at++) out.push(p.slots[at]!);
    return out;
  }
  const take = Math.min(limit, total - offset);
  if (!groups && offset > total - offset - take && indexTuning.fromTheEnd) {
    // Nearer the end than the start: walked backward, passing only the matches after the page (as SQL's fromTheEnd).
    const skip = total - offset - take;
    let passed = 0;
    for (let at = p.length - 1; at >= 0 && out.length < take; at--) {
      const slot = p.slots[at]!;
      if (!matches(index, s, slot)) continue;
      if (passed >= skip) out.push(slot);
      passed++;
    }
    return out.reverse();
  }
  let at = 0;
  let passed = 0;
  if (groups) {
    while (at < p.length) {
      const m = groups.get(p.value(p.slots[at]!)) ?? 0;
      if (passed + m > offset) break;
      passed += m;
      at = p.groupEnd(at);
    }
  }
  for (; at < p.length && out.length < limit; at++) {
    const slot = p.slots[at]!;
    if (!matches(index, s, slot)) continue;
    if (passed >= offset) out.push(slot);
    passed++;
  }
  return out;
}

/**
 * Below `sortGroupMax` rows, a group of the first key is sorted by the second; above, the second
 * key's permutation is walked for it (when that reads fewer entries). Both give the same page; the
 * differential test sets it to 0 and back to exercise both. `fromTheEnd`: a page nearer the end of a
 * single-key walk is found walking backward (off in the test half of the time, for the same reason).
 */
export const indexTuning = { sortGroupMax: 2048, fromTheEnd: true };

function walkTwo(
  index: UsersIndex,
  p: Permutation,
  q: Permutation,
  s: Selection,
  groups: Map<number, number> | undefined,
  offset: number,
  limit: number,
): number[] {
  const out: number[] = [];
  let at = 0;
  let passed = 0;
  while (at < p.length && out.length < limit) {
    const v = p.value(p.slots[at]!);
    const end = p.groupEnd(at);
    let m: number;
    if (groups) m = groups.get(v) ?? 0;
    else if (s.all) m = end - at;
    else {
      m = 0;
      for (let i = at; i < end; i++) if (matches(index, s, p.slots[i]!)) m++;
    }
    if (passed + m <= offset || m === 0) {
      passed += m;
      at = end;
      continue;
    }
    const skip = Math.max(0, offset - passed);
    const take = Math.min(m - skip, limit - out.length);
    const size = end - at;
    // Walking q for this group reads about (skip + take) * (all rows / group rows) entries; sorting reads the group.
    if (size <= indexTuning.sortGroupMax || ((skip + take) * p.length) / size > size * 4) {
      const members: number[] = [];
      for (let i = at; i < end; i++) {
        const slot = p.slots[i]!;
        if (matches(index, s, slot)) members.push(slot);
      }
      members.sort((a, b) => q.compare(a, b));
      for (let i = skip; i < skip + take; i++) out.push(members[i]!);
    } else {
      let seen = 0;
      for (let i = 0; i < q.length && seen < skip + take; i++) {
        const slot = q.slots[i]!;
        if (p.value(slot) !== v || !matches(index, s, slot)) continue;
        if (seen >= skip) out.push(slot);
        seen++;
      }
    }
    passed += m;
    at = end;
  }
  return out;
}

/** The first position of p at which `yes` holds, `yes` being false then true along p. */
function firstWhere(p: Permutation, yes: (slot: number) => boolean): number {
  let lo = 0;
  let hi = p.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (yes(p.slots[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * A cursor page (after=): the first `limit` matching slots past the cursor's key values in the
 * sort's order (with id, the keys a cursor holds: sql.ts orderKeys). Single key: the permutation's
 * order is the keys' order, so the first slot past it is found by a binary search. Two keys: the
 * first key's groups before the cursor's are skipped by a binary search, and within the cursor's own
 * group the slots not past it are left out.
 */
function walkCursor(
  index: UsersIndex,
  p: Permutation,
  q: Permutation | undefined,
  s: Selection,
  cursor: { field: SortField; desc: boolean; value: number }[],
  limit: number,
): number[] {
  const past = (slot: number) => {
    for (const k of cursor) {
      const v = index.value(k.field, slot);
      if (v !== k.value) return k.desc ? v < k.value : v > k.value;
    }
    return false;
  };
  const out: number[] = [];
  if (!q) {
    for (let at = cursor.length ? firstWhere(p, past) : 0; at < p.length && out.length < limit; at++) {
      const slot = p.slots[at]!;
      if (matches(index, s, slot)) out.push(slot);
    }
    return out;
  }
  const first = cursor[0];
  const notBefore = (slot: number) => {
    const v = index.value(first!.field, slot);
    return first!.desc ? v <= first!.value : v >= first!.value;
  };
  let at = first ? firstWhere(p, notBefore) : 0;
  const wanted = (slot: number) => matches(index, s, slot) && (!first || past(slot));
  while (at < p.length && out.length < limit) {
    const v = p.value(p.slots[at]!);
    const end = p.groupEnd(at);
    const size = end - at;
    const need = limit - out.length;
    if (size <= indexTuning.sortGroupMax || (need * p.length) / size > size * 4) {
      const members: number[] = [];
      for (let i = at; i < end; i++) if (wanted(p.slots[i]!)) members.push(p.slots[i]!);
      members.sort((a, b) => q.compare(a, b));
      for (const slot of members.slice(0, need)) out.push(slot);
    } else {
      for (let i = 0; i < q.length && out.length < limit; i++) {
        const slot = q.slots[i]!;
        if (p.value(slot) === v && wanted(slot)) out.push(slot);
      }
    }
    at = end;
  }
  return out;
}

/** The page and exact total of a plan the index answers (sort: answers.ts indexSortOf); a cursor page returns its next cursor as SQL does. */
export function answerFromIndex(index: UsersIndex, answers: IndexAnswers, sort: readonly IndexSort[], plan: ListPlan): ListResult<UserRow> {
  const selection = selectionOf(index, plan);
  const first = sort[0] ?? { field: 'id' as const, desc: false };
  const second = sort[1];
  const { offset, limit, style, after } = plan.request.page;
  if (style === 'cursor') {
    const total = selection.all ? index.size : countSelected(index, selection);
    const keys = orderKeys(plan).map((k) => ({ field: answers.sorts.get(k.column)!, desc: k.direction === 'desc' }));
    // Keys after id change nothing (ids are unique): the cursor is compared up to id.
    const compared = keys.slice(0, keys.findIndex((k) => k.field === 'id') + 1);
    const cursor = after ? compared.map((k, i) => ({ ...k, value: index.valueOfStored(k.field, after[i]) })) : [];
    const p = index.perm(first.field, first.desc);
    const slots = walkCursor(index, p, second && index.perm(second.field, second.desc), selection, cursor, limit + 1);
    const last = slots.length > limit ? slots[limit - 1] : undefined;
    const rows = slots.slice(0, limit).map((slot) => index.row(slot));
    if (last === undefined) return { rows, total };
    const next = encodeCursor(
      cursorScope(plan.request.collection, orderKeys(plan)),
      keys.map((k) => index.storedValue(k.field, last)),
    );
    return { rows, total, next };
  }
  const groups = GROUPED.has(first.field) && !selection.all ? new Map<number, number>() : undefined;
  const total = selection.all ? index.size : countSelected(index, selection, groups && { field: first.field, into: groups });
  if (offset >= total) return { rows: [], total };
  const p = index.perm(first.field, first.desc);
  const slots = second
    ? walkTwo(index, p, index.perm(second.field, second.desc), selection, groups, offset, limit)
    : walkOne(index, p, selection, groups, offset, limit, total);
  return { rows: slots.map((slot) => index.row(slot)), total };
}
