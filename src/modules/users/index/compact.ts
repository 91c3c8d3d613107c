// Stores that keep a million users' ids and emails in a few typed arrays instead of a million
// heap objects (a Map entry or a string each costs tens of bytes more than its content).

/**
 * The capacity after `capacity` when full: an eighth more, not double. On a million users the slot
 * arrays (columns, permutations, their attributes) are ~60 MB; doubled at the first insert past the
 * room the load left (2%), a worker would hold ~60 MB it does not use, past the 200 MB of issue 37.
 * Each growth copies them and the emails' offsets (tens of ms at 1M), once per eighth more users.
 */
export function grownCapacity(capacity: number): number {
  return capacity + Math.max(1024, capacity >>> 3);
}

/**
 * Id -> slot. Ids are dense in practice (a sequence): an Int32Array indexed by id holds slot + 1.
 * An id far beyond the users held (written by hand) goes to a Map instead, so one huge id cannot
 * make the array huge.
 */
export class SlotMap {
  private dense = new Int32Array(1024);
  private readonly sparse = new Map<number, number>();
  size = 0;

  get(id: number): number | undefined {
    if (id >= 0 && id < this.dense.length) {
      const v = this.dense[id]!;
      return v === 0 ? undefined : v - 1;
    }
    return this.sparse.get(id);
  }

  has(id: number): boolean {
    return this.get(id) !== undefined;
  }

  set(id: number, slot: number): void {
    if (this.get(id) === undefined) this.size++;
    if (id >= 0 && id >= this.dense.length && id < 2 * (this.size + (1 << 20))) this.widen(id);
    if (id >= 0 && id < this.dense.length) this.dense[id] = slot + 1;
    else this.sparse.set(id, slot);
  }

  /**
   * Room in the array for ids up to `maxId` (and 2% more, as the index's columns) among `users` ids,
   * before a load: allocated once instead of doubling as the load goes (each old array garbage at the
   * load's peak). Only where set() would take such ids into the array anyway: sparse ones stay in the map.
   */
  reserve(maxId: number, users: number): void {
    if (Number.isInteger(maxId) && maxId >= this.dense.length && maxId < 2 * (users + (1 << 20))) this.widen(maxId, Math.ceil(maxId * 1.02) + 1024);
  }

  /** The array grown to hold `id`: doubled until it does, or to `length` entries. */
  private widen(id: number, length = this.dense.length): void {
    while (length <= id) length *= 2;
    const grown = new Int32Array(length);
    grown.set(this.dense);
    this.dense = grown;
    // Ids now within the array leave the map (a negative id, written by hand, stays there: no array index).
    for (const [sparseId, sparseSlot] of this.sparse)
      if (sparseId >= 0 && sparseId < length) {
        this.dense[sparseId] = sparseSlot + 1;
        this.sparse.delete(sparseId);
      }
  }

  delete(id: number): void {
    if (this.get(id) === undefined) return;
    this.size--;
    if (id >= 0 && id < this.dense.length) this.dense[id] = 0;
    else this.sparse.delete(id);
  }

  bytes(): number {
    return this.dense.byteLength + this.sparse.size * 64;
  }
}

/** Text per slot as UTF-8 in one growing buffer; a rewritten slot's old bytes are reclaimed by compaction. */
export class TextStore {
  private bytesHeld = Buffer.alloc(1 << 16);
  private used = 0;
  private wasted = 0;
  private start = new Int32Array(1024);
  private length = new Int32Array(1024);

  get(slot: number): string {
    const at = this.start[slot]!;
    return this.bytesHeld.toString('utf8', at, at + this.length[slot]!);
  }

  set(slot: number, text: string): void {
    if (slot >= this.start.length) {
      let n = this.start.length;
      while (n <= slot) n = grownCapacity(n);
      this.widen(n);
    }
    this.wasted += this.length[slot]!;
    this.length[slot] = 0;
    const size = Buffer.byteLength(text, 'utf8');
    if (this.used + size > this.bytesHeld.length) this.makeRoom(size);
    this.bytesHeld.write(text, this.used, 'utf8');
    this.start[slot] = this.used;
    this.length[slot] = size;
    this.used += size;
  }

  /** Room for `n` slots (more than held) in the slot arrays. */
  private widen(n: number): void {
    const start = new Int32Array(n);
    start.set(this.start);
    const length = new Int32Array(n);
    length.set(this.length);
    this.start = start;
    this.length = length;
  }

  /** Room for `slots` slots and `bytes` bytes of text before a load, so the buffer is not grown (copied) as it goes. */
  reserve(slots: number, bytes: number): void {
    if (slots > this.start.length) this.widen(slots);
    if (this.used + bytes > this.bytesHeld.length) this.makeRoom(0, Math.max(1 << 16, this.used - this.wasted + bytes));
  }

  clear(slot: number): void {
    if (slot < this.length.length) {
      this.wasted += this.length[slot]!;
      this.length[slot] = 0;
    }
  }

  /** Drops the buffer's free room beyond an eighth of what it holds (after a load, which grew it as it went). */
  trim(): void {
    const keep = Math.max(1 << 16, Math.ceil((this.used - this.wasted) * 1.125));
    if (this.bytesHeld.length > keep && this.used - this.wasted <= keep) this.makeRoom(0, keep);
  }

  /**
   * Compacts when half the buffer is dead text, else grows it by a quarter (not doubling: on a million
   * users the emails are ~30 MB, and a doubled buffer beside the old one at the first write after the
   * load would be 90 MB at once). The old buffer is garbage once copied.
   */
  private makeRoom(size: number, exactly?: number) {
    const live = this.used - this.wasted;
    const capacity = Math.max(1 << 16, Math.ceil((live + size) * 1.25));
    const next = Buffer.alloc(exactly ?? (this.wasted > live ? capacity : Math.max(capacity, Math.ceil(this.bytesHeld.length * 1.25) + size)));
    let at = 0;
    for (let slot = 0; slot < this.start.length; slot++) {
      const n = this.length[slot]!;
      if (n === 0) continue;
      this.bytesHeld.copy(next, at, this.start[slot], this.start[slot]! + n);
      this.start[slot] = at;
      at += n;
    }
    this.bytesHeld = next;
    this.used = at;
    this.wasted = 0;
  }

  bytes(): number {
    return this.bytesHeld.length + this.start.byteLength + this.length.byteLength;
  }
}

/**
 * Emails per slot: the part before the last '@' in a TextStore, the '@' and domain as a code into the
 * domains seen (one byte a slot). Most users share a few domains (every one of the bench's million is
 * `@example.com`: 12 of its 31.5 bytes). Past 255 domains, or without an '@', an email is held whole
 * (code 0, the empty domain); the text read back is always the one written.
 */
export class EmailStore {
  private readonly texts = new TextStore();
  private domainOf = new Uint8Array(1024);
  private readonly domains: string[] = [''];
  private readonly codes = new Map<string, number>([['', 0]]);
  /** A load's whole emails' bytes and count (reserve), until enough emails are seen to know the bytes a coded domain saves an email. */
  private expected = 0;
  private expectedEmails = 0;
  private seenWhole = 0;
  private seenText = 0;
  private seenEmails = 0;

  get(slot: number): string {
    return this.texts.get(slot) + this.domains[this.domainOf[slot]!]!;
  }

  set(slot: number, email: string): void {
    const at = email.lastIndexOf('@');
    let code = 0;
    if (at >= 0) {
      const domain = email.slice(at);
      code = this.codes.get(domain) ?? 0;
      if (code === 0 && this.domains.length <= 255) {
        code = this.domains.length;
        this.domains.push(domain);
        this.codes.set(domain, code);
      }
    }
    const text = code === 0 ? email : email.slice(0, at);
    if (slot >= this.domainOf.length) {
      let n = this.domainOf.length;
      while (n <= slot) n = grownCapacity(n);
      const grown = new Uint8Array(n);
      grown.set(this.domainOf);
      this.domainOf = grown;
    }
    this.domainOf[slot] = code;
    if (this.expected > 0) {
      this.seenWhole += email.length;
      this.seenText += text.length;
      this.seenEmails++;
      // The load's room for the texts once a thousand emails tell it (not the whole emails' bytes, which a
      // trim would then copy down): the whole bytes less the domain's bytes an email saves on average. Not
      // the texts' share of the bytes: the first emails of a load (the lowest ids) have the shortest parts
      // before the '@' (user.1@ ... user.1000000@), so a share taken from them fell short on the bench's
      // million (18.9 MB for 19.5): the buffer grew by a quarter at the end of the load and the trim copied
      // it down again, ~40 MB of buffers beside the load's peak.
      if (this.seenWhole >= 32_768) {
        const saved = (this.seenWhole - this.seenText) / this.seenEmails;
        this.texts.reserve(0, Math.ceil(1.02 * Math.max(0, this.expected - this.expectedEmails * saved)));
        this.expected = 0;
      }
    }
    this.texts.set(slot, text);
  }

  /** Room for `slots` slots and about `bytes` bytes of whole emails before a load. */
  reserve(slots: number, bytes: number): void {
    this.texts.reserve(slots, 0);
    if (slots > this.domainOf.length) {
      const grown = new Uint8Array(slots);
      grown.set(this.domainOf);
      this.domainOf = grown;
    }
    this.expected = bytes;
    this.expectedEmails = slots;
    this.seenWhole = 0;
    this.seenText = 0;
    this.seenEmails = 0;
  }

  clear(slot: number): void {
    this.texts.clear(slot);
  }

  trim(): void {
    this.expected = 0;
    this.texts.trim();
  }

  bytes(): number {
    return this.texts.bytes() + this.domainOf.byteLength + this.domains.reduce((sum, d) => sum + 2 * d.length + 64, 0);
  }
}
