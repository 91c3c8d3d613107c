import { describe, expect, it } from 'vitest';
import { collationKey, foldOfKey } from '../../src/db/collation.js';
import { SORT_FIELDS, UsersIndex, type StoredUser } from '../../src/modules/users/index/users-index.js';
import { Permutation } from '../../src/modules/users/index/permutation.js';
import { seeded, type Seeded } from '../helpers.js';

// A user changed in place moves within each permutation from its old place to its new one
// (Permutation.relocate): only the entries between the two shift. Checked against an index built
// afresh from the same rows after random updates one user at a time, a few at once and many at once
// (the passes that compact and merge), with creations and deletions between them; and the cost: one
// user's age or status changed shifts the entries between its two places, not every entry after them.

const FIRST = ['Ana', 'ana', 'Bo', 'Straße', 'Zoë', 'Émile', 'emile'];
const LAST = ['Silva', 'Müller', 'Lee', 'lee', '1999'];
const COUNTRIES = ['Brazil', 'brazil', 'México', 'Norway', 'Chile'];

function stored(u: { id: number; first_name: string; last_name: string; email: string; age: number; status: string; country: string }): StoredUser {
  const country_key = collationKey(u.country);
  return { ...u, first_name_key: collationKey(u.first_name), last_name_key: collationKey(u.last_name), country_key, country_fold: foldOfKey(country_key) };
}

function randomUser(r: Seeded, id: number): StoredUser {
  return stored({
    id,
    // Now and then a name no user had: a new dictionary code, which moves the ranks of the others.
    first_name: r.chance(0.05) ? `N${r.int(1e6)}` : r.pick(FIRST),
    last_name: r.pick(LAST),
    email: `u${id}-${r.int(1e9)}@example.com`,
    age: r.chance(0.03) ? r.pick([-3, 151, 2.5]) : r.int(100),
    status: r.chance(0.02) ? 'suspended' : r.pick(['active', 'inactive']),
    country: r.pick(COUNTRIES),
  });
}

function changed(r: Seeded, u: StoredUser): StoredUser {
  const next = randomUser(r, u.id);
  const pick = <K extends keyof StoredUser>(k: K) => (r.chance(0.4) ? next[k] : u[k]);
  return stored({
    id: u.id,
    first_name: pick('first_name'),
    last_name: pick('last_name'),
    email: u.email,
    age: pick('age'),
    status: pick('status'),
    country: pick('country'),
  });
}

function built(rows: Iterable<StoredUser>): UsersIndex {
  const index = new UsersIndex();
  index.add([...rows].sort((a, b) => a.id - b.id));
  index.finishLoad();
  return index;
}

/** Every order's rows, each permutation's filter attributes (as (country, status, age) texts) and the totals per cell. */
function contents(index: UsersIndex) {
  const orders = SORT_FIELDS.flatMap((f) =>
    [false, true].map((desc) =>
      index
        .order(f, desc)
        .slotsInOrder()
        .map((slot) => index.row(slot)),
    ),
  );
  const attrs = SORT_FIELDS.map((f) => {
    const p = index.perms[f];
    return Array.from(p.attrs.subarray(0, p.length), (attr, i) => {
      expect(attr).toBe(index.slotAttrs[p.slots[i]!]);
      const row = attr >>> 8;
      return row === 255
        ? `odd|${attr & 0xff}`
        : `${index.country.sortText[index.rowCountry[row]!]}|${index.status.shown[index.rowStatus[row]!]}|${attr & 0xff}`;
    });
  });
  const totals = new Map<string, number>();
  for (let c = 0; c < index.country.size; c++)
    for (let s = 0; s < index.status.size; s++)
      for (let age = 0; age < 151; age++) {
        const n = index.counts[(c * index.statusCap + s) * 151 + age] ?? 0;
        const k = `${index.country.sortText[c]}|${index.status.shown[s]}|${age}`;
        if (n !== 0) totals.set(k, (totals.get(k) ?? 0) + n);
      }
  return { size: index.size, orders, attrs, totals, odd: index.oddAges.size, notNumbers: index.notNumbers.size };
}

describe('users index: users changed in place', () => {
  it('equals an index built afresh after random updates one at a time, a few and many at once, between creations and deletions', () => {
    const r = seeded(Number(process.env.USERS_INDEX_SEED ?? 3702));
    const table = new Map<number, StoredUser>();
    let nextId = 1;
    for (let i = 0; i < 1500; i++, nextId++) table.set(nextId, randomUser(r, nextId));
    const index = built(table.values());
    for (let step = 0; step < 120; step++) {
      const ids = [...table.keys()];
      const changes = new Map<number, StoredUser | null>();
      // Mostly one user (a PATCH's catch-up), sometimes a few, now and then past the one-by-one bound.
      const n = r.chance(0.7) ? 1 : r.chance(0.7) ? 2 + r.int(10) : 65 + r.int(100);
      for (let i = 0; i < n; i++) {
        const kind = r.int(20);
        if (kind === 0) {
          const id = nextId++;
          changes.set(id, randomUser(r, id));
        } else if (kind === 1) changes.set(r.pick(ids), null);
        else {
          const id = r.pick(ids);
          changes.set(id, changed(r, table.get(id)!));
        }
      }
      for (const [id, user] of changes)
        if (user === null) table.delete(id);
        else table.set(id, user);
      index.apply(changes);
      if (step % 20 === 19) expect(contents(index), `step ${step}`).toEqual(contents(built(table.values())));
    }
    expect(contents(index)).toEqual(contents(built(table.values())));
  });

  it("the id order shares the slots' own attributes after a load (no copy) while its slots are 0, 1, 2, ...: through updates and creations after the last id; a deletion or a lower id makes its own copy", () => {
    const r = seeded(3703);
    const table = new Map<number, StoredUser>();
    for (let id = 1; id <= 3000; id++) table.set(id, randomUser(r, id));
    const index = built(table.values());
    const id = index.perms.id;
    expect(id.sharesAttrs).toBe(true);
    expect(id.bytes()).toBe(id.slots.byteLength);
    const step = (changes: Map<number, StoredUser | null>, shared: boolean) => {
      for (const [k, u] of changes)
        if (u === null) table.delete(k);
        else table.set(k, u);
      index.apply(changes);
      expect(id.sharesAttrs).toBe(shared);
      expect(contents(index)).toEqual(contents(built(table.values())));
    };
    // Updates, one and many at once (status, age, country: the attributes change).
    step(new Map([[5, stored({ ...table.get(5)!, status: 'suspended', age: 151 })]]), true);
    step(new Map([...table.values()].slice(0, 200).map((u) => [u.id, changed(r, u)])), true);
    // Creations after the last id, one and many: the slots after the last.
    step(new Map([[3001, randomUser(r, 3001)]]), true);
    step(new Map(Array.from({ length: 100 }, (_, i) => [3002 + i, randomUser(r, 3002 + i)])), true);
    // A deletion: a hole in the slots, its own copy from then on.
    step(new Map([[10, null]]), false);
    step(new Map([[7, changed(r, table.get(7)!)]]), false);
    // A lower id than the last, on an index that shares: its own copy too.
    const other = built([...table.values()].filter((u) => u.id < 3000));
    expect(other.perms.id.sharesAttrs).toBe(true);
    other.apply(new Map([[5000, randomUser(r, 5000)]]));
    other.apply(new Map([[3000, randomUser(r, 3000)]]));
    expect(other.perms.id.sharesAttrs).toBe(false);
    const ids = other
      .order('id', false)
      .slotsInOrder()
      .map((slot) => other.ids[slot]);
    expect(ids.slice(-2)).toEqual([3000, 5000]);
  });

  it("one user's age or status changed shifts only the entries between its old and new places", () => {
    const table = new Map<number, StoredUser>();
    // 10,000 users: ages 0-99 (about 100 a value), statuses active / inactive.
    for (let id = 1; id <= 10_000; id++)
      table.set(
        id,
        stored({
          id,
          first_name: 'Ana',
          last_name: 'Lee',
          email: `u${id}@example.com`,
          age: (id * 37) % 100,
          status: id % 2 ? 'active' : 'inactive',
          country: 'Chile',
        }),
      );
    const index = built(table.values());
    const between = (lo: number, hi: number) => [...table.values()].filter((u) => u.age >= lo && u.age <= hi).length;
    for (const id of [17, 2_503, 5_000, 9_999]) {
      const u = table.get(id)!;
      const age = u.age === 99 ? 98 : u.age + 1;
      const before = SORT_FIELDS.map((f) => index.perms[f].shifted);
      const next = { ...u, age };
      table.set(id, next);
      index.apply(new Map([[id, next]]));
      const shifted = SORT_FIELDS.map((f, i) => index.perms[f].shifted - before[i]!);
      // The age's permutation: at most the users of the two ages (about 200 of 10,000); the others keep it in place.
      expect(shifted[SORT_FIELDS.indexOf('age')]).toBeLessThanOrEqual(between(Math.min(u.age, age), Math.max(u.age, age)));
      for (const f of SORT_FIELDS) if (f !== 'age') expect(shifted[SORT_FIELDS.indexOf(f)], f).toBe(0);
    }
    // A status changed: the users between its place among the actives and its place among the inactives (by id), not twice the rest.
    const id = 4_001;
    const u = table.get(id)!;
    const next = { ...u, status: u.status === 'active' ? 'inactive' : 'active' };
    const before = index.perms.status.shifted;
    index.apply(new Map([[id, next]]));
    table.set(id, next);
    // The actives after id 4,001 and the inactives before it: 4,999 (taken out and put in again, it shifted 11,000).
    expect(index.perms.status.shifted - before).toBeLessThanOrEqual(5_001);
    expect(contents(index)).toEqual(contents(built(table.values())));
  });
});

describe('users index: a permutation searched by key (Permutation.lowerBound)', () => {
  /** A permutation of slots with these values, ids 10, 20, 30, ... by slot. */
  function permutation(values: number[]): Permutation {
    const p = new Permutation(
      (s) => values[s]!,
      (s) => (s + 1) * 10,
      () => 0,
    );
    p.build(Int32Array.from(values.keys()), values.length);
    return p;
  }

  /** The first position in [lo, hi) whose (value, id) is not below (value, id): read one by one. */
  function scanned(p: Permutation, value: number, id: number, lo: number, hi: number): number {
    for (let at = lo; at < hi; at++) {
      const v = p.value(p.slots[at]!);
      if (!(v < value || (v === value && p.id(p.slots[at]!) < id))) return at;
    }
    return hi;
  }

  it('finds the first position not before the key: an empty range, all values equal, before the first, after the last, within a sub-range', () => {
    const empty = permutation([]);
    expect(empty.lowerBound(5, -Infinity)).toBe(0);
    expect(empty.lowerBound(5, Infinity)).toBe(0);

    const equal = permutation([7, 7, 7, 7]);
    expect(equal.lowerBound(7, -Infinity)).toBe(0);
    expect(equal.lowerBound(7, Infinity)).toBe(4);
    // Ties by id: slot 2 (id 30) is third.
    expect(equal.lowerBound(7, 30)).toBe(2);
    expect(equal.placeOf(2)).toBe(2);
    expect(equal.lowerBound(6, Infinity)).toBe(0);
    expect(equal.lowerBound(8, -Infinity)).toBe(4);
    // An empty range gives its start, whatever the key.
    expect(equal.lowerBound(7, 30, 3, 3)).toBe(3);
    expect(equal.lowerBound(0, 0, 1, 1)).toBe(1);

    // Values by slot: 5, 1, 3, 3, 9 -> ascending: 1 (slot 1), 3 (slot 2), 3 (slot 3), 5 (slot 0), 9 (slot 4).
    const p = permutation([5, 1, 3, 3, 9]);
    expect(Array.from(p.slots.subarray(0, p.length))).toEqual([1, 2, 3, 0, 4]);
    expect(p.lowerBound(0, Infinity)).toBe(0);
    expect(p.lowerBound(1, -Infinity)).toBe(0);
    expect(p.lowerBound(9, Infinity)).toBe(5);
    expect(p.lowerBound(10, -Infinity)).toBe(5);
    expect(p.lowerBound(3, -Infinity)).toBe(1);
    expect(p.lowerBound(3, Infinity)).toBe(3);
    expect(p.lowerBound(4, -Infinity)).toBe(3);
    // Within [2, 4): before the range's first, after its last.
    expect(p.lowerBound(0, -Infinity, 2, 4)).toBe(2);
    expect(p.lowerBound(9, -Infinity, 2, 4)).toBe(4);
    expect(p.lowerBound(9, Infinity, 2, 4)).toBe(4);
    expect(equal.lowerBound(7, Infinity, 0, 2)).toBe(2);
    for (let s = 0; s < 5; s++) expect(p.placeOf(s), `slot ${s}`).toBe(Array.from(p.slots).indexOf(s));
  });

  it('agrees with a scan, and groupStart / groupEnd with the groups read one by one, on random permutations', () => {
    const r = seeded(3717);
    for (let round = 0; round < 200; round++) {
      const n = r.int(40);
      const values = Array.from({ length: n }, () => r.int(6));
      const p = permutation(values);
      for (let k = 0; k < 20; k++) {
        const lo = r.int(n + 1);
        const hi = lo + r.int(n - lo + 1);
        const value = r.int(8) - 1;
        const id = r.pick([-Infinity, Infinity, r.int(n + 2) * 10]);
        expect(p.lowerBound(value, id, lo, hi), `${values.join(',')} ${value} ${id} [${lo}, ${hi})`).toBe(scanned(p, value, id, lo, hi));
      }
      for (let at = 0; at < n; at++) {
        const v = p.value(p.slots[at]!);
        let start = at;
        while (start > 0 && p.value(p.slots[start - 1]!) === v) start--;
        let end = at + 1;
        while (end < n && p.value(p.slots[end]!) === v) end++;
        expect([p.groupStart(at), p.groupEnd(at)], `${values.join(',')} at ${at}`).toEqual([start, end]);
      }
    }
  });
});
