import { describe, expect, it } from 'vitest';
import { EmailStore, SlotMap, TextStore } from '../../src/modules/users/index/compact.js';
import { Dictionary, compareCodePoints } from '../../src/modules/users/index/dictionary.js';
import { collationKey, foldOfKey } from '../../src/db/collation.js';
import { UsersIndex } from '../../src/modules/users/index/users-index.js';
import { widenedGrid } from '../../src/modules/users/index/group-counts.js';
import { seeded } from '../helpers.js';

// The users index's compact stores against plain Maps, through random operations enough to make the
// text buffer grow and compact and the id array grow past ids held in its overflow map; and the
// dictionary's ranks against a sort of its texts by UTF-8 bytes (the order SQL compares keys in).

describe('users index stores', () => {
  it('SlotMap and TextStore answer as Maps do through random sets, rewrites and deletes', () => {
    const { int } = seeded(37);
    const slots = new SlotMap();
    const texts = new TextStore();
    const slotRef = new Map<number, number>();
    const textRef = new Map<number, string>();
    const words = ['a', 'ü@example.com', '🎸@x.org', 'long-'.repeat(40) + '@example.com'];
    for (let i = 0; i < 60_000; i++) {
      const id = int(10) === 0 ? 5_000_000 + int(3_000_000) : int(20_000);
      const op = int(3);
      if (op < 2) {
        const slot = int(5000);
        slots.set(id, slot);
        slotRef.set(id, slot);
        const text = `${words[int(words.length)]}${i}`;
        texts.set(slot, text);
        textRef.set(slot, text);
      } else {
        slots.delete(id);
        slotRef.delete(id);
        const slot = int(5000);
        texts.clear(slot);
        textRef.delete(slot);
      }
    }
    expect(slots.size).toBe(slotRef.size);
    for (let id = 0; id < 20_000; id++) expect(slots.get(id)).toBe(slotRef.get(id));
    for (const [id, slot] of slotRef) expect(slots.get(id)).toBe(slot);
    for (const [slot, text] of textRef) expect(texts.get(slot)).toBe(text);
    texts.trim();
    for (const [slot, text] of textRef) expect(texts.get(slot)).toBe(text);
  });

  it("TextStore holds about a byte a slot besides the texts (a one-byte length, blocks' offsets); every text reads back after a load, rewrites of any length around the one-byte escape, clears, slots past the end and compactions", () => {
    const { int } = seeded(43);
    const texts = new TextStore();
    const ref = new Map<number, string>();
    const n = 100_000;
    const loaded = (i: number) => `first.last.${i + 1}`;
    let chars = 0;
    for (let i = 0; i < n; i++) chars += loaded(i).length;
    // A load: room reserved, then every slot in order.
    texts.reserve(n, chars);
    for (let i = 0; i < n; i++) {
      texts.set(i, loaded(i));
      ref.set(i, loaded(i));
    }
    // The texts' bytes and 1.125 bytes a slot: a length of one byte, an offset of four per 32 slots (not 4 + 4 a slot).
    expect(texts.bytes()).toBe(chars + n + (4 * n) / 32);
    for (let i = 0; i < n; i += 7) expect(texts.get(i)).toBe(loaded(i));
    // Lengths around the escape (255), in bytes: 'é' is two, '🎸' four.
    const forms = [(k: number) => 'a'.repeat(k), (k: number) => 'é'.repeat(Math.ceil(k / 2)), (k: number) => '🎸'.repeat(Math.ceil(k / 4)) + 'x'];
    const lengths = [0, 1, 17, 200, 253, 254, 255, 256, 257, 511, 1000, 5000];
    for (let i = 0; i < 40_000; i++) {
      // Loaded slots, and slots past them (new users, their blocks partly written).
      const slot = int(4) === 0 ? n + int(3000) : int(n);
      if (int(6) === 0) {
        texts.clear(slot);
        ref.delete(slot);
        continue;
      }
      // Sometimes the same length as the text held (written over in place).
      const held = ref.get(slot);
      const text =
        held !== undefined && int(3) === 0
          ? held.replace(/^./u, (c) => (c === 'a' ? 'b' : c === 'é' ? 'è' : c === '🎸' ? '🎷' : 'f'))
          : forms[int(forms.length)]!(lengths[int(lengths.length)]!) + (int(2) ? String(i) : '');
      texts.set(slot, text);
      ref.set(slot, text);
    }
    for (const [slot, text] of ref) expect(texts.get(slot)).toBe(text);
    for (let slot = 0; slot < n + 3000; slot++) if (!ref.has(slot)) expect(texts.get(slot)).toBe('');
    texts.trim();
    for (const [slot, text] of ref) expect(texts.get(slot)).toBe(text);
    for (let slot = 0; slot < n + 3000; slot++) if (!ref.has(slot)) expect(texts.get(slot)).toBe('');
  });

  it('EmailStore: a user written again with the email it has (a PATCH of its status or age) appends nothing, so PATCHes never grow the buffer', () => {
    const n = 50_000;
    const email = (i: number) => `first.last.${i + 1}@example.com`;
    const emails = new EmailStore();
    emails.reserve(n, n * 30);
    for (let i = 0; i < n; i++) emails.set(i, email(i));
    emails.trim();
    const held = emails.bytes();
    // Far more rewrites than the buffer's room holds dead texts of.
    for (let k = 0; k < 400_000; k++) emails.set(k % n, email(k % n));
    expect(emails.bytes()).toBe(held);
    for (let i = 0; i < n; i += 101) expect(emails.get(i)).toBe(email(i));
    // A changed email is still written, and read back.
    emails.set(7, 'changed@example.org');
    expect(emails.get(7)).toBe('changed@example.org');
    emails.set(7, email(7));
    expect(emails.get(7)).toBe(email(7));
  });

  it("EmailStore's load reservation holds a load whose first emails have the shortest parts before the '@' (ids growing in digits): no growth past it", () => {
    const n = 200_000;
    const email = (i: number) => `first.last.${i + 1}@example.com`;
    let chars = 0;
    for (let i = 0; i < n; i++) chars += email(i).length;
    const emails = new EmailStore();
    // As the load reserves (index-feed.ts): 2% room for the users and the bytes.
    emails.reserve(Math.ceil(n * 1.02) + 1024, Math.ceil(chars * 1.02));
    let reserved = 0;
    for (let i = 0; i < n; i++) {
      emails.set(i, email(i));
      // The room for the texts is set once ~1,000 emails are seen.
      if (i === 5_000) reserved = emails.bytes();
    }
    // Not grown by a quarter near the end (then copied down by the trim): the reservation held them all.
    expect(emails.bytes()).toBe(reserved);
    emails.trim();
    expect(emails.bytes()).toBe(reserved);
    for (let i = 0; i < n; i += 997) expect(emails.get(i)).toBe(email(i));
  });

  it("a load's id range reserves the id map and the ids column once: no growth or widening while it loads, and every id answers", () => {
    const { int } = seeded(41);
    const users = 300_000;
    const slots = new SlotMap();
    slots.reserve(users, users);
    const reserved = slots.bytes();
    expect(reserved).toBeGreaterThanOrEqual(4 * (users + 1));
    const ref = new Map<number, number>();
    for (let id = 1; id <= users; id += 1 + int(2)) {
      slots.set(id, id - 1);
      ref.set(id, id - 1);
    }
    expect(slots.bytes()).toBe(reserved);
    for (const [id, slot] of ref) expect(slots.get(id)).toBe(slot);
    // Ids past the reservation, negative or far off still answer (the array grows, or the map takes them).
    for (const id of [users * 2, -5, 9_000_000_000]) {
      slots.set(id, 7);
      expect(slots.get(id)).toBe(7);
    }
    for (const [id, slot] of ref) expect(slots.get(id)).toBe(slot);
    // Not reserved where set() would not take the ids into the array: far beyond the count, or not integers.
    const sparse = new SlotMap();
    const before = sparse.bytes();
    sparse.reserve(50_000_000, 10);
    sparse.reserve(2.5, 10);
    expect(sparse.bytes()).toBe(before);

    const index = new UsersIndex();
    index.reserve(1000, 0, { min: 1, max: 70_000 });
    const ids = index.ids;
    expect(ids).toBeInstanceOf(Int32Array);
    const country_key = collationKey('Peru');
    const keys = { first_name_key: collationKey('A'), last_name_key: collationKey('B'), country_key, country_fold: foldOfKey(country_key) };
    index.add(
      [1, 300, 70_000].map((id) => ({ id, first_name: 'A', last_name: 'B', email: `u${id}@example.com`, age: 30, status: 'active', country: 'Peru', ...keys })),
    );
    expect(index.ids).toBe(ids);
    const wide = new UsersIndex();
    wide.reserve(10, 0, { min: -3, max: 2.5 });
    expect(wide.ids).toBeInstanceOf(Float64Array);
  });

  it('addRows takes rows as arrays at the positions given (any column order) and holds what add() holds from objects', () => {
    const { int } = seeded(41);
    const names = ['Ana', 'ana', 'Émile', 'Zoë', '𝔄rt'];
    const countries = ['Peru', 'peru', 'Chile', 'Österreich'];
    const users = Array.from({ length: 300 }, (_, i) => {
      const first_name = names[int(names.length)]!;
      const last_name = names[int(names.length)]!;
      const country = countries[int(countries.length)]!;
      const country_key = collationKey(country);
      return {
        id: i * 3 - 7,
        first_name,
        last_name,
        email: `u${i}@example.com`,
        age: int(5) === 0 ? 200 + i : int(120),
        status: ['active', 'inactive', 'banned'][int(3)]!,
        country,
        version: 1 + int(4),
        first_name_key: collationKey(first_name),
        last_name_key: collationKey(last_name),
        country_key,
        country_fold: foldOfKey(country_key),
      };
    });
    const byObjects = new UsersIndex();
    byObjects.add(users);
    byObjects.finishLoad();
    // The columns in an order of their own (as a statement's might be), and one more the index does not read.
    const columns = [
      'version',
      'country_fold',
      'extra',
      ...Object.keys(users[0]!)
        .filter((c) => c !== 'version' && c !== 'country_fold')
        .reverse(),
    ];
    const at = Object.fromEntries(Object.keys(users[0]!).map((c) => [c, columns.indexOf(c)])) as Parameters<UsersIndex['addRows']>[1];
    const byRows = new UsersIndex();
    byRows.addRows(
      users.map((u) => columns.map((c) => (c === 'extra' ? 'x' : u[c as keyof typeof u]))),
      at,
    );
    byRows.finishLoad();
    expect(byRows.size).toBe(users.length);
    for (const u of users) expect(byRows.user(u.id)).toEqual(byObjects.user(u.id));
    for (const f of ['id', 'first_name', 'last_name', 'age', 'status', 'country'] as const)
      for (const desc of [false, true]) {
        const slots = (index: UsersIndex) =>
          index
            .order(f, desc)
            .slotsInOrder()
            .map((s) => index.ids[s]);
        expect(slots(byRows)).toEqual(slots(byObjects));
      }
    expect(() => byRows.addRows([columns.map((c) => (c === 'id' ? -7 : 'x'))], at)).toThrow(/loaded twice/);
  });

  it('Dictionary ranks order codes by the bytes of their sort texts, equal texts sharing a rank, as codes are added in any order', () => {
    const { int } = seeded(7);
    const pool = ['b', 'a', 'ab', 'a\u0001A', 'a\u0001a', '\uffff', '𝔄', '\ue000', 'é', 'e\u0301', ''];
    const dict = new Dictionary();
    for (let i = 0; i < 200; i++) {
      const text = pool[int(pool.length)]! + (int(2) ? pool[int(pool.length)]! : '');
      dict.code(`${text}|${int(3)}`, text, text);
    }
    const bytes = (s: string) => Buffer.from(s, 'utf8');
    for (let a = 0; a < dict.size; a++)
      for (let b = 0; b < dict.size; b++) {
        const order = Math.sign(Buffer.compare(bytes(dict.sortText[a]!), bytes(dict.sortText[b]!)));
        expect(Math.sign(dict.rank(a) - dict.rank(b))).toBe(order);
        expect(Math.sign(compareCodePoints(dict.sortText[a]!, dict.sortText[b]!))).toBe(order);
      }
  });

  it('widenedGrid moves each block of a count grid to its place in a wider grid, the new blocks zero', () => {
    // 2 by 3 blocks of 2 entries: block (o, i) holds o * 10 + i and 100 more.
    const table = Int32Array.from({ length: 12 }, (_, k) => {
      const b = Math.floor(k / 2);
      const v = Math.floor(b / 3) * 10 + (b % 3);
      return k % 2 === 0 ? v : v + 100;
    });
    const grown = widenedGrid(table, 2, 3, 3, 5, 2);
    expect(grown.length).toBe(30);
    for (let o = 0; o < 3; o++)
      for (let i = 0; i < 5; i++) {
        const held = o < 2 && i < 3;
        const at = (o * 5 + i) * 2;
        expect([grown[at], grown[at + 1]], `block (${o}, ${i})`).toEqual(held ? [o * 10 + i, o * 10 + i + 100] : [0, 0]);
      }
    // Nothing held: all zero; the same shape: a copy.
    expect(Array.from(widenedGrid(new Int32Array(0), 0, 0, 2, 2, 3))).toEqual(new Array(12).fill(0));
    expect(Array.from(widenedGrid(table, 2, 3, 2, 3, 2))).toEqual(Array.from(table));
  });
});
