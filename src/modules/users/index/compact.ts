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

/** A TextStore length byte that says: the length is in the `long` map. */
const LONG = 255;

/** Slots per block of a TextStore: a block's first text's offset is held, the others' are summed from their lengths. */
const BLOCK = 32;

/**
 * Text per slot as UTF-8 in one growing buffer, about 1.1 bytes a slot besides the texts (the bench's
 * million emails' parts before the '@' are under 30 bytes; an offset and a length of 4 bytes each were
 * 8 MB of a worker's 200, issue 37):
 * - a slot's length is one byte (`length`, 0 for no text); LONG there: the length is in `long` (a
 *   hand-written row's email);
 * - a slot's text is at its home: the texts of a block of BLOCK slots lie one after the other in slot
 *   order from `blockStart`, so a slot's offset is its block's start plus the lengths before it in the
 *   block (at most BLOCK - 1 bytes read). A load writes slots in order, so every text is at its home;
 * - a text that cannot be there (rewritten with another length, a slot written after its block's later
 *   texts) is appended and its place kept in `moved` (its home bytes dead, their length kept for the
 *   sums); cleared, a slot with a home text is moved to no text. A compaction writes every text at its
 *   home again.
 */
export class TextStore {
  private bytesHeld = Buffer.alloc(1 << 16);
  private used = 0;
  private wasted = 0;
  private length = new Uint8Array(1024);
  private blockStart = new Int32Array(1024 / BLOCK);
  private readonly long = new Map<number, number>();
  /** Slots whose text is not at its home: [offset, length]. */
  private readonly moved = new Map<number, [number, number]>();
  /** The slot whose home text was appended last, and where the buffer ended then (-1: none). */
  private tailSlot = -1;
  private tailEnd = -1;

  /** The byte length of the slot's home text (0: none). */
  private homeLength(slot: number): number {
    const n = this.length[slot]!;
    return n === LONG ? this.long.get(slot)! : n;
  }

  private setHomeLength(slot: number, n: number): void {
    if (this.length[slot] === LONG) this.long.delete(slot);
    if (n >= LONG) this.long.set(slot, n);
    this.length[slot] = Math.min(n, LONG);
  }

  /** The offset of the slot's home. */
  private home(slot: number): number {
    const first = slot - (slot % BLOCK);
    let at = this.blockStart[first / BLOCK]!;
    for (let s = first; s < slot; s++) {
      const n = this.length[s]!;
      at += n === LONG ? this.long.get(s)! : n;
    }
    return at;
  }

  /** The slot's text's [offset, length]. */
  private place(slot: number): [number, number] {
    const m = this.moved.size > 0 ? this.moved.get(slot) : undefined;
    return m ?? [this.home(slot), this.homeLength(slot)];
  }

  get(slot: number): string {
    if (slot >= this.length.length) return '';
    const [at, n] = this.place(slot);
    return n === 0 ? '' : this.bytesHeld.toString('utf8', at, at + n);
  }

  set(slot: number, text: string): void {
    if (slot >= this.length.length) {
      let n = this.length.length;
      while (n <= slot) n = grownCapacity(n);
      this.resize(n);
    }
    const size = Buffer.byteLength(text, 'utf8');
    const [at, n] = this.place(slot);
    const moved = this.moved.has(slot);
    // The same length: written over in place (its bytes are its own).
    if (n === size && (moved || n > 0)) {
      this.bytesHeld.write(text, at, 'utf8');
      return;
    }
    this.wasted += n;
    if (this.used + size > this.bytesHeld.length) {
      // Compaction writes this slot's old text too: it is no text while it runs.
      if (moved || n > 0) this.moved.set(slot, [0, 0]);
      this.wasted -= n;
      this.makeRoom(size);
      return this.set(slot, text);
    }
    const offset = this.used;
    this.bytesHeld.write(text, offset, 'utf8');
    this.used += size;
    if (!moved && n === 0 && this.canBeHome(slot, offset)) {
      this.setHomeLength(slot, size);
      if (size > 0) {
        this.tailSlot = slot;
        this.tailEnd = this.used;
      }
    } else {
      this.moved.set(slot, [offset, size]);
      // A Map entry a moved text (~100 bytes): compacted (every text home again) before they add up to MBs.
      if (this.moved.size > Math.max(1024, this.length.length >>> 6)) this.makeRoom(0, this.bytesHeld.length);
    }
  }

  /**
   * Whether a slot with no text, its text appended at `offset` (the buffer's end), is at its home there:
   * right after the last home text appended, of an earlier slot of its block (a load); or first of a
   * block that has no home text (its start set to it).
   */
  private canBeHome(slot: number, offset: number): boolean {
    const first = slot - (slot % BLOCK);
    if (offset === this.tailEnd && this.tailSlot >= first && this.tailSlot < slot) return true;
    for (let s = first; s < first + BLOCK; s++) if (this.length[s] !== 0 || this.moved.has(s)) return false;
    this.blockStart[first / BLOCK] = offset;
    return true;
  }

  /** Room for `slots` slots and `bytes` bytes of text before a load, so the buffer is not grown (copied) as it goes. */
  reserve(slots: number, bytes: number): void {
    if (slots > this.length.length) this.resize(slots);
    if (this.used + bytes > this.bytesHeld.length) this.makeRoom(0, Math.max(1 << 16, this.used - this.wasted + bytes));
  }

  clear(slot: number): void {
    if (slot >= this.length.length) return;
    const [, n] = this.place(slot);
    this.wasted += n;
    if (this.moved.has(slot) || n > 0) this.moved.set(slot, [0, 0]);
  }

  /** The per-slot arrays at `slots` entries (a whole number of blocks). */
  private resize(slots: number): void {
    const blocks = Math.ceil(slots / BLOCK);
    const length = new Uint8Array(blocks * BLOCK);
    length.set(this.length);
    const blockStart = new Int32Array(blocks);
    blockStart.set(this.blockStart);
    this.length = length;
    this.blockStart = blockStart;
  }

  /** Drops the buffer's free room beyond an eighth of what it holds (after a load, which grew it as it went). */
  trim(): void {
    const keep = Math.max(1 << 16, Math.ceil((this.used - this.wasted) * 1.125));
    if (this.bytesHeld.length > keep && this.used - this.wasted <= keep) this.makeRoom(0, keep);
  }

  /**
   * Compacts when half the buffer is dead text, else grows it by a quarter (not doubling: on a million
   * users the emails are ~30 MB, and a doubled buffer beside the old one at the first write after the
   * load would be 90 MB at once). Either way every text is written at its home. The old buffer is
   * garbage once copied.
   */
  private makeRoom(size: number, exactly?: number) {
    const live = this.used - this.wasted;
    const capacity = Math.max(1 << 16, Math.ceil((live + size) * 1.25));
    const next = Buffer.alloc(exactly ?? (this.wasted > live ? capacity : Math.max(capacity, Math.ceil(this.bytesHeld.length * 1.25) + size)));
    let to = 0;
    let last = -1;
    for (let first = 0; first < this.length.length; first += BLOCK) {
      let from = this.blockStart[first / BLOCK]!;
      this.blockStart[first / BLOCK] = to;
      for (let slot = first; slot < first + BLOCK; slot++) {
        const n = this.homeLength(slot);
        const m = this.moved.size > 0 ? this.moved.get(slot) : undefined;
        const [at, size] = m ?? [from, n];
        from += n;
        if (size > 0) {
          this.bytesHeld.copy(next, to, at, at + size);
          last = slot;
        }
        to += size;
        this.setHomeLength(slot, size);
      }
    }
    this.moved.clear();
    this.bytesHeld = next;
    this.used = to;
    this.wasted = 0;
    // The last text is at the buffer's end: a load's next slots go on at their homes after it.
    this.tailSlot = last;
    this.tailEnd = last >= 0 ? to : -1;
  }

  bytes(): number {
    return this.bytesHeld.length + this.length.byteLength + this.blockStart.byteLength + (this.long.size + this.moved.size) * 64;
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
    // A user written again with the email it has (a PATCH of its status or age, every catch-up's
    // rewrite of a row): nothing appended. Each rewrite left its old text dead in the buffer, and the
    // load's 2% room filled after ~20,000 PATCHes: the buffer then grew by a quarter (~25 MB at 1M
    // users, beside the old one until collected) under load.
    if (this.expected === 0 && slot < this.domainOf.length && this.get(slot) === email) return;
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
