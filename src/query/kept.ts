// What the list engine remembers between requests, all of it through the two kinds below, so that
// each cache states its bound and its lifetime in one place:
// - a BoundedMap holds at most `max` entries; adding one more drops the first added (clearing them
//   all would rebuild the whole working set at once);
// - a PerOwner keeps one value per owner object (a Kysely instance, a SQLite connection, a dialect's
//   adapter): made at the owner's first use, gone with the owner (a WeakMap), and forgotten on demand
//   (forgetKept: a test that must not depend on what an earlier test left behind).
// Whatever is kept is only ever used under the version of its table it was read at
// (db/table-stamps.ts), or is a pure function of its key (a statement's SQL), so forgetting it
// changes no answer, only what the next request costs.

/** A Map of at most `max` entries; adding one more drops the first added. */
export class BoundedMap<K, V> {
  readonly #entries = new Map<K, V>();

  constructor(readonly max: number) {}

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    return this.#entries.get(key);
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  set(key: K, value: V): this {
    if (!this.#entries.has(key) && this.#entries.size >= this.max) this.#entries.delete(this.#entries.keys().next().value as K);
    this.#entries.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  entries(): IterableIterator<[K, V]> {
    return this.#entries.entries();
  }

  keys(): IterableIterator<K> {
    return this.#entries.keys();
  }

  values(): IterableIterator<V> {
    return this.#entries.values();
  }
}

const everyPerOwner: PerOwner<unknown>[] = [];

/** One value per owner object, made at the owner's first use and gone with it. */
export class PerOwner<T> {
  readonly #byOwner = new WeakMap<object, T>();

  /** `make`: the owner's value at its first use (a BoundedMap, or a small record). */
  constructor(private readonly make: () => T) {
    everyPerOwner.push(this);
  }

  of(owner: object): T {
    let value = this.#byOwner.get(owner);
    if (value === undefined) this.#byOwner.set(owner, (value = this.make()));
    return value;
  }

  /** The owner's value, without making one. */
  peek(owner: object): T | undefined {
    return this.#byOwner.get(owner);
  }

  forget(owner: object): void {
    this.#byOwner.delete(owner);
  }
}

/** Forgets everything any PerOwner keeps for these owners. */
export function forgetKept(owners: readonly object[]): void {
  for (const kept of everyPerOwner) for (const owner of owners) kept.forget(owner);
}
