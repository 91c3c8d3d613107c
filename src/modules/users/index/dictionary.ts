// A dictionary of text values (names, countries, statuses) as small integer codes, with a rank per
// code that orders the codes as the SQL orders their stored sort text: byte by byte (UTF-8, which is
// code point order), the collation "binary" both backends compare keys and status in. Equal sort
// texts share a rank, so rows with them are ordered by id, as in SQL.

/** Code point order of two strings (what comparing their UTF-8 bytes gives), without encoding them. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // UTF-16 order differs from code point order only between a surrogate and U+E000..U+FFFF.
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

export class Dictionary {
  /** Per code: the identity it was made for, the sort text, and the text shown. */
  readonly sortText: string[] = [];
  readonly shown: string[] = [];
  private readonly codes = new Map<string, number>();
  /** Distinct sort texts in order; rank of a code = position of its sort text here. */
  private readonly sorted: string[] = [];
  private ranks = new Int32Array(16);

  get size(): number {
    return this.sortText.length;
  }

  /** Distinct sort texts: ranks run from 0 to this minus one. */
  get rankCount(): number {
    return this.sorted.length;
  }

  rank(code: number): number {
    return this.ranks[code]!;
  }

  /** Per code, its rank (as rank(); read only, and only until the next code() call: it may be replaced then). */
  get rankTable(): Int32Array {
    return this.ranks;
  }

  /** The code of an identity, or undefined. */
  find(identity: string): number | undefined {
    return this.codes.get(identity);
  }

  /**
   * The code of `identity` (made when new, ranked by `sortText`). A new sort text moves the ranks
   * after it up by one: the order of existing codes never changes, so sorted structures stay sorted.
   */
  code(identity: string, sortText: string, shown: string): number {
    const found = this.codes.get(identity);
    if (found !== undefined) return found;
    const code = this.sortText.length;
    this.sortText.push(sortText);
    this.shown.push(shown);
    this.codes.set(identity, code);
    if (code >= this.ranks.length) {
      const grown = new Int32Array(this.ranks.length * 2);
      grown.set(this.ranks);
      this.ranks = grown;
    }
    const lo = this.sortedPosition(sortText);
    if (lo < this.sorted.length && this.sorted[lo] === sortText) {
      this.ranks[code] = lo;
    } else {
      this.sorted.splice(lo, 0, sortText);
      for (let c = 0; c < code; c++) if (this.ranks[c]! >= lo) this.ranks[c] = this.ranks[c]! + 1;
      this.ranks[code] = lo;
    }
    return code;
  }

  /**
   * Where a sort text falls among the ranks: its rank when some code has it, else halfway between the
   * ranks around it (a cursor may hold the key of a name no user has any more).
   */
  rankOfSortText(sortText: string): number {
    const lo = this.sortedPosition(sortText);
    return lo < this.sorted.length && this.sorted[lo] === sortText ? lo : lo - 0.5;
  }

  /** The first position in `sorted` whose text is not below `sortText` (by code points): a binary search. */
  private sortedPosition(sortText: string): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareCodePoints(this.sorted[mid]!, sortText) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Approximate bytes held (strings as UTF-16 plus object overhead). */
  bytes(): number {
    let chars = 0;
    for (let c = 0; c < this.sortText.length; c++) chars += this.sortText[c]!.length + this.shown[c]!.length;
    return chars * 2 * 2 + this.sortText.length * 64 + this.ranks.byteLength;
  }
}
