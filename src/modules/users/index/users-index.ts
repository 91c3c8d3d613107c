import type { Selectable } from 'kysely';
import type { UserTable } from '../users.table.js';
import { Dictionary } from './dictionary.js';
import { Permutation, type SortValue } from './permutation.js';
import { Order } from './order.js';
import { EmailStore, SlotMap, grownCapacity } from './compact.js';
import { AGE_CELLS, GroupCounts, widenedGrid } from './group-counts.js';

// The users table held in one worker's memory, exactly as the database holds it for the list family
// the index answers (answers.ts): columns as typed arrays (one slot per user), names and countries
// as dictionary codes ranked by their stored collation keys, one permutation of the slots per sort
// field, ascending (ties by id ascending, as the SQL breaks them; each descending order is read from
// it, order.ts), and a count table over
// (country, status, age) from which every total of the family is a sum. It is written only by
// apply() (index-feed.ts: the load, then the change feed) and read only by query.ts.

/**
 * A user as the index reads it from the table: the representation plus the stored keys it sorts and
 * filters by (users.table.ts), and its row version when read with it (the index gives a single user
 * with its ETag only then: index-feed.ts user()).
 */
export type StoredUser = Omit<Selectable<UserTable>, 'version'> & { version?: number };

export interface UserRow {
  id: number;
  first_name: string;
  last_name: string;
  email: string;
  age: number;
  status: string;
  country: string;
}

export const SORT_FIELDS = ['id', 'first_name', 'last_name', 'age', 'status', 'country'] as const;
export type SortField = (typeof SORT_FIELDS)[number];
/** The sort fields with a count table of their own (group-counts.ts). */
export const NAME_FIELDS = ['first_name', 'last_name'] as const;
export type NameField = (typeof NAME_FIELDS)[number];

/** Ages the count tables have a cell for (group-counts.ts, where it is declared: that module imports nothing of this one). */
export { AGE_CELLS };

/**
 * Up to this many users in one apply(), a user changed in place is moved within each permutation on its
 * own (Permutation.relocate: the entries between its old and new places shift); past it, every
 * permutation is compacted and merged in one pass (a few ms each on 1M users, about the cost of
 * moving this many users one by one).
 */
const MOVE_ONE_BY_ONE = 64;

type Coded = { first: number; last: number; status: number; country: number };

/** Where each column of a StoredUser is in a row read as an array: found by name in the statement's own columns (index-feed.ts). */
export type ColumnPositions = { readonly [K in keyof StoredUser]-?: number };

/**
 * A slot's filter attributes in 16 bits: (row << 8) | age. `row` numbers the (country, status) pairs
 * held, in the order first seen (UsersIndex.rowCountry/rowStatus), and `age` is the age when it has a
 * count-table cell. ODD (255) in either part: the attributes do not tell, the slot's columns are read
 * (past 255 pairs, an age written by hand outside 0-150 or not an integer).
 */
export const ODD = 255;

/**
 * The id ranges of UsersIndex.idCounts: about `ranges` over the ids held at the load, each of at least
 * `spanMin` ids (the tests take a small one, so that their few hundred users span many ranges).
 */
export const idRanges = { ranges: 64, spanMin: 1024 };

/** A column of numbers, one per slot (UsersIndex.ids). */
export type Column = Uint8Array | Uint16Array | Int32Array | Float64Array;

/** `column`, or a copy of it in the narrowest wider type that holds `value` exactly (-0 and NaN only in a Float64Array). */
export function fitting(column: Column, value: number): Column {
  if (column instanceof Float64Array) return column;
  const integer = Object.is(value | 0, value);
  if (column instanceof Uint8Array && integer && value >= 0 && value < 1 << 8) return column;
  if (column instanceof Uint16Array && integer && value >= 0 && value < 1 << 16) return column;
  if (column instanceof Int32Array && integer) return column;
  const Wider = !integer ? Float64Array : value >= 0 && value < 1 << 16 ? Uint16Array : Int32Array;
  return Wider.from(column);
}

export class UsersIndex {
  capacity = 0;
  /** Live users. */
  size = 0;
  /**
   * Ids and ages as the table returns them: a float64 holds every number a row can (SQLite's integer
   * column takes 2^31 and more, and a real such as 2.5, from a hand-written row); an Int32Array would
   * wrap or truncate them, and the index would answer with an age or id the table does not hold.
   * Each column (these and the codes below) is the narrowest of Uint8Array, Uint16Array, Int32Array
   * and Float64Array that holds every value written to it so far (fitting(): widened for good at the
   * first value the current one cannot hold exactly): ages 1 byte a slot, codes 1 or 2, ids 4, while
   * every value is an integer in range, as every row the API writes is.
   */
  ids: Column = new Uint8Array(0);
  ages: Column = new Uint8Array(0);
  statuses: Column = new Uint8Array(0);
  firstNames: Column = new Uint8Array(0);
  lastNames: Column = new Uint8Array(0);
  countries: Column = new Uint8Array(0);
  /** Row versions as the table returns them (NaN: not read with the row: a single user is then read by SQL). */
  versions: Column = new Uint8Array(0);
  /** Per slot, its filter attributes (ODD above); each permutation keeps a copy in its own order. */
  slotAttrs = new Uint16Array(0);
  /** Per row of the attributes, its country code and status code. */
  readonly rowCountry: number[] = [];
  readonly rowStatus: number[] = [];
  private readonly rowCodes = new Map<number, number>();
  readonly emails = new EmailStore();
  readonly slotOf = new SlotMap();
  private readonly freeSlots: number[] = [];
  private nextSlot = 0;

  readonly status = new Dictionary();
  readonly firstName = new Dictionary();
  readonly lastName = new Dictionary();
  /** A country as stored: its key (the sort), its fold (lives_in), its text. */
  readonly country = new Dictionary();
  readonly fold = new Dictionary();
  /** Per country code, the code of its fold. */
  countryFold = new Int32Array(16);

  /** Users per (country code, status code, age): cell ((country * statusCap) + status) * AGE_CELLS + age. */
  counts = new Int32Array(0);
  /**
   * Per (country, status), the users younger than each age: row ((country * statusCap) + status) * (AGE_CELLS + 1),
   * entry a = users of ages below a. An age window's total is one difference instead of a sum over its ages.
   */
  below = new Int32Array(0);
  statusCap = 4;
  countryCap = 0;
  /**
   * Per name field, its count table (group-counts.ts, a group a name): users per (name code, attributes row, age), so
   * that a walk sorted by that name skips whole names. Built by finishLoad, kept by count(); null:
   * not built (an index written by apply() alone), or dropped (too many names or rows, an ODD row).
   */
  readonly nameCounts: Record<NameField, GroupCounts | null> = { first_name: null, last_name: null };
  /**
   * The count table by id range (group-counts.ts, a group a range): users per (ids from
   * b * idSpan to (b + 1) * idSpan - 1, attributes row, age), so that a page in id order of a filtered
   * list skips whole ranges by their selected users and reads the id permutation from the page's range
   * on (the id permutation holds ids in order: a range's first position is a binary search). Built by
   * finishLoad, kept by count(); null as nameCounts (and for an id below 0, by hand).
   */
  idCounts: GroupCounts | null = null;
  idSpan = 1;
  /** Slots of users whose age has no cell (outside 0..150). */
  readonly oddAges = new Set<number>();
  /**
   * Slots of users whose age is not a number: SQLite's integer column keeps a text it cannot convert
   * (written by hand), and orders and compares it after every number. The index does not hold that
   * order: while any such user exists, every list is SQL's (index-feed.ts).
   */
  readonly notNumbers = new Set<number>();

  /** Per sort field, its slots in ascending order. */
  readonly perms: Record<SortField, Permutation>;
  /** Per sort field, its ascending and descending orders, both read from its permutation. */
  private readonly orders: Record<SortField, [Order, Order]>;

  constructor() {
    const value = (field: SortField): SortValue => {
      switch (field) {
        case 'id':
          return (s) => this.ids[s]!;
        case 'age':
          // A text age (NaN, SQLite by hand) sorts after every number, as SQLite sorts it: NaN compares unequal to itself, which would leave the permutation unsorted.
          return (s) => {
            const age = this.ages[s]!;
            return age === age ? age : Infinity;
          };
        case 'status':
          return (s) => this.status.rank(this.statuses[s]!);
        case 'first_name':
          return (s) => this.firstName.rank(this.firstNames[s]!);
        case 'last_name':
          return (s) => this.lastName.rank(this.lastNames[s]!);
        case 'country':
          return (s) => this.country.rank(this.countries[s]!);
      }
    };
    const id = (s: number) => this.ids[s]!;
    const attr = (s: number) => this.slotAttrs[s]!;
    const slotAttrs = () => this.slotAttrs;
    this.perms = Object.fromEntries(SORT_FIELDS.map((f) => [f, new Permutation(value(f), id, attr, f === 'id' ? slotAttrs : undefined)])) as Record<
      SortField,
      Permutation
    >;
    // Ids are unique (the table's key): id descending is id ascending backward.
    this.orders = Object.fromEntries(
      SORT_FIELDS.map((f) => [f, [new Order(this.perms[f], false, f === 'id'), new Order(this.perms[f], true, f === 'id')]]),
    ) as Record<SortField, [Order, Order]>;
  }

  order(field: SortField, desc: boolean): Order {
    return this.orders[field][desc ? 1 : 0];
  }

  value(field: SortField, slot: number): number {
    return this.perms[field].value(slot);
  }

  /**
   * The columns value() reads for a field other than id, for a loop over many slots: the value of a slot
   * is ranks[column[slot]] (a dictionary's ranks, read only until the next write), or column[slot]
   * when ranks is null (age: a text age, NaN, is not ordered this way; the caller checks for it).
   */
  sortColumn(field: Exclude<SortField, 'id'>): { column: Column; ranks: Int32Array | null } {
    switch (field) {
      case 'age':
        return { column: this.ages, ranks: null };
      case 'status':
        return { column: this.statuses, ranks: this.status.rankTable };
      case 'first_name':
        return { column: this.firstNames, ranks: this.firstName.rankTable };
      case 'last_name':
        return { column: this.lastNames, ranks: this.lastName.rankTable };
      case 'country':
        return { column: this.countries, ranks: this.country.rankTable };
    }
  }

  /** The slot's value of a sort key as the SQL holds it (a cursor's value: a name's collation key, the status, a number). */
  storedValue(field: SortField, slot: number): string | number {
    switch (field) {
      case 'id':
        return this.ids[slot]!;
      case 'age':
        return this.ages[slot]!;
      case 'status':
        return this.status.sortText[this.statuses[slot]!]!;
      case 'first_name':
        return this.firstName.sortText[this.firstNames[slot]!]!;
      case 'last_name':
        return this.lastName.sortText[this.lastNames[slot]!]!;
      case 'country':
        return this.country.sortText[this.countries[slot]!]!;
    }
  }

  /** A value as storedValue gives it, as a number in the order of value() (between two ranks when no user has it). */
  valueOfStored(field: SortField, stored: unknown): number {
    switch (field) {
      case 'id':
      case 'age':
        return Number(stored);
      case 'status':
        return this.status.rankOfSortText(String(stored));
      case 'first_name':
        return this.firstName.rankOfSortText(String(stored));
      case 'last_name':
        return this.lastName.rankOfSortText(String(stored));
      case 'country':
        return this.country.rankOfSortText(String(stored));
    }
  }

  /** The ids of the users held. */
  *heldIds(): Iterable<number> {
    for (let s = 0; s < this.nextSlot; s++) if (this.slotOf.get(this.ids[s]!) === s) yield this.ids[s]!;
  }

  /** The user with this id and its row version, as the table holds them, or undefined: not held, or held without its version. */
  user(id: number): (UserRow & { version: number }) | undefined {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return undefined;
    const version = this.versions[slot]!;
    if (!Number.isInteger(version)) return undefined;
    // The row with its version added last (the keys in the same order as a spread, without the copy).
    const user = this.row(slot) as UserRow & { version: number };
    user.version = version;
    return user;
  }

  row(slot: number): UserRow {
    return {
      id: this.ids[slot]!,
      first_name: this.firstName.shown[this.firstNames[slot]!]!,
      last_name: this.lastName.shown[this.lastNames[slot]!]!,
      email: this.emails.get(slot),
      age: this.ages[slot]!,
      status: this.status.shown[this.statuses[slot]!]!,
      country: this.country.shown[this.countries[slot]!]!,
    };
  }

  /**
   * Writes the users given (null: deleted) as the table now holds them, keeping every structure
   * sorted: each permutation loses and regains only the slots whose value for its field changed.
   */
  apply(changes: ReadonlyMap<number, StoredUser | null>): void {
    // A few users changed in place (the usual catch-up: one PATCH): each moves within the permutations
    // of the fields it changed, one user at a time, so each is the only slot out of order while it moves.
    // Many at once, creations and deletions: the passes below.
    const rest = new Map<number, StoredUser | null>();
    const few = changes.size <= MOVE_ONE_BY_ONE;
    for (const [id, user] of changes) {
      const slot = this.slotOf.get(id);
      if (few && user !== null && slot !== undefined) this.update(slot, user);
      else rest.set(id, user);
    }
    if (rest.size > 0) this.applyAll(rest);
  }

  /** The fields whose permutation order a held slot's new codes and age change (the id never: it is the slot's key). */
  private changedFields(slot: number, user: StoredUser, coded: Coded): Record<SortField, boolean> {
    return {
      id: false,
      first_name: coded.first !== this.firstNames[slot],
      last_name: coded.last !== this.lastNames[slot],
      age: user.age !== this.ages[slot],
      status: coded.status !== this.statuses[slot],
      country: this.country.rank(coded.country) !== this.country.rank(this.countries[slot]!),
    };
  }

  /**
   * Writes a held user anew: found in each permutation whose field changed while its old values are
   * still written, then moved from there to its new place (Permutation.relocate); the other
   * permutations keep it where it is and take its new filter attributes there.
   */
  private update(slot: number, user: StoredUser): void {
    // Codes first: a new name moves ranks, never the order of existing codes, so the positions found below stay right.
    const coded = this.code(user);
    const changed = this.changedFields(slot, user, coded);
    const from: [SortField, number][] = [];
    for (const f of SORT_FIELDS) if (changed[f]) from.push([f, this.perms[f].positionOf(slot)]);
    const attr = this.slotAttrs[slot]!;
    this.uncount(slot);
    this.write(slot, user, coded);
    for (const [f, at] of from) this.perms[f].relocate(slot, at);
    if (this.slotAttrs[slot] !== attr) for (const f of SORT_FIELDS) if (!changed[f]) this.perms[f].refreshAttrs([slot]);
  }

  /** apply() for any changes: each permutation loses the slots whose value for its field changed, in one pass for many, and takes them in again. */
  private applyAll(changes: ReadonlyMap<number, StoredUser | null>): void {
    const removed = new Map<SortField, number[]>(SORT_FIELDS.map((f) => [f, []]));
    const inserted = new Map<SortField, number[]>(SORT_FIELDS.map((f) => [f, []]));
    const writes: { slot: number | undefined; user: StoredUser | null; coded?: Coded }[] = [];
    /** Existing slots whose filter attributes change, and the fields whose permutations keep them in place. */
    const reattributed: { slot: number; attr: number; kept: SortField[] }[] = [];
    for (const [id, user] of changes) {
      const slot = this.slotOf.get(id);
      if (user === null) {
        if (slot === undefined) continue;
        for (const f of SORT_FIELDS) removed.get(f)!.push(slot);
        writes.push({ slot, user });
        continue;
      }
      // Codes first: a new name moves ranks, never the order of existing codes, so the removals below stay consistent.
      const coded = this.code(user);
      writes.push({ slot, user, coded });
      if (slot === undefined) continue;
      const changed = this.changedFields(slot, user, coded);
      for (const f of SORT_FIELDS) if (changed[f]) removed.get(f)!.push(slot);
      reattributed.push({ slot, attr: this.slotAttrs[slot]!, kept: SORT_FIELDS.filter((f) => !changed[f]) });
    }
    for (const f of SORT_FIELDS) this.perms[f].removeAll(removed.get(f)!, this.capacity);
    // A slot freed here is reused only by a later batch: in this one it is still in `removed`.
    const freed = new Set<number>();
    for (const w of writes) {
      if (w.user === null) {
        this.uncount(w.slot!);
        this.slotOf.delete(this.ids[w.slot!]!);
        this.emails.clear(w.slot!);
        freed.add(w.slot!);
        this.size--;
        continue;
      }
      const slot = w.slot ?? this.allocate(w.user.id);
      if (w.slot !== undefined) this.uncount(slot);
      else for (const f of SORT_FIELDS) inserted.get(f)!.push(slot);
      this.write(slot, w.user, w.coded!);
    }
    for (const f of SORT_FIELDS) {
      const again = removed.get(f)!.filter((s) => !freed.has(s));
      this.perms[f].insertAll([...inserted.get(f)!, ...again], this.capacity);
    }
    // Moved slots took their new attributes as they were inserted; the others are rewritten where they stand.
    const refresh = new Map<SortField, number[]>(SORT_FIELDS.map((f) => [f, []]));
    for (const r of reattributed) {
      if (freed.has(r.slot) || this.slotAttrs[r.slot] === r.attr) continue;
      for (const f of r.kept) refresh.get(f)!.push(r.slot);
    }
    for (const f of SORT_FIELDS) this.perms[f].refreshAttrs(refresh.get(f)!);
    for (const slot of freed) this.freeSlots.push(slot);
  }

  /**
   * Room for `users` (their emails' bytes, and ids from `ids.min` to `ids.max`) before the load, so the
   * arrays are allocated once, in the width their values need, instead of doubling or widening as it goes.
   */
  reserve(users: number, emailBytes = 0, ids?: { min: number; max: number }): void {
    if (ids) {
      // Widened while still empty (a copy of nothing), so grow() allocates the wide array once.
      this.ids = fitting(fitting(this.ids, ids.min), ids.max);
      this.slotOf.reserve(ids.max, users);
    }
    if (users > this.capacity) this.grow(users);
    this.emails.reserve(users, emailBytes);
  }

  /** Adds users to an index being loaded (the permutations are built by finishLoad). */
  add(users: Iterable<StoredUser>): void {
    for (const user of users) {
      if (this.slotOf.has(user.id)) throw new Error(`users index: user ${user.id} loaded twice`);
      const slot = this.allocate(user.id);
      this.write(slot, user, this.code(user));
    }
  }

  /**
   * add() for rows read as arrays (the load's pages: index-feed.ts), each value found at its column's
   * position in `at` (from the statement's own column names). No object is made per row: building
   * one for each of a million rows (the driver's, or ours) was a third of the load.
   */
  addRows(rows: readonly (readonly unknown[])[], at: ColumnPositions): void {
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]!;
      const id = row[at.id] as number;
      if (this.slotOf.has(id)) throw new Error(`users index: user ${id} loaded twice`);
      const slot = this.allocate(id);
      const coded = this.codeValues(
        row[at.first_name_key] as string,
        row[at.first_name] as string,
        row[at.last_name_key] as string,
        row[at.last_name] as string,
        row[at.status] as string,
        row[at.country_key] as string,
        row[at.country_fold] as string,
        row[at.country] as string,
      );
      this.writeValues(slot, id, row[at.age] as number, row[at.email] as string, row[at.version] as number | undefined, coded);
    }
  }

  /** Sorts every permutation once, after add(): counting sort where the values are dense. */
  finishLoad(): void {
    // The id permutation's own array (adopted below), sized as build() sizes one.
    const byId = new Int32Array(Math.max(this.capacity, this.size));
    let n = 0;
    let ordered = true;
    for (let s = 0; s < this.nextSlot; s++)
      if (this.slotOf.get(this.ids[s]!) === s) {
        if (n > 0 && this.ids[byId[n - 1]!]! > this.ids[s]!) ordered = false;
        byId[n++] = s;
      }
    // The load adds users by id, so slots are in id order: a sort (a comparator's copy of a million entries beside the load's peak) only when not.
    if (!ordered) byId.subarray(0, n).sort((a, b) => this.ids[a]! - this.ids[b]!);
    // Slots in id order are the id permutation (ids are unique: no ties): it takes the array, the others are built from it.
    this.perms.id.adopt(byId, n);
    const inIdOrder = byId.subarray(0, n);
    for (const f of SORT_FIELDS) if (f !== 'id') this.perms[f].build(inIdOrder, this.capacity);
    this.buildGroupCounts(inIdOrder);
    this.emails.trim();
  }

  /** The column of a name field's codes. */
  nameCodes(field: NameField): Column {
    return field === 'first_name' ? this.firstNames : this.lastNames;
  }

  /** The dictionary of a name field. */
  nameDictionary(field: NameField): Dictionary {
    return field === 'first_name' ? this.firstName : this.lastName;
  }

  /** Each name field's count table, from the live slots (none when it would be too large, or a slot's row is ODD). */
  private buildGroupCounts(live: Int32Array): void {
    const rows = Math.max(1, this.rowCountry.length);
    let oddRow = false;
    for (let i = 0; i < live.length && !oddRow; i++) oddRow = this.slotAttrs[live[i]!]! >>> 8 === ODD;
    let maxId = 0;
    for (let i = 0; i < live.length; i++) maxId = Math.max(maxId, this.ids[live[i]!]!);
    this.idSpan = Math.max(idRanges.spanMin, Math.ceil((maxId + 1) / idRanges.ranges));
    const ranges = Math.floor(maxId / this.idSpan) + 1;
    this.idCounts = null;
    if (!oddRow && GroupCounts.fits(ranges, rows)) {
      const table = new GroupCounts(ranges, rows);
      let negative = false;
      table.fill((count) => {
        for (let i = 0; i < live.length; i++) {
          const slot = live[i]!;
          const attr = this.slotAttrs[slot]!;
          const range = Math.floor(this.ids[slot]! / this.idSpan);
          if (range < 0) negative = true;
          else if ((attr & 0xff) !== ODD) count(range, attr >>> 8, attr & 0xff);
        }
      });
      if (!negative) this.idCounts = table;
    }
    for (const field of NAME_FIELDS) {
      const codes = Math.max(1, this.nameDictionary(field).size);
      if (oddRow || !GroupCounts.fits(codes, rows)) {
        this.nameCounts[field] = null;
        continue;
      }
      const table = new GroupCounts(codes, rows);
      const column = this.nameCodes(field);
      table.fill((count) => {
        for (let i = 0; i < live.length; i++) {
          const slot = live[i]!;
          const attr = this.slotAttrs[slot]!;
          // Ages without a cell are in oddAges (counted slot by slot), as in the count table.
          if ((attr & 0xff) !== ODD) count(column[slot]!, attr >>> 8, attr & 0xff);
        }
      });
      this.nameCounts[field] = table;
    }
  }

  private code(user: StoredUser): Coded {
    return this.codeValues(
      user.first_name_key,
      user.first_name,
      user.last_name_key,
      user.last_name,
      user.status,
      user.country_key,
      user.country_fold,
      user.country,
    );
  }

  private codeValues(
    firstKey: string,
    first: string,
    lastKey: string,
    last: string,
    status: string,
    countryKey: string,
    countryFold: string,
    countryShown: string,
  ): Coded {
    const country = this.country.code(`${countryKey}\u0000${countryFold}\u0000${countryShown}`, countryKey, countryShown);
    if (country >= this.countryFold.length) {
      const grown = new Int32Array(Math.max(16, this.countryFold.length * 2, country + 1));
      grown.set(this.countryFold);
      this.countryFold = grown;
    }
    this.countryFold[country] = this.fold.code(countryFold, countryFold, countryFold);
    return {
      first: this.firstName.code(`${firstKey}\u0000${first}`, firstKey, first),
      last: this.lastName.code(`${lastKey}\u0000${last}`, lastKey, last),
      status: this.status.code(status, status, status),
      country,
    };
  }

  private write(slot: number, user: StoredUser, coded: Coded) {
    this.writeValues(slot, user.id, user.age, user.email, user.version, coded);
  }

  private writeValues(slot: number, id: number, age: number, email: string, rowVersion: number | undefined, coded: Coded) {
    this.ids = fitting(this.ids, id);
    this.ages = fitting(this.ages, age);
    this.statuses = fitting(this.statuses, coded.status);
    this.firstNames = fitting(this.firstNames, coded.first);
    this.lastNames = fitting(this.lastNames, coded.last);
    this.countries = fitting(this.countries, coded.country);
    const version = rowVersion ?? NaN;
    this.versions = fitting(this.versions, version);
    this.ids[slot] = id;
    this.ages[slot] = age;
    this.statuses[slot] = coded.status;
    this.firstNames[slot] = coded.first;
    this.lastNames[slot] = coded.last;
    this.countries[slot] = coded.country;
    this.versions[slot] = version;
    this.slotAttrs[slot] = (this.rowCode(coded.country, coded.status) << 8) | (Number.isInteger(age) && age >= 0 && age < AGE_CELLS ? age : ODD);
    this.emails.set(slot, email);
    this.count(slot, 1);
  }

  /** The attributes' row of a (country, status) pair: a new pair takes the next row, ODD once 255 are held. */
  private rowCode(country: number, status: number): number {
    if (status >= 1 << 20) return ODD;
    const key = country * (1 << 20) + status;
    let row = this.rowCodes.get(key);
    if (row === undefined) {
      if (this.rowCountry.length >= ODD) return ODD;
      row = this.rowCountry.length;
      this.rowCountry.push(country);
      this.rowStatus.push(status);
      this.rowCodes.set(key, row);
    }
    return row;
  }

  private uncount(slot: number) {
    this.count(slot, -1);
  }

  private count(slot: number, by: 1 | -1) {
    const age = this.ages[slot]!;
    if (age < 0 || age >= AGE_CELLS || !Number.isInteger(age)) {
      const sets = Number.isNaN(age) ? [this.oddAges, this.notNumbers] : [this.oddAges];
      for (const set of sets) {
        if (by > 0) set.add(slot);
        else set.delete(slot);
      }
      return;
    }
    const status = this.statuses[slot]!;
    const country = this.countries[slot]!;
    if (status >= this.statusCap || country >= this.countryCap) this.growCounts(Math.max(this.statusCap, status + 1), Math.max(this.countryCap, country + 1));
    const attrRow = this.slotAttrs[slot]! >>> 8;
    for (const field of NAME_FIELDS) {
      const table = this.nameCounts[field];
      if (table && (attrRow === ODD || !table.add(this.nameCodes(field)[slot]!, attrRow, age, by))) this.nameCounts[field] = null;
    }
    if (this.idCounts) {
      const range = Math.floor(this.ids[slot]! / this.idSpan);
      if (attrRow === ODD || !(range >= 0) || !this.idCounts.add(range, attrRow, age, by)) this.idCounts = null;
    }
    const row = country * this.statusCap + status;
    const cell = row * AGE_CELLS + age;
    this.counts[cell] = this.counts[cell]! + by;
    const end = (row + 1) * (AGE_CELLS + 1);
    for (let at = row * (AGE_CELLS + 1) + age + 1; at < end; at++) this.below[at] = this.below[at]! + by;
  }

  private growCounts(statusCap: number, countryCap: number) {
    const newStatusCap = statusCap > this.statusCap ? statusCap * 2 : this.statusCap;
    const newCountryCap = countryCap > this.countryCap ? Math.max(64, countryCap * 2) : this.countryCap;
    // A (country, status) row of `below` is its row of `counts` summed: each moves to its new place whole (a new row is all zero).
    this.counts = widenedGrid(this.counts, this.countryCap, this.statusCap, newCountryCap, newStatusCap, AGE_CELLS);
    this.below = widenedGrid(this.below, this.countryCap, this.statusCap, newCountryCap, newStatusCap, AGE_CELLS + 1);
    this.statusCap = newStatusCap;
    this.countryCap = newCountryCap;
  }

  private allocate(id: number): number {
    let slot = this.freeSlots.pop();
    if (slot === undefined) {
      if (this.nextSlot >= this.capacity) this.grow(grownCapacity(this.capacity));
      slot = this.nextSlot++;
    }
    this.slotOf.set(id, slot);
    this.size++;
    return slot;
  }

  private grow(capacity: number) {
    const grownColumn = (a: Column): Column => {
      const b = new (a.constructor as new (n: number) => Column)(capacity);
      b.set(a);
      return b;
    };
    this.ids = grownColumn(this.ids);
    this.ages = grownColumn(this.ages);
    this.statuses = grownColumn(this.statuses);
    this.firstNames = grownColumn(this.firstNames);
    this.lastNames = grownColumn(this.lastNames);
    this.countries = grownColumn(this.countries);
    this.versions = grownColumn(this.versions);
    const attrs = new Uint16Array(capacity);
    attrs.set(this.slotAttrs);
    this.slotAttrs = attrs;
    this.capacity = capacity;
  }

  /** Approximate bytes held: the typed arrays, the permutations, the count table, the dictionaries and the emails. */
  bytes(): number {
    let total =
      [this.ids, this.ages, this.statuses, this.firstNames, this.lastNames, this.countries, this.versions].reduce((sum, c) => sum + c.byteLength, 0) +
      this.capacity * 2 +
      this.counts.byteLength +
      this.below.byteLength +
      this.countryFold.byteLength;
    for (const f of SORT_FIELDS) total += this.perms[f].bytes();
    for (const d of [this.status, this.firstName, this.lastName, this.country, this.fold]) total += d.bytes();
    for (const f of NAME_FIELDS) total += this.nameCounts[f]?.bytes() ?? 0;
    total += this.idCounts?.bytes() ?? 0;
    return total + this.emails.bytes() + this.slotOf.bytes();
  }
}
