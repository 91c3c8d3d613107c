// The users' slots in the ascending order of one sort field, ties by id ascending: the order the SQL
// gives `order by <field>, id`. Only the ascending order is held; each descending one is read from it
// by order.ts (the groups of equal values backward, each group forward: ties stay by id ascending).
// Kept sorted under writes: a few slots move by a binary search and one copyWithin each; many at once
// by one compaction pass and one merge.
//
// Beside each slot, at the same position, its filter attributes (users-index.ts attrOf: the count
// table's (country, status) row and the age, in 16 bits): a walk tests its filters reading one small
// array in order, instead of three columns at random places (about 5x fewer nanoseconds a slot).

import { grownCapacity } from './compact.js';

/** A slot's value for the field, as a number whose order is the SQL's (a rank for text). */
export type SortValue = (slot: number) => number;

/** Above this many slots in one batch, a permutation is compacted or merged in one pass instead of slot by slot. */
const ONE_BY_ONE = 16;

export class Permutation {
  slots = new Int32Array(0);
  length = 0;
  private ownAttrs = new Uint16Array(0);
  /**
   * Set while the slots are 0, 1, 2, ... in this order (the id order after a load, slots given by id:
   * until a user is deleted, or one is created with an id below another's): attrs is then the slots'
   * own attributes array, not a copy (2 MB at 1M users, issue 37).
   */
  private shared = false;
  /** Entries shifted by one so far by writes (relocate, and removeAll / insertAll slot by slot): what keeping it sorted cost. */
  shifted = 0;

  constructor(
    readonly value: SortValue,
    readonly id: SortValue,
    private readonly attr: SortValue,
    /** The slots' own attributes array (UsersIndex.slotAttrs), for the id order: it may share it. */
    private readonly slotAttrs?: () => Uint16Array,
  ) {}

  /** attrs[i] = attr(slots[i]), kept in step with slots. */
  get attrs(): Uint16Array {
    return this.shared ? this.slotAttrs!() : this.ownAttrs;
  }

  /** Whether attrs is the slots' own attributes array (tests). */
  get sharesAttrs(): boolean {
    return this.shared;
  }

  /** A copy of the attributes of its own, before its slots move or change (which would write into the shared array). */
  private own(): void {
    if (!this.shared) return;
    this.ownAttrs = new Uint16Array(this.slots.length);
    for (let i = 0; i < this.length; i++) this.ownAttrs[i] = this.attr(this.slots[i]!);
    this.shared = false;
  }

  /** Negative when slot a comes before slot b. */
  compare(a: number, b: number): number {
    const va = this.value(a);
    const vb = this.value(b);
    if (va !== vb) return va - vb;
    return this.id(a) - this.id(b);
  }

  /**
   * The first position in [lo, hi) whose slot does not come before the key (value, id) in this order
   * (hi when every one does): one binary search for every search of the permutation. An id of
   * -Infinity finds the first slot with that value or a greater one; Infinity, the first with a
   * greater value; a slot's own value and id, where that slot is or goes.
   */
  lowerBound(value: number, id: number, lo = 0, hi = this.length): number {
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const slot = this.slots[mid]!;
      const v = this.value(slot);
      if (v < value || (v === value && this.id(slot) < id)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Where `slot` is, or goes, by its values: lowerBound at its own value and id. */
  placeOf(slot: number, lo = 0, hi = this.length): number {
    return this.lowerBound(this.value(slot), this.id(slot), lo, hi);
  }

  /**
   * The first position after `from` whose slot's value differs from the one at `from` (the end of its
   * group): galloping from `from`, then a binary search, so a small group costs a few reads, not a
   * search of the whole permutation (a descending walk steps group by group, order.ts).
   */
  groupEnd(from: number): number {
    const v = this.value(this.slots[from]!);
    // slots[lo] holds v; past hi, not (or the end).
    let lo = from;
    let step = 1;
    let hi = from + step;
    while (hi < this.length && this.value(this.slots[hi]!) === v) {
      lo = hi;
      step *= 2;
      hi = from + step;
    }
    // The values from `from` on are v or greater: the first greater one.
    return this.lowerBound(v, Infinity, lo + 1, Math.min(hi, this.length));
  }

  /** The first position of the group (slots of one value) that holds position `at`: galloping backward, then a binary search. */
  groupStart(at: number): number {
    const v = this.value(this.slots[at]!);
    // slots[hi] holds v; at lo and before, not (or before the start).
    let hi = at;
    let step = 1;
    let lo = at - step;
    while (lo >= 0 && this.value(this.slots[lo]!) === v) {
      hi = lo;
      step *= 2;
      lo = at - step;
    }
    // The values up to `at` are v or smaller: the first that is v.
    return this.lowerBound(v, -Infinity, Math.max(lo + 1, 0), hi);
  }

  /**
   * Sorts `byId` (every live slot, in id order) into this order: a copy when it is in order already
   * (id: no counting array of a million entries beside the load's peak), counting sort when the values
   * are dense, else a comparison sort.
   */
  build(byId: Int32Array, capacity: number): void {
    const n = byId.length;
    this.slots = new Int32Array(Math.max(capacity, n));
    this.ownAttrs = new Uint16Array(this.slots.length);
    this.shared = false;
    this.length = n;
    let min = Infinity;
    let max = -Infinity;
    // Counting sort indexes by value: integers only (a hand-written age may be 2.5).
    let integers = true;
    let ordered = true;
    let previous = -Infinity;
    for (let i = 0; i < n; i++) {
      const v = this.value(byId[i]!);
      if (v < min) min = v;
      if (v > max) max = v;
      if (!Number.isInteger(v)) integers = false;
      if (!(v >= previous)) ordered = false;
      previous = v;
    }
    const range = max - min + 1;
    if (ordered) {
      // Non-decreasing along id order: ties are by id ascending already.
      this.slots.set(byId);
    } else if (n > 0 && integers && range <= 4 * n + 1024) {
      // Stable over id order: ties stay by id ascending.
      const counts = new Int32Array(range + 1);
      const at = (v: number) => v - min;
      for (let i = 0; i < n; i++) counts[at(this.value(byId[i]!)) + 1]!++;
      for (let r = 1; r <= range; r++) counts[r] = counts[r]! + counts[r - 1]!;
      for (let i = 0; i < n; i++) {
        const slot = byId[i]!;
        this.slots[counts[at(this.value(slot))]!++] = slot;
      }
    } else {
      this.slots.set(byId);
      this.slots.subarray(0, n).sort((a, b) => this.compare(a, b));
    }
    for (let i = 0; i < n; i++) this.attrs[i] = this.attr(this.slots[i]!);
  }

  /**
   * Takes `slots` as its own array: its first `n` entries already in this order (the load's id-ordered
   * slots, for the id order), so they are not copied into another array of a million entries at the
   * load's peak.
   */
  adopt(slots: Int32Array<ArrayBuffer>, n: number): void {
    this.slots = slots;
    this.length = n;
    let identity = this.slotAttrs !== undefined;
    for (let i = 0; identity && i < n; i++) identity = slots[i] === i;
    this.shared = identity;
    this.ownAttrs = identity ? new Uint16Array(0) : new Uint16Array(slots.length);
    if (!identity) for (let i = 0; i < n; i++) this.ownAttrs[i] = this.attr(slots[i]!);
  }

  /** The position of a slot held (its values the ones it is sorted by). */
  positionOf(slot: number): number {
    const at = this.placeOf(slot);
    if (this.slots[at] !== slot) throw new Error(`users index: slot ${slot} not where its values put it`);
    return at;
  }

  /**
   * Moves `slot`, held at position `from` where its old values sorted it, to where its values now put it
   * (every other slot in its place): only the entries between the two positions shift, by one, where
   * taking it out and putting it in again shifts everything after each of them (a status or an age
   * changed on 1M users: about a third of the entries moved, against a whole permutation's worth).
   */
  relocate(slot: number, from: number): void {
    this.own();
    const slots = this.slots;
    let to = from;
    if (from > 0 && this.compare(slots[from - 1]!, slot) > 0) {
      // Earlier: the first position in [0, from - 1] whose slot does not come before it.
      to = this.placeOf(slot, 0, from - 1);
      slots.copyWithin(to + 1, to, from);
      this.attrs.copyWithin(to + 1, to, from);
    } else if (from + 1 < this.length && this.compare(slots[from + 1]!, slot) < 0) {
      // Later: before the first position in [from + 2, length] whose slot does not come before it.
      to = this.placeOf(slot, from + 2) - 1;
      slots.copyWithin(from, from + 1, to + 1);
      this.attrs.copyWithin(from, from + 1, to + 1);
    }
    slots[to] = slot;
    this.attrs[to] = this.attr(slot);
    this.shifted += Math.abs(to - from);
  }

  /** Writes the slots' attributes again (their filter columns changed, not this permutation's order). */
  refreshAttrs(slots: Iterable<number>): void {
    // Shared: the slots' own attributes, written already.
    if (this.shared) return;
    for (const slot of slots) this.attrs[this.positionOf(slot)] = this.attr(slot);
  }

  /** Takes the slots out (their values still the ones they are sorted by). */
  removeAll(slots: readonly number[], capacity: number): void {
    if (slots.length === 0) return;
    this.own();
    if (slots.length <= ONE_BY_ONE) {
      for (const slot of slots) {
        const at = this.positionOf(slot);
        this.slots.copyWithin(at, at + 1, this.length);
        this.attrs.copyWithin(at, at + 1, this.length);
        this.length--;
        this.shifted += this.length - at;
      }
      return;
    }
    const gone = new Uint8Array(capacity);
    for (const slot of slots) gone[slot] = 1;
    let w = 0;
    for (let r = 0; r < this.length; r++) {
      const slot = this.slots[r]!;
      if (gone[slot] === 0) {
        this.attrs[w] = this.attrs[r]!;
        this.slots[w++] = slot;
      }
    }
    if (this.length - w !== slots.length) throw new Error('users index: removed slots were not all held');
    this.length = w;
  }

  /** Puts the slots in (with the values they are now sorted by). */
  insertAll(slots: readonly number[], capacity: number): void {
    if (slots.length === 0) return;
    // Still 0, 1, 2, ... with the slots after the last, in this order after it: attrs stays shared.
    const appended = this.shared && this.appendsInOrder(slots);
    if (!appended) this.own();
    if (this.slots.length < this.length + slots.length) {
      const grown = new Int32Array(Math.max(capacity, this.length + slots.length, grownCapacity(this.slots.length)));
      grown.set(this.slots.subarray(0, this.length));
      this.slots = grown;
      if (!this.shared) {
        const attrs = new Uint16Array(grown.length);
        attrs.set(this.ownAttrs.subarray(0, this.length));
        this.ownAttrs = attrs;
      }
    }
    if (appended) {
      for (let i = 0; i < slots.length; i++) this.slots[this.length + i] = this.length + i;
      this.length += slots.length;
      return;
    }
    if (slots.length <= ONE_BY_ONE) {
      for (const slot of slots) {
        const at = this.placeOf(slot);
        this.slots.copyWithin(at + 1, at, this.length);
        this.attrs.copyWithin(at + 1, at, this.length);
        this.slots[at] = slot;
        this.attrs[at] = this.attr(slot);
        this.length++;
        this.shifted += this.length - 1 - at;
      }
      return;
    }
    const added = Int32Array.from(slots).sort((a, b) => this.compare(a, b));
    // Merge from the back, in place.
    let i = this.length - 1;
    let j = added.length - 1;
    let w = this.length + added.length - 1;
    while (j >= 0) {
      if (i >= 0 && this.compare(this.slots[i]!, added[j]!) > 0) {
        this.attrs[w] = this.attrs[i]!;
        this.slots[w--] = this.slots[i--]!;
      } else {
        this.attrs[w] = this.attr(added[j]!);
        this.slots[w--] = added[j--]!;
      }
    }
    this.length += added.length;
  }

  /** Whether `slots` are length, length + 1, ... (any order) and come after the last slot held in this order. */
  private appendsInOrder(slots: readonly number[]): boolean {
    const sorted = [...slots].sort((a, b) => a - b);
    for (let i = 0; i < sorted.length; i++) if (sorted[i] !== this.length + i) return false;
    for (let i = 1; i < sorted.length; i++) if (this.compare(sorted[i - 1]!, sorted[i]!) >= 0) return false;
    return this.length === 0 || this.compare(this.length - 1, sorted[0]!) < 0;
  }

  bytes(): number {
    return this.slots.byteLength + this.ownAttrs.byteLength;
  }
}
