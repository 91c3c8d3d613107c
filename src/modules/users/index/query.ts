import { comparedValue, comparisonOf, testOf as comparisonTest } from '../../../query/comparison.js';
import { orderKeys, type ListPlan } from '../../../query/sql.js';
import type { ListResult } from '../../../query/index.js';
import { cursorScope, encodeCursor } from '../../../query/cursor.js';
import { AGE_CELLS, NAME_FIELDS, ODD, type NameField, type SortField, type UserRow, type UsersIndex } from './users-index.js';
import type { IndexAnswers, IndexSort } from './answers.js';
import type { Group, Order, Place } from './order.js';
import type { Permutation } from './permutation.js';
import type { GroupCounts } from './group-counts.js';

// A page and its exact total from the index, for a plan the declaration answers (answers.ts): the
// filters as masks over dictionary codes and an age window, the total a sum of the count table, the
// page a walk of the first sort key's order (order.ts: its permutation, read backward by groups when
// descending; whole groups skipped by their counts when the key is one the count table is by), and
// within a group of the first key, the second key's order.

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
  /**
   * Per name code of each name field with a prefix filter, 1 when its sort text (the stored key) is
   * one the filter's SQL takes (comparison.ts testOf on it); absent: every name. Neither the count
   * table nor the attributes see names: a slot is tested on its name codes (matches), and counts with
   * a name mask are read from that name's table or the slots (countByNames).
   */
  names: Partial<Record<NameField, Uint8Array>>;
  all: boolean;
  /** Within one group of a first sort key (narrowed): the slot's value of that key is the group's. */
  only?: (slot: number) => boolean;
}

function selectionOf(index: UsersIndex, plan: ListPlan): Selection {
  let status: Uint8Array | null = null;
  let country: Uint8Array | null = null;
  let low = -Infinity;
  let high = Infinity;
  let gt = -Infinity;
  let lt = Infinity;
  const names: Partial<Record<NameField, Uint8Array>> = {};
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
    } else if ((comparison.column === 'first_name_key' || comparison.column === 'last_name_key') && comparison.op === 'prefix') {
      const field: NameField = comparison.column === 'first_name_key' ? 'first_name' : 'last_name';
      const test = comparisonTest(comparison, c.values)!;
      const dictionary = index.nameDictionary(field);
      const before = names[field];
      const mask = new Uint8Array(dictionary.size);
      for (let code = 0; code < dictionary.size; code++) if ((before === undefined || before[code] === 1) && test(dictionary.sortText[code])) mask[code] = 1;
      names[field] = mask;
    } else {
      throw new Error(`users index: ${comparison.column} is not declared`);
    }
  }
  const named = names.first_name !== undefined || names.last_name !== undefined;
  return { status, country, low, high, gt, lt, names, all: !named && status === null && country === null && low === -Infinity && high === Infinity };
}

/**
 * The selection within the group of `field` = `value` (a group of a first sort key led by status, age
 * or country): the same filters, with that field's condition added where the count table and the
 * attributes can see it (its status or country codes, its age cell), and in `only` for the columns.
 */
function narrowed(index: UsersIndex, s: Selection, field: SortField, value: number): Selection {
  const out: Selection = { ...s, all: false, only: (slot) => index.value(field, slot) === value };
  if (field === 'status' || field === 'country') {
    const dictionary = field === 'status' ? index.status : index.country;
    const before = field === 'status' ? s.status : s.country;
    const mask = new Uint8Array(dictionary.size);
    for (let code = 0; code < dictionary.size; code++) if (dictionary.rank(code) === value && (before === null || before[code] === 1)) mask[code] = 1;
    if (field === 'status') out.status = mask;
    else out.country = mask;
  } else if (field === 'age') {
    // An age without a cell (by hand) is in no cell's window; `only` finds it among the odd ones.
    const cell = Number.isInteger(value) && value >= 0 && value < AGE_CELLS;
    out.low = cell ? Math.max(s.low, value) : 1;
    out.high = cell ? Math.min(s.high, value) : 0;
  } else throw new Error(`users index: ${field} groups are not narrowed`);
  return out;
}

function matches(index: UsersIndex, s: Selection, slot: number): boolean {
  if (s.status !== null && s.status[index.statuses[slot]!] !== 1) return false;
  if (s.country !== null && s.country[index.countries[slot]!] !== 1) return false;
  const age = index.ages[slot]!;
  if (!(age > s.gt && age < s.lt)) return false;
  const { first_name: first, last_name: last } = s.names;
  if (first !== undefined && first[index.firstNames[slot]!] !== 1) return false;
  if (last !== undefined && last[index.lastNames[slot]!] !== 1) return false;
  return s.only === undefined || s.only(slot);
}

/** The attributes rows whose (country, status) the selection takes. */
function selectedRows(index: UsersIndex, s: Selection): number[] {
  const rows: number[] = [];
  for (let r = 0; r < index.rowCountry.length; r++) {
    if (s.status !== null && s.status[index.rowStatus[r]!] !== 1) continue;
    if (s.country !== null && s.country[index.rowCountry[r]!] !== 1) continue;
    rows.push(r);
  }
  return rows;
}

/**
 * A selection as a test of a slot's attributes (users-index.ts attrOf): per attributes row, 1 when its
 * (country, status) is selected, 2 for the ODD row; and the window of age cells. A slot whose row or
 * age is ODD is tested on its columns (matches).
 */
interface Test {
  s: Selection;
  rows: Uint8Array;
  lo: number;
  hi: number;
}

function testOf(index: UsersIndex, s: Selection): Test {
  const rows = new Uint8Array(ODD + 1);
  // With a name mask every slot of a selected row is tested on its columns (the attributes hold no name).
  const row = named(s) ? 2 : 1;
  for (const r of selectedRows(index, s)) rows[r] = row;
  rows[ODD] = 2;
  return { s, rows, lo: Math.max(0, s.low), hi: Math.min(AGE_CELLS - 1, s.high) };
}

/** Whether the slot at a permutation position, with attributes `attr`, is selected. */
function accept(index: UsersIndex, t: Test, attr: number, slot: number): boolean {
  const row = t.rows[attr >>> 8]!;
  if (row === 0) return false;
  const age = attr & 0xff;
  if (row === 1 && age !== ODD) return age >= t.lo && age <= t.hi;
  return matches(index, t.s, slot);
}

/** The selected slots among positions [from, to) of p's permutation. */
function countRange(index: UsersIndex, p: Order, t: Test, from: number, to: number): number {
  const { slots, attrs } = p.p;
  let n = 0;
  for (let at = from; at < to; at++) if (accept(index, t, attrs[at]!, slots[at]!)) n++;
  return n;
}

/**
 * Sums the count table over the selection; `by` (status, age or country), when given, receives each
 * selected cell's count under that field's sort value (a rank for text), so that a walk can skip groups.
 */
function countSelected(index: UsersIndex, s: Selection, by?: { field: SortField; into: Map<number, number> }): number {
  if (named(s)) return countByNames(index, s, by);
  let total = 0;
  const ageLow = Math.max(0, s.low);
  const ageHigh = Math.min(AGE_CELLS - 1, s.high);
  const { counts, below, statusCap } = index;
  const statusCount = index.status.size;
  const into = by?.into;
  const add = (value: number, n: number) => into!.set(value, (into!.get(value) ?? 0) + n);
  if (by && isName(by.field)) byName(index, s, by.field, into!);
  // By age: summed per age over the cells first, then one entry an age (not one Map update a cell).
  const perAge = by?.field === 'age' ? new Int32Array(AGE_CELLS) : undefined;
  for (let country = 0; country < index.country.size && country < index.countryCap; country++) {
    if (s.country !== null && s.country[country] !== 1) continue;
    const countryRank = index.country.rank(country);
    for (let status = 0; status < statusCount && status < statusCap; status++) {
      if (s.status !== null && s.status[status] !== 1) continue;
      const base = (country * statusCap + status) * AGE_CELLS;
      let sum = 0;
      if (perAge) {
        for (let age = ageLow; age <= ageHigh; age++) {
          const n = counts[base + age]!;
          perAge[age] = perAge[age]! + n;
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
  if (perAge) for (let age = ageLow; age <= ageHigh; age++) if (perAge[age] !== 0) add(age, perAge[age]!);
  for (const slot of index.oddAges) {
    if (!matches(index, s, slot)) continue;
    total++;
    if (into) add(index.value(by.field, slot), 1);
  }
  return total;
}

const GROUPED: ReadonlySet<SortField> = new Set(['status', 'age', 'country']);

/** Whether the selection has a name mask (a prefix filter). */
function named(s: Selection): boolean {
  return s.names.first_name !== undefined || s.names.last_name !== undefined;
}

/**
 * countSelected for a selection with a name mask (the count table cannot see names): from the table
 * of the one masked name field (group-counts.ts: per name code, attributes row and age cell) when
 * there is one and `by` is not the other name, the cells of the selected codes, rows and age window;
 * else by testing every slot (the id permutation holds each once).
 */
function countByNames(index: UsersIndex, s: Selection, by?: { field: SortField; into: Map<number, number> }): number {
  const into = by?.into;
  const add = (value: number, n: number) => into!.set(value, (into!.get(value) ?? 0) + n);
  const masked = NAME_FIELDS.filter((f) => s.names[f] !== undefined);
  const field = masked.length === 1 ? masked[0]! : undefined;
  const table = field && indexTuning.nameCounts ? index.nameCounts[field] : null;
  let total = 0;
  if (!table || (by && isName(by.field) && by.field !== field)) {
    // The selected names of a field are a range of its permutation (the codes of ranks lo..hi): the narrowest one is read.
    let range = { p: index.perms.id, from: 0, to: index.perms.id.length };
    for (const f of masked) {
      const mask = s.names[f]!;
      const dictionary = index.nameDictionary(f);
      let lo = Infinity;
      let hi = -Infinity;
      for (let code = 0; code < mask.length; code++)
        if (mask[code] === 1) {
          lo = Math.min(lo, dictionary.rank(code));
          hi = Math.max(hi, dictionary.rank(code));
        }
      const p = index.perms[f];
      const from = lo <= hi ? p.lowerBound(lo, -Infinity) : 0;
      const to = lo <= hi ? p.lowerBound(hi, Infinity) : 0;
      if (to - from < range.to - range.from) range = { p, from, to };
    }
    const { slots } = range.p;
    for (let i = range.from; i < range.to; i++) {
      const slot = slots[i]!;
      if (!matches(index, s, slot)) continue;
      total++;
      if (into) add(index.value(by.field, slot), 1);
    }
    return total;
  }
  const mask = s.names[field!]!;
  const dictionary = index.nameDictionary(field!);
  const low = Math.max(0, s.low);
  const high = Math.min(AGE_CELLS - 1, s.high);
  if (low <= high) {
    const rows = selectedRows(index, s);
    const codes = Math.min(mask.length, table.codes);
    for (let code = 0; code < codes; code++) {
      if (mask[code] !== 1) continue;
      for (const r of rows) {
        if (by?.field === 'age') {
          for (let age = low; age <= high; age++) {
            const n = table.window(code, r, age, age);
            if (n !== 0) add(age, n);
            total += n;
          }
          continue;
        }
        const n = table.window(code, r, low, high);
        if (n === 0) continue;
        total += n;
        if (by?.field === 'status') add(index.status.rank(index.rowStatus[r]!), n);
        else if (by?.field === 'country') add(index.country.rank(index.rowCountry[r]!), n);
        else if (by?.field === field) add(dictionary.rank(code), n);
        else if (by) throw new Error(`users index: counts by ${by.field} are not kept`);
      }
    }
  }
  for (const slot of index.oddAges) {
    if (!matches(index, s, slot)) continue;
    total++;
    if (into) add(index.value(by.field, slot), 1);
  }
  return total;
}

function isName(field: SortField): field is NameField {
  return field === 'first_name' || field === 'last_name';
}

/** Whether the selected slots per value of `field` can be counted without reading them: a field of the count table, or a name with its table (group-counts.ts). */
function countable(index: UsersIndex, field: SortField): boolean {
  return GROUPED.has(field) || (isName(field) && indexTuning.nameCounts && index.nameCounts[field] !== null);
}

/**
 * The page (skip the first `offset` selected slots, then `take`) in id order (descending when `desc`)
 * by the count table by id range (UsersIndex.idCounts): whole ranges before the page are skipped by
 * their selected users, and the id permutation is read from the first position of the page's range
 * (a binary search), so a deep page reads at most one range's entries more than it takes. Undefined
 * when there is no such table (or a user with an odd age lies past its ranges): the caller walks.
 */
function walkByIdRanges(index: UsersIndex, t: Test, offset: number, take: number, desc: boolean): number[] | undefined {
  const table = index.idCounts;
  // The table by id range cannot see names: a selection with a name mask is walked.
  if (!table || !indexTuning.idCounts || named(t.s)) return undefined;
  const s = t.s;
  const n = table.codes;
  const span = index.idSpan;
  const { ids } = index;
  const per = new Float64Array(n);
  perGroup(index, s, table, n, (b, m) => (per[b] = m));
  // Ages without a cell are not in the table: each such selected user counted in its range.
  for (const slot of index.oddAges) {
    if (!matches(index, s, slot)) continue;
    const b = Math.floor(ids[slot]! / span);
    if (!(b >= 0 && b < n)) return undefined;
    per[b]!++;
  }
  let passed = 0;
  let b = desc ? n - 1 : 0;
  for (; b >= 0 && b < n; b += desc ? -1 : 1) {
    if (passed + per[b]! > offset) break;
    passed += per[b]!;
  }
  const out: number[] = [];
  if (b < 0 || b >= n) return out;
  const p = index.perms.id;
  const { slots, attrs } = p;
  // The first position whose id is at least `id` (the id permutation's value is the id).
  const atLeast = (id: number) => p.lowerBound(id, -Infinity);
  const step = desc ? -1 : 1;
  const stop = desc ? -1 : p.length;
  for (let i = desc ? atLeast((b + 1) * span) - 1 : atLeast(b * span); i !== stop && out.length < take; i += step) {
    const slot = slots[i]!;
    if (!accept(index, t, attrs[i]!, slot)) continue;
    if (passed >= offset) out.push(slot);
    passed++;
  }
  return out;
}

/**
 * Per group code of a count table by group (group-counts.ts) below `codes`, its selected users whose age
 * has a cell, when not 0 (the caller adds the odd ages): the table summed over the selected attributes
 * rows and the age window.
 */
function perGroup(index: UsersIndex, s: Selection, table: GroupCounts, codes: number, each: (code: number, n: number) => void): void {
  const low = Math.max(0, s.low);
  const high = Math.min(AGE_CELLS - 1, s.high);
  if (low > high) return;
  const sums = table.sums(codes, selectedRows(index, s), low, high);
  for (let code = 0; code < codes; code++) if (sums[code] !== 0) each(code, sums[code]!);
}

/** Adds into `into`, per rank of the name field, its selected slots whose age has a cell (countSelected adds the odd ages). */
function byName(index: UsersIndex, s: Selection, field: NameField, into: Map<number, number>): void {
  const dictionary = index.nameDictionary(field);
  perGroup(index, s, index.nameCounts[field]!, dictionary.size, (code, n) => {
    const rank = dictionary.rank(code);
    into.set(rank, (into.get(rank) ?? 0) + n);
  });
}

/**
 * The page (offset, limit) of the selected slots in p's order (ties by id), `total` of them. `groups`:
 * the selected slots per value of p's field (grouped fields), so that whole groups before the page are
 * skipped without reading them.
 */
function walkOne(
  index: UsersIndex,
  p: Order,
  t: Test,
  groups: Map<number, number> | undefined,
  offset: number,
  limit: number,
  total: number,
  field?: SortField,
): number[] {
  const out: number[] = [];
  const { slots, attrs } = p.p;
  if (t.s.all) {
    if (offset >= p.length) return out;
    const r = p.readFrom(p.atIndex(offset));
    for (let at = r.next(); at >= 0 && out.length < limit; at = r.next()) out.push(slots[at]!);
    return out;
  }
  const take = Math.min(limit, total - offset);
  if (take <= 0) return out;
  // Nearer the end than the start: walked backward, passing only the matches after the page (as SQL's fromTheEnd).
  const backward = offset > total - offset - take && indexTuning.fromTheEnd;
  const skip = backward ? total - offset - take : offset;
  let passed = 0;
  let g = backward ? p.lastGroup() : p.firstGroup();
  if (groups) {
    while (g) {
      const m = groups.get(p.value(slots[g.start]!)) ?? 0;
      if (passed + m > skip) break;
      passed += m;
      g = backward ? p.previousGroup(g) : p.nextGroup(g);
    }
  }
  if (!g) return out;
  // A page within the one group (a page across two is walked as below).
  const v = p.value(slots[g.start]!);
  const within = field && groups && skip - passed + take <= (groups.get(v) ?? 0);
  const page = within ? withinGroup(index, t.s, field, v, g, groups.get(v) ?? 0, skip - passed, take, backward) : undefined;
  if (page) return backward ? page.reverse() : page;
  // A page within the group nearer the group's far end: the group read from there, passing only the
  // selected slots after the page (its count exact: groups), then reversed into the walk's direction.
  const before = skip - passed;
  const after = (groups?.get(v) ?? 0) - before - take;
  if (groups && indexTuning.fromTheEnd && after >= 0 && after < before) {
    let left = after;
    const back = p.readGroup(g, !backward);
    for (let at = back.next(); at >= 0 && out.length < take; at = back.next()) {
      const slot = slots[at]!;
      if (!accept(index, t, attrs[at]!, slot)) continue;
      if (left > 0) left--;
      else out.push(slot);
    }
    return backward ? out : out.reverse();
  }
  const r = p.readGroup(g, backward);
  for (let at = r.next(); at >= 0 && out.length < take; at = r.next()) {
    const slot = slots[at]!;
    if (!accept(index, t, attrs[at]!, slot)) continue;
    if (passed >= skip) out.push(slot);
    passed++;
  }
  return backward ? out.reverse() : out;
}

/**
 * A page within the group g (value v, m of its slots selected) of a first key led by status, age or
 * country, in id order (descending when `desc`): by the id ranges (groupByIdRanges), else from the
 * country's or status's groups (groupDriver); undefined when neither is the cheaper way.
 */
function withinGroup(
  index: UsersIndex,
  s: Selection,
  field: SortField,
  v: number,
  g: Group,
  m: number,
  skip: number,
  take: number,
  desc: boolean,
): number[] | undefined {
  const ranged = groupByIdRanges(index, s, field, v, g, m, skip, take, desc);
  if (ranged) return ranged;
  const d = groupDriver(index, s, field, v, g);
  return d && walkById(index, d.driver, d.test, skip, take, !desc);
}

/**
 * How a page within one group of the first sort key is found (query.ts groupPage): 'cost' picks the
 * cheaper of collecting the group's selected slots and ordering them by the second key, or walking
 * the second key's permutation for them; the differential tests force each ('collect', 'walk').
 * `fromTheEnd`: a page nearer the end of a single-key walk is found walking backward, and a page within
 * one group nearer the group's end is read from there (off in the test half of the time, for the same reason). `idByGroups`: a page in id order under a country or status
 * filter is read from those groups (walkById). `spanStart`: within a group of a name, the walk of the
 * second key's order starts where the selection's values of that key start (spanOf). Each is off in
 * some steps of the differential test, so that both ways are compared with SQL. `groupPage` other than
 * 'cost' also takes the id ranges for a page within a group whatever their cost (groupByIdRanges).
 */
export const indexTuning: {
  groupPage: 'cost' | 'collect' | 'walk';
  fromTheEnd: boolean;
  idByGroups: boolean;
  spanStart: boolean;
  nameCounts: boolean;
  idCounts: boolean;
} = {
  groupPage: 'cost',
  fromTheEnd: true,
  idByGroups: true,
  spanStart: true,
  nameCounts: true,
  idCounts: true,
};

/** At most this many groups are merged by id for a page in id order (walkById). */
const MERGED = 4;

/** Groups of one permutation (each holds its slots by id ascending) that hold every selected slot: `entries` in all. */
interface Driver {
  p: Permutation;
  groups: Group[];
  entries: number;
}

/**
 * For a page in id order under a filter on country or status: the groups of that field's permutation
 * whose values the filter selects (each group is in id order already: ties by id), of the two fields
 * the one with fewer entries, when reading them (merged by id when several) passes fewer entries than
 * the id permutation would (Brazil: 12% of the users). A group is found by its sort value, a rank:
 * codes sharing a rank share a group, and each slot in it is still tested (accept).
 */
function idDriver(index: UsersIndex, s: Selection, than = index.size): Driver | undefined {
  let best: Driver | undefined;
  for (const field of ['country', 'status'] as const) {
    const mask = field === 'country' ? s.country : s.status;
    if (mask === null) continue;
    const dictionary = field === 'country' ? index.country : index.status;
    const ranks = new Set<number>();
    for (let code = 0; code < mask.length; code++) if (mask[code] === 1) ranks.add(dictionary.rank(code));
    if (ranks.size > MERGED) continue;
    const p = index.perms[field];
    const groups: Group[] = [];
    let entries = 0;
    for (const rank of ranks) {
      const lo = p.lowerBound(rank, -Infinity);
      if (lo === p.length || p.value(p.slots[lo]!) !== rank) continue;
      const end = p.groupEnd(lo);
      groups.push({ start: lo, end });
      entries += end - lo;
    }
    if (!best || entries < best.entries) best = { p, groups, entries };
  }
  // A merge of several groups costs about twice a plain walk's entry.
  if (!best || best.entries * (best.groups.length > 1 ? 2 : 1) >= than) return undefined;
  return best;
}

/**
 * A page within the group of value v of a first key led by status, age or country (its slots in id
 * order, ascending; `desc`: counted from its end): the page in id order of the selection narrowed to
 * the group, by the count table by id range (walkByIdRanges). Undefined without that table.
 */
function groupByIdRanges(
  index: UsersIndex,
  s: Selection,
  field: SortField,
  v: number,
  g: Group,
  m: number,
  skip: number,
  take: number,
  desc: boolean,
): number[] | undefined {
  if (!indexTuning.idCounts || !index.idCounts || s.only !== undefined || !GROUPED.has(field)) return undefined;
  // In entries read: the group walked passes (skip + take) of its m selected ones at its density; the id
  // permutation, up to one range and then `take` at the selection's density over all users (an age's
  // group of 10,000 is cheaper read; active users' 700,000 are not).
  const size = g.end - g.start;
  if (indexTuning.groupPage === 'cost' && index.idSpan + (take * index.size) / Math.max(1, m) >= ((skip + take) * size) / Math.max(1, m)) return undefined;
  return walkByIdRanges(index, testOf(index, narrowed(index, s, field, v)), skip, take, desc);
}

/**
 * Within the group g (value v) of a first key led by status, age or country, the slots are in id
 * order too (ties by id, in either direction): the page in it is a page in id order of the selection
 * narrowed to the group, read from the country's or status's groups when they are fewer entries than
 * g (the alias by status: Brazil's 120,109 entries instead of the 500,000 active users). walkOne
 * takes it for a page within g only: a page across two groups is walked along p.
 */
function groupDriver(index: UsersIndex, s: Selection, field: SortField, v: number, g: Group): { driver: Driver; test: Test } | undefined {
  if (!indexTuning.idByGroups || s.only !== undefined || !GROUPED.has(field)) return undefined;
  const ns = narrowed(index, s, field, v);
  const driver = idDriver(index, ns, g.end - g.start);
  return driver && { driver, test: testOf(index, ns) };
}

/**
 * The selected slots of the driver's groups in id order (ascending when `up`, else descending), past
 * the first `skip` of them, `take` of them: each group read from its end that way, the groups merged
 * by their heads' ids.
 */
function walkById(index: UsersIndex, d: Driver, t: Test, skip: number, take: number, up: boolean): number[] {
  const out: number[] = [];
  const { slots, attrs } = d.p;
  const { ids } = index;
  const k = d.groups.length;
  const at = d.groups.map((g) => (up ? g.start : g.end - 1));
  const stop = d.groups.map((g) => (up ? g.end : g.start - 1));
  const step = up ? 1 : -1;
  let passed = 0;
  if (k === 1) {
    // One group: read along it, no heads to compare.
    const end = stop[0]!;
    for (let i = at[0]!; i !== end && out.length < take; i += step) {
      const slot = slots[i]!;
      if (!accept(index, t, attrs[i]!, slot)) continue;
      if (passed >= skip) out.push(slot);
      passed++;
    }
    return out;
  }
  while (out.length < take) {
    // The head with the next id along the walk.
    let h = -1;
    let best = 0;
    for (let i = 0; i < k; i++) {
      if (at[i] === stop[i]) continue;
      const id = ids[slots[at[i]!]!]!;
      if (h < 0 || (up ? id < best : id > best)) {
        h = i;
        best = id;
      }
    }
    if (h < 0) break;
    const i = at[h]!;
    at[h] = i + step;
    const slot = slots[i]!;
    if (!accept(index, t, attrs[i]!, slot)) continue;
    if (passed >= skip) out.push(slot);
    passed++;
  }
  return out;
}

/** Scratch of collectPage: a group's selected slots and their values of the second key (grown, never shrunk; a walk runs to its end before another starts). */
let scratchSlots = new Int32Array(1024);
let scratchValues = new Float64Array(1024);

/**
 * The page [skip, skip + take) of p's group g's selected slots (`after`: and past a cursor) in the
 * order of the second key (ties by id: a group's positions hold its slots by id ascending, in either
 * direction of p). By id: the group read from that end. Otherwise the selected slots and their values
 * (read from the columns, not through the permutation's value()) are gathered, then counted by value
 * when the values are small integers (ranks, ages): only the page's slots are placed, at their
 * positions in the stable order; else sorted (an age written by hand as a real or a text).
 */
function collectPage(
  index: UsersIndex,
  p: Order,
  q: Order,
  second: IndexSort,
  t: Test,
  g: Group,
  skip: number,
  take: number,
  after?: (slot: number) => boolean,
): number[] {
  const { slots, attrs } = p.p;
  const all = t.s.all;
  if (second.field === 'id') {
    const out: number[] = [];
    let passed = 0;
    const step = second.desc ? -1 : 1;
    const stop = second.desc ? g.start - 1 : g.end;
    for (let i = second.desc ? g.end - 1 : g.start; i !== stop && out.length < take; i += step) {
      const slot = slots[i]!;
      if (!(all || accept(index, t, attrs[i]!, slot)) || (after !== undefined && !after(slot))) continue;
      if (passed >= skip) out.push(slot);
      passed++;
    }
    return out;
  }
  const size = g.end - g.start;
  if (scratchSlots.length < size) {
    scratchSlots = new Int32Array(size);
    scratchValues = new Float64Array(size);
  }
  const members = scratchSlots;
  const values = scratchValues;
  const { column, ranks } = index.sortColumn(second.field);
  // Only a Float64Array column can hold an age that is not an integer (or not a number).
  let integers = ranks !== null || !(column instanceof Float64Array);
  let m = 0;
  let min = Infinity;
  let max = -Infinity;
  for (let i = g.start; i < g.end; i++) {
    const slot = slots[i]!;
    if (!(all || accept(index, t, attrs[i]!, slot)) || (after !== undefined && !after(slot))) continue;
    const v = ranks === null ? column[slot]! : ranks[column[slot]!]!;
    members[m] = slot;
    values[m++] = v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const end = Math.min(m, skip + take);
  if (skip >= end) return [];
  if (!integers) {
    integers = true;
    for (let i = 0; i < m && integers; i++) integers = Number.isInteger(values[i]!);
  }
  const range = max - min + 1;
  if (!integers || range > 4 * m + 1024) {
    const sorted = Array.from(members.subarray(0, m)).sort((a, b) => q.compare(a, b));
    return sorted.slice(skip, end);
  }
  // Counting sort, stable: starts[k] is where the first slot of key k goes; only the page's are placed.
  const starts = new Int32Array(range + 1);
  const desc = second.desc;
  for (let i = 0; i < m; i++) starts[(desc ? max - values[i]! : values[i]! - min) + 1]!++;
  for (let r = 1; r <= range; r++) starts[r] = starts[r]! + starts[r - 1]!;
  const page = new Array<number>(end - skip);
  for (let i = 0; i < m; i++) {
    const at = starts[desc ? max - values[i]! : values[i]! - min]!++;
    if (at >= skip && at < end) page[at - skip] = members[i]!;
  }
  return page;
}

/**
 * The selected slots of p's group g (value v, m of them selected) in the order of the second key,
 * from the skip-th, `take` of them; `after`, for a cursor's own group: only the slots past the
 * cursor's second key and id (monotone along q). Either the group is read and its selected slots
 * ordered by q, or q is walked for them: with the group's condition in the attributes test when the
 * first key is one the count table is by (and q's groups skipped by their counts when it is too), else
 * checking each selected slot's first key.
 */
function groupPage(
  index: UsersIndex,
  p: Order,
  q: Order,
  first: IndexSort,
  second: IndexSort,
  t: Test,
  v: number,
  g: Group,
  m: number,
  skip: number,
  take: number,
  after?: (slot: number) => boolean,
): number[] {
  const size = g.end - g.start;
  const grouped = GROUPED.has(first.field);
  // The part of q the selection's values of q's field span (a name first: the walk below starts there).
  const span = !grouped && !after && indexTuning.spanStart ? spanOf(index, t.s, q, second.field) : undefined;
  let collect: boolean;
  if (indexTuning.groupPage !== 'cost') collect = indexTuning.groupPage === 'collect';
  else {
    // In entries read in order: walking q reads about (skip + take) * (the entries it passes / m) of them (less when its groups are skipped), a selected one costing a column read more for a name.
    const passes = span ? span.entries : q.length;
    const walk = (((skip + take) * passes) / Math.max(1, m) / (grouped && GROUPED.has(second.field) ? 8 : 1)) * (grouped ? 1 : 2);
    const gather = size + 10 * m;
    collect = gather <= walk;
  }
  if (collect) return collectPage(index, p, q, second, t, g, skip, take, after);
  const out: number[] = [];
  const from = after ? q.seek(after) : undefined;
  if (after && !from) return out;
  const read = () => (from ? q.readFrom(from) : q.read());
  const { slots, attrs } = q.p;
  if (grouped) {
    const s = narrowed(index, t.s, first.field, v);
    const nt = testOf(index, s);
    if (!after) {
      const groups = countable(index, second.field) ? new Map<number, number>() : undefined;
      if (groups) countSelected(index, s, { field: second.field, into: groups });
      return walkOne(index, q, nt, groups, skip, take, m);
    }
    const r = read();
    for (let i = r.next(); i >= 0 && out.length < take; i = r.next()) if (accept(index, nt, attrs[i]!, slots[i]!)) out.push(slots[i]!);
    return out;
  }
  if (span && !span.from) return out;
  let seen = 0;
  const r = span ? q.readFrom(span.from!) : read();
  for (let i = r.next(); i >= 0 && out.length < take; i = r.next()) {
    const slot = slots[i]!;
    if ((!t.s.all && !accept(index, t, attrs[i]!, slot)) || p.value(slot) !== v) continue;
    if (seen >= skip) out.push(slot);
    seen++;
  }
  return out;
}

/**
 * Where in q's order the selection's values of q's field (age, status or country) lie: the first place
 * with one of them (undefined: none) and how many entries lie between the least and the greatest. A
 * selected slot's value is within [lo, hi]: the age window, or the selected codes' ranks. Undefined
 * when the selection does not bound that field (a name, no such filter, an age with no cell held).
 */
function spanOf(index: UsersIndex, s: Selection, q: Order, field: SortField): { from: Place | undefined; entries: number } | undefined {
  let lo = -Infinity;
  let hi = Infinity;
  if (field === 'age') {
    // An age outside the cells (written by hand) may be selected by the filter's own bounds: no span then.
    if (index.oddAges.size > 0) return undefined;
    lo = s.low;
    hi = s.high;
  } else if (field === 'status' || field === 'country') {
    const mask = field === 'status' ? s.status : s.country;
    if (mask === null) return undefined;
    const dictionary = field === 'status' ? index.status : index.country;
    for (let code = 0; code < mask.length; code++)
      if (mask[code] === 1) {
        const rank = dictionary.rank(code);
        if (lo === -Infinity || rank < lo) lo = rank;
        if (hi === Infinity || rank > hi) hi = rank;
      }
    if (lo === -Infinity) return { from: undefined, entries: 0 };
  } else return undefined;
  if (lo === -Infinity && hi === Infinity) return undefined;
  // Counted on the ascending permutation: the positions of values up to hi, less those of values below lo.
  const entries = q.p.lowerBound(hi, Infinity) - q.p.lowerBound(lo, -Infinity);
  if (entries <= 0) return { from: undefined, entries: 0 };
  const from = q.seek(q.desc ? (slot) => q.value(slot) <= hi : (slot) => q.value(slot) >= lo);
  return { from, entries };
}

/** The selected slots per group of p, m of them in the group g of value v. */
function groupCount(index: UsersIndex, p: Order, t: Test, groups: Map<number, number> | undefined, v: number, g: Group): number {
  if (groups) return groups.get(v) ?? 0;
  return t.s.all ? g.end - g.start : countRange(index, p, t, g.start, g.end);
}

function walkTwo(
  index: UsersIndex,
  p: Order,
  q: Order,
  first: IndexSort,
  second: IndexSort,
  t: Test,
  groups: Map<number, number> | undefined,
  offset: number,
  limit: number,
): number[] {
  const out: number[] = [];
  let passed = 0;
  for (let g = p.firstGroup(); g && out.length < limit; g = p.nextGroup(g)) {
    const v = p.value(p.p.slots[g.start]!);
    const m = groupCount(index, p, t, groups, v, g);
    if (passed + m <= offset || m === 0) {
      passed += m;
      continue;
    }
    const skip = Math.max(0, offset - passed);
    const take = Math.min(m - skip, limit - out.length);
    for (const slot of groupPage(index, p, q, first, second, t, v, g, m, skip, take)) out.push(slot);
    passed += m;
  }
  return out;
}

type CursorKey = { field: SortField; desc: boolean; value: number };

/** Whether the slot comes after the cursor's values of `keys` in their order. */
function pastKeys(index: UsersIndex, keys: readonly CursorKey[], slot: number): boolean {
  for (const k of keys) {
    const v = index.value(k.field, slot);
    if (v !== k.value) return k.desc ? v < k.value : v > k.value;
  }
  return false;
}

/**
 * A cursor page (after=): the first `limit` matching slots past the cursor's key values in the
 * sort's order (with id, the keys a cursor holds: sql.ts orderKeys). Single key: the order is the
 * keys' order, so the first slot past it is found by a binary search (order.ts seek). Two keys: the
 * first key's groups before the cursor's are skipped by a binary search, and within the cursor's own
 * group only the slots past its other keys are taken (a binary search in q's order when q is walked).
 */
function walkCursor(
  index: UsersIndex,
  p: Order,
  first: IndexSort,
  second: { q: Order; sort: IndexSort } | undefined,
  t: Test,
  groups: Map<number, number> | undefined,
  cursor: CursorKey[],
  limit: number,
): number[] {
  const out: number[] = [];
  if (!second) {
    const { slots, attrs } = p.p;
    const from = cursor.length ? p.seek((slot) => pastKeys(index, cursor, slot)) : undefined;
    if (cursor.length && !from) return out;
    const r = from ? p.readFrom(from) : p.read();
    for (let at = r.next(); at >= 0 && out.length < limit; at = r.next()) {
      const slot = slots[at]!;
      if (t.s.all || accept(index, t, attrs[at]!, slot)) out.push(slot);
    }
    return out;
  }
  const head = cursor[0];
  const rest = cursor.slice(1);
  const notBefore = (slot: number) => {
    const v = index.value(head!.field, slot);
    return head!.desc ? v <= head!.value : v >= head!.value;
  };
  for (let g = head ? p.seek(notBefore) : p.firstGroup(); g && out.length < limit; g = p.nextGroup(g)) {
    const v = p.value(p.p.slots[g.start]!);
    const m = groupCount(index, p, t, groups, v, g);
    if (m > 0) {
      const after = head && v === head.value ? (slot: number) => pastKeys(index, rest, slot) : undefined;
      for (const slot of groupPage(index, p, second.q, first, second.sort, t, v, g, m, 0, limit - out.length, after)) out.push(slot);
    }
  }
  return out;
}

/** The page and exact total of a plan the index answers (sort: answers.ts indexSortOf); a cursor page returns its next cursor as SQL does. */
export function answerFromIndex(index: UsersIndex, answers: IndexAnswers, sort: readonly IndexSort[], plan: ListPlan): ListResult<UserRow> {
  const selection = selectionOf(index, plan);
  const first = sort[0] ?? { field: 'id' as const, desc: false };
  const second = sort[1];
  const { offset, limit, style, after } = plan.request.page;
  const t = testOf(index, selection);
  const groups = countable(index, first.field) && !selection.all ? new Map<number, number>() : undefined;
  const total = selection.all ? index.size : countSelected(index, selection, groups && { field: first.field, into: groups });
  if (style === 'cursor') {
    const keys = orderKeys(plan).map((k) => ({ field: answers.sorts.get(k.column)!, desc: k.direction === 'desc' }));
    // Keys after id change nothing (ids are unique): the cursor is compared up to id.
    const compared = keys.slice(0, keys.findIndex((k) => k.field === 'id') + 1);
    const cursor = after ? compared.map((k, i) => ({ ...k, value: index.valueOfStored(k.field, after[i]) })) : [];
    const p = index.order(first.field, first.desc);
    const slots = walkCursor(index, p, first, second && { q: index.order(second.field, second.desc), sort: second }, t, groups, cursor, limit + 1);
    const last = slots.length > limit ? slots[limit - 1] : undefined;
    const rows = slots.slice(0, limit).map((slot) => index.row(slot));
    if (last === undefined) return { rows, total };
    const next = encodeCursor(
      cursorScope(plan.request.collection, orderKeys(plan)),
      keys.map((k) => index.storedValue(k.field, last)),
    );
    return { rows, total, next };
  }
  if (offset >= total) return { rows: [], total };
  const byRanges =
    !second && first.field === 'id' && !selection.all ? walkByIdRanges(index, t, offset, Math.min(limit, total - offset), first.desc) : undefined;
  if (byRanges) return { rows: byRanges.map((slot) => index.row(slot)), total };
  const driver = !second && first.field === 'id' && !selection.all && indexTuning.idByGroups ? idDriver(index, selection) : undefined;
  if (driver) {
    // Nearer the end than the start: walked from the end, passing only the matches after the page (as walkOne).
    const take = Math.min(limit, total - offset);
    const fromTheEnd = offset > total - offset - take && indexTuning.fromTheEnd;
    const slots = fromTheEnd
      ? walkById(index, driver, t, total - offset - take, take, first.desc).reverse()
      : walkById(index, driver, t, offset, take, !first.desc);
    return { rows: slots.map((slot) => index.row(slot)), total };
  }
  const p = index.order(first.field, first.desc);
  const slots = second
    ? walkTwo(index, p, index.order(second.field, second.desc), first, second, t, groups, offset, limit)
    : walkOne(index, p, t, groups, offset, limit, total, first.field);
  return { rows: slots.map((slot) => index.row(slot)), total };
}
