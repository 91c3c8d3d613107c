import type { Permutation } from './permutation.js';

// A sort field and direction as the walks (query.ts) read it, from the field's one ascending
// permutation (ties by id ascending, permutation.ts): the SQL's `order by <field> <direction>, id`.
//   - ascending ('up'): the permutation as it is;
//   - descending, a field whose values are unique (id) ('down'): the permutation backward;
//   - descending, any other field ('groups'): its groups of equal values backward, each group read
//     forward, so that ties stay by id ascending as SQL breaks them. A descending permutation held
//     apart would be 6 bytes a user more (its slots and their attributes' copy).
// Positions below are the permutation's (physical); an order's own (logical) positions are only
// reached by a Reader, group by group, or by atIndex.

/** A group of equal values: the permutation's positions [start, end). */
export interface Group {
  start: number;
  end: number;
}

/** A place to read from: position `at` of the group [start, end) that holds it. */
export interface Place extends Group {
  at: number;
}

export type OrderKind = 'up' | 'down' | 'groups';

export class Order {
  readonly kind: OrderKind;

  constructor(
    readonly p: Permutation,
    readonly desc: boolean,
    /** Whether no two slots share the field's value (id): its descending order is the permutation backward. */
    unique: boolean,
  ) {
    this.kind = !desc ? 'up' : unique ? 'down' : 'groups';
  }

  get length(): number {
    return this.p.length;
  }

  value(slot: number): number {
    return this.p.value(slot);
  }

  /** Negative when slot a comes before slot b in this order (ties by id ascending). */
  compare(a: number, b: number): number {
    const va = this.p.value(a);
    const vb = this.p.value(b);
    if (va !== vb) return this.desc ? vb - va : va - vb;
    return this.p.id(a) - this.p.id(b);
  }

  private groupAt(at: number): Group {
    if (this.kind === 'down') return { start: at, end: at + 1 };
    return { start: this.p.groupStart(at), end: this.p.groupEnd(at) };
  }

  /** The first group in this order, or undefined when there is none. */
  firstGroup(): Group | undefined {
    const n = this.p.length;
    if (n === 0) return undefined;
    return this.kind === 'up' ? this.groupAt(0) : this.groupAt(n - 1);
  }

  /** The group after `g` in this order. */
  nextGroup(g: Group): Group | undefined {
    if (this.kind === 'up') return g.end < this.p.length ? this.groupAt(g.end) : undefined;
    return g.start > 0 ? this.groupAt(g.start - 1) : undefined;
  }

  /** The last group in this order. */
  lastGroup(): Group | undefined {
    const n = this.p.length;
    if (n === 0) return undefined;
    return this.kind === 'up' ? this.groupAt(n - 1) : this.groupAt(0);
  }

  /** The group before `g` in this order. */
  previousGroup(g: Group): Group | undefined {
    if (this.kind === 'up') return g.start > 0 ? this.groupAt(g.start - 1) : undefined;
    return g.end < this.p.length ? this.groupAt(g.end) : undefined;
  }

  /** Reads this order from its first slot on (backward: from its last slot back). */
  read(backward = false): Reader {
    const g = backward ? this.lastGroup() : this.firstGroup();
    return g ? this.readGroup(g, backward) : this.reader(-1, -1, 1, 0, 0);
  }

  /** Reads this order from the first slot of group g on (backward: from g's last slot back). */
  readGroup(g: Group, backward = false): Reader {
    const first = backward !== (this.kind === 'down') ? g.end - 1 : g.start;
    return this.readFrom({ ...g, at: first }, backward);
  }

  /** Reads this order from place `p` on (forward) or back (backward). */
  readFrom(place: Place, backward = false): Reader {
    const n = this.p.length;
    const { at, start, end } = place;
    // Which way along the permutation: 'down' reads it backward; 'groups' reads within a group forward.
    const upward = (this.kind === 'down') === backward;
    switch (this.kind) {
      case 'up':
      case 'down':
        return upward ? this.reader(at, n, 1, 0, n) : this.reader(at, -1, -1, 0, n);
      case 'groups':
        return upward ? this.reader(at, end, 1, start, end) : this.reader(at, start - 1, -1, start, end);
    }
  }

  private reader(at: number, stop: number, step: 1 | -1, start: number, end: number): Reader {
    return new Reader(this.p, this.kind === 'groups', at, stop, step, start, end);
  }

  /** The place of this order's i-th slot (0 <= i < length). */
  atIndex(i: number): Place {
    const n = this.p.length;
    if (this.kind === 'up') return { at: i, start: 0, end: n };
    if (this.kind === 'down') return { at: n - 1 - i, start: 0, end: n };
    // The i-th slot is in the group that holds the mirror position n - 1 - i, as far from its start as the mirror is from its end.
    const mirror = n - 1 - i;
    const { start, end } = this.groupAt(mirror);
    return { at: start + (end - 1 - mirror), start, end };
  }

  /**
   * The first place, in this order, whose slot `yes` holds for, `yes` being false then true along
   * this order; undefined when it holds for none. Its group is the one that holds it.
   */
  seek(yes: (slot: number) => boolean): Place | undefined {
    const { slots } = this.p;
    const n = this.p.length;
    if (this.kind === 'up') {
      const at = firstWhere(0, n, (i) => yes(slots[i]!));
      return at < n ? { at, ...this.groupAt(at) } : undefined;
    }
    // Along the permutation, a group has a slot `yes` holds for (its last in this order) for the
    // groups before some position and for none after: the last such position's group is the first
    // in this order with one, and within it (read forward) `yes` is false then true.
    const some = this.kind === 'down' ? (at: number) => yes(slots[at]!) : (at: number) => yes(slots[this.p.groupEnd(at) - 1]!);
    const none = firstWhere(0, n, (i) => !some(i));
    if (none === 0) return undefined;
    const g = this.groupAt(none - 1);
    if (this.kind === 'down') return { at: none - 1, ...g };
    // The group's last slot is one `yes` holds for.
    return { at: firstWhere(g.start, g.end - 1, (i) => yes(slots[i]!)), ...g };
  }

  /** Every slot in this order (tests). */
  slotsInOrder(): number[] {
    const out: number[] = [];
    const r = this.read();
    for (let at = r.next(); at >= 0; at = r.next()) out.push(this.p.slots[at]!);
    return out;
  }
}

/** The first position in [lo, hi) that `yes` holds for, `yes` being false then true along them (hi when none): a binary search. */
function firstWhere(lo: number, hi: number, yes: (at: number) => boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (yes(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Positions of a permutation in an order's order, one by one: next() is the next position, -1 past the last. */
export class Reader {
  constructor(
    private readonly p: Permutation,
    private readonly groups: boolean,
    private at: number,
    private stop: number,
    private readonly step: 1 | -1,
    private start: number,
    private end: number,
  ) {}

  next(): number {
    if (this.at !== this.stop) {
      const at = this.at;
      this.at += this.step;
      return at;
    }
    return this.groups ? this.nextGroup() : -1;
  }

  /** 'groups' orders: the next group along the order is the one before along the permutation (backward: the one after). */
  private nextGroup(): number {
    if (this.step === 1) {
      if (this.start <= 0) return -1;
      this.end = this.start;
      this.start = this.p.groupStart(this.start - 1);
      this.at = this.start;
      this.stop = this.end;
    } else {
      if (this.end >= this.p.length) return -1;
      this.start = this.end;
      this.end = this.p.groupEnd(this.start);
      this.at = this.end - 1;
      this.stop = this.start - 1;
    }
    return this.next();
  }
}
