/** Ages the count tables have a cell for; a user outside (written by hand) is counted by a scan of the few such rows (users-index.ts oddAges). */
export const AGE_CELLS = 151;

// A count table by group (issue 37's walks): per group code, per attributes row (users-index.ts
// attrOf: a (country, status) pair) and per age cell, the users. The index holds one per name field
// (first or last name: a code per name) and one by id range (a code per range of ids): a walk in that
// order skips whole groups by their selected users (the count table by (country, status, age) cannot
// tell how many of a name or a range are selected), instead of reading the permutation from its start:
// the alias young-brazilians by first_name, page 200, passed about 400,000 entries; now it passes at
// most one name's group (about 28,000 on the 1M dataset).
//
// Held in the form of UsersIndex.below (users younger than each age), so that an age window is one
// difference: entry ((code * rowCap) + row) * (AGE_CELLS + 1) + a = users of that group and row with
// an age below a. Only ages with a cell are counted (the others are in UsersIndex.oddAges, tested
// slot by slot), and only users whose row is not ODD: a user past 255 (country, status) pairs drops
// the table for good (UsersIndex.count), as does a table that would grow past MAX_ENTRIES (a name
// dictionary of thousands of names: then the walk reads the permutation as before).

/** Most entries a table may hold (4 bytes each): 2 MB, about 13 times the 1M dataset's 36 first names by 30 rows. */
export const MAX_ENTRIES = 1 << 19;

/** Entries per (code, row). */
const width = () => AGE_CELLS + 1;

/**
 * `table`, a grid of `outer` by `inner` blocks of `block` entries (block (o, i) at (o * inner + i) *
 * block), copied into a grid of `outerCap` by `innerCap` blocks (each at least as large): every block
 * at its new place, the new ones zero.
 */
export function widenedGrid(table: Int32Array, outer: number, inner: number, outerCap: number, innerCap: number, block: number): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(outerCap * innerCap * block);
  for (let o = 0; o < outer; o++)
    for (let i = 0; i < inner; i++) {
      const from = (o * inner + i) * block;
      grown.set(table.subarray(from, from + block), (o * innerCap + i) * block);
    }
  return grown;
}

export class GroupCounts {
  private below: Int32Array;

  constructor(
    private codeCap: number,
    private rowCap: number,
  ) {
    this.below = new Int32Array(codeCap * rowCap * width());
  }

  /** Codes the table holds (a greater code counts no user). */
  get codes(): number {
    return this.codeCap;
  }

  /** Whether a table for that many codes and rows stays within MAX_ENTRIES. */
  static fits(codes: number, rows: number): boolean {
    return codes * rows * width() <= MAX_ENTRIES;
  }

  /**
   * Counts one user in (by 1) or out (by -1); false when the table cannot hold its code or row within
   * MAX_ENTRIES (the caller drops it).
   */
  add(code: number, row: number, age: number, by: 1 | -1): boolean {
    if (code >= this.codeCap || row >= this.rowCap) {
      const codeCap = code >= this.codeCap ? Math.max(code + 1, Math.ceil(this.codeCap * 1.25)) : this.codeCap;
      const rowCap = row >= this.rowCap ? Math.max(row + 1, Math.ceil(this.rowCap * 1.25)) : this.rowCap;
      if (!GroupCounts.fits(codeCap, rowCap)) return false;
      this.grow(codeCap, rowCap);
    }
    const w = width();
    const base = (code * this.rowCap + row) * w;
    for (let a = base + age + 1; a < base + w; a++) this.below[a] = this.below[a]! + by;
    return true;
  }

  /** Users of that code and row with an age in [low, high] (cells 0..AGE_CELLS - 1, low <= high). */
  window(code: number, row: number, low: number, high: number): number {
    if (code >= this.codeCap || row >= this.rowCap) return 0;
    const base = (code * this.rowCap + row) * width();
    return this.below[base + high + 1]! - this.below[base + low]!;
  }

  /**
   * Per code below `codes`, the users of the given rows with an age in [low, high] (window summed over
   * the rows, in one pass over the table: a walk sums 64 id ranges by 30 rows a request).
   */
  sums(codes: number, rows: readonly number[], low: number, high: number): Int32Array {
    const out = new Int32Array(codes);
    const { below, rowCap } = this;
    const w = width();
    const held = Math.min(codes, this.codeCap);
    for (let code = 0; code < held; code++) {
      let n = 0;
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i]!;
        if (r >= rowCap) continue;
        const base = (code * rowCap + r) * w;
        n += below[base + high + 1]! - below[base + low]!;
      }
      out[code] = n;
    }
    return out;
  }

  /**
   * Builds the table in one pass over the users (the load): `each` calls back with every counted
   * user's code, row and age; counted per cell, then each (code, row) summed into its `below` form.
   */
  fill(each: (count: (code: number, row: number, age: number) => void) => void): void {
    const below = this.below;
    const w = width();
    each((code, row, age) => {
      const at = (code * this.rowCap + row) * w + age + 1;
      below[at] = below[at]! + 1;
    });
    for (let base = 0; base < below.length; base += w) for (let a = base + 1; a < base + w; a++) below[a] = below[a]! + below[a - 1]!;
  }

  /** Per (group text, row, age), the users counted (tests: a table kept by writes against a fresh one). */
  cells(name: (code: number) => string, row: (row: number) => string): Map<string, number> {
    const out = new Map<string, number>();
    for (let code = 0; code < this.codeCap; code++)
      for (let r = 0; r < this.rowCap; r++)
        for (let age = 0; age < AGE_CELLS; age++) {
          const n = this.window(code, r, age, age);
          if (n === 0) continue;
          const k = `${name(code)}|${row(r)}|${age}`;
          out.set(k, (out.get(k) ?? 0) + n);
        }
    return out;
  }

  bytes(): number {
    return this.below.byteLength;
  }

  private grow(codeCap: number, rowCap: number): void {
    this.below = widenedGrid(this.below, this.codeCap, this.rowCap, codeCap, rowCap, width());
    this.codeCap = codeCap;
    this.rowCap = rowCap;
  }
}
