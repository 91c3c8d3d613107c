// Text as people write it, compared the same way on SQLite and PostgreSQL.
//
// Stored text is Unicode NFC (one text, one value: "é" sent as e + U+0301 is stored as U+00E9). A name
// field is sorted, prefix-matched and compared through its collation key, a column kept beside the
// text in the same statement that writes it (`<column>_key`; the users' country also has its fold,
// `country_fold`). The key is `fold(text) + U+0001 + text`, compared byte by byte on both backends
// (SQLite's BINARY; PostgreSQL's collation "binary", locale C): so names sort by their fold first,
// accents and case ignored, then by the exact text (code points), and a list's statement then breaks
// the remaining ties by id. Neither backend can run this code (better-sqlite3 has no custom collation,
// and the order must be one on both), so the key is computed here, by every writer: the repositories,
// seed, import and the migration that filled the existing rows (20261126T0100).
//
// The fold approximates the Unicode Collation Algorithm's root order at base (primary) strength, as
// Intl.Collator(undefined, { sensitivity: 'base' }) compares (test/db/collation.test.ts checks the
// seeded names against it):
// - compatibility decomposition (NFKD): ligatures and variants become their letters (ﬁ: fi, ½: 1⁄2,
//   full-width forms: ASCII), accented letters a letter and its marks;
// - the marks the root order ignores at base strength are dropped: the combining diacritics, Greek,
//   Cyrillic, Hebrew and Arabic marks, kana voicing marks, variation selectors (marks that are letters
//   of their own in Indic scripts are kept);
// - lower case, and the letters the root order reads as others: ß ss, æ ae, œ oe, ø o, đ d, ð d, ł l,
//   ħ h, final ς σ;
// - decimal digits of every script read as 0-9;
// - control and format characters (zero-width joiner, soft hyphen, direction marks) are dropped;
// - every other character that is neither a letter, a digit nor a mark (spaces, punctuation,
//   symbols, emoji) is kept behind U+0002, so that all of them sort before digits and digits before
//   letters, as in the root order ("¡Hola" and "[Untitled]" before "1999", before "Abba").
// Where it differs from the root order: punctuation and symbols compare among themselves by code point
// (the root order has its own sequence: "_" before "-" before ","); scripts follow each other by code
// point (Latin, Greek, Cyrillic, Armenian, Hebrew, Arabic..., close to the root order's script order);
// and by choice the Turkish dotless ı folds to i and the
// Cyrillic й to и (the root order keeps them letters of their own, right after i and и): a person
// typing without those letters finds "Işık" with "isik". The fold is at most FOLD_MAX_BYTES of UTF-8,
// so that a key fits in an index entry (PostgreSQL's B-tree entries are at most 2,704 bytes, and a users
// index holds several keys): texts whose folds agree that far are ordered by their exact text.

/** Between the fold and the exact text in a key: below every character a fold holds. */
export const KEY_SEPARATOR = '\u0001';
/** Before each space, punctuation mark or symbol in a fold: below every digit and letter. */
export const SYMBOL_MARK = '\u0002';
/** The longest fold, in UTF-8 bytes (see above). */
export const FOLD_MAX_BYTES = 512;

/** Letters (after lower-casing) that the root order reads as other letters at base strength. */
const READ_AS: Readonly<Record<string, string>> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  ł: 'l',
  ħ: 'h',
  ı: 'i',
  ς: 'σ',
};

/** Blocks whose combining marks (category Mn or Me) the root order ignores at base strength, by code point. */
// prettier-ignore
const IGNORED_MARK_BLOCKS: readonly (readonly [number, number])[] = [
  [0x0300, 0x0362], [0x0483, 0x0489], [0x0591, 0x05c7], [0x0610, 0x061a], [0x064b, 0x065f], [0x0670, 0x0670],
  [0x06d6, 0x06ed], [0x1ab0, 0x1aff], [0x1dc0, 0x1dff], [0x20d0, 0x20ff], [0x3099, 0x309a], [0xfe00, 0xfe0f],
  [0xfe20, 0xfe2f], [0xe0100, 0xe01ef],
];
const inIgnoredBlock = (cp: number) => IGNORED_MARK_BLOCKS.some(([low, high]) => cp >= low && cp <= high);
const MARK = /^[\p{Mn}\p{Me}]$/u;
const DROPPED = /^[\p{Cc}\p{Cf}]$/u;
/** Kept as they are: letters, digits, marks, and code points no symbol is (private use, unassigned: the root order puts them after every letter). */
const KEPT = /^[\p{L}\p{N}\p{M}\p{Co}\p{Cn}\p{Cs}]$/u;
const DIGIT = /^\p{Nd}$/u;

/**
 * A decimal digit of any script as 0-9 (the root order reads ٣ as 3): Unicode's decimal digits come
 * in runs of ten consecutive code points, zero first.
 */
function digitValue(digit: string): string {
  const cp = digit.codePointAt(0)!;
  let zero = cp;
  while (zero > 0 && DIGIT.test(String.fromCodePoint(zero - 1))) zero--;
  return String((cp - zero) % 10);
}

/** The fold of one character that is not ASCII (cached: a catalogue has a few hundred distinct ones). */
const foldedChars = new Map<string, string>();

function foldChar(ch: string): string {
  let out = foldedChars.get(ch);
  if (out !== undefined) return out;
  out = '';
  for (const part of ch.normalize('NFKD')) {
    if (DROPPED.test(part) || (MARK.test(part) && inIgnoredBlock(part.codePointAt(0)!))) continue;
    if (DIGIT.test(part)) {
      out += digitValue(part);
      continue;
    }
    for (const lower of part.toLowerCase()) {
      const read = READ_AS[lower];
      if (read !== undefined) out += read;
      else if (KEPT.test(lower)) out += lower;
      else out += SYMBOL_MARK + lower;
    }
  }
  if (foldedChars.size < 65_536) foldedChars.set(ch, out);
  return out;
}

/** `text` cut to at most `max` bytes of UTF-8, at a character boundary. */
function cutToBytes(text: string, max: number): string {
  if (text.length * 3 <= max) return text; // a UTF-16 unit is at most 3 bytes of UTF-8
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (bytes > max) break;
    end += ch.length;
  }
  return text.slice(0, end);
}

/**
 * The base-strength fold of a text (see the top of this file): what sorting compares first, what a
 * prefix filter compares (`vini` starts `Vinícius`), what `lives_in` compares. A function of the
 * text's canonical form: decomposed and composed input fold alike.
 */
export function fold(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      if (code >= 0x61 && code <= 0x7a) out += text[i];
      else if (code >= 0x41 && code <= 0x5a) out += String.fromCharCode(code + 32);
      else if (code >= 0x30 && code <= 0x39) out += text[i];
      else if (code >= 0x20 && code < 0x7f) out += SYMBOL_MARK + text[i];
      continue;
    }
    const cp = text.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    if (cp > 0xffff) i++;
    out += foldChar(ch);
  }
  return cutToBytes(out, FOLD_MAX_BYTES);
}

/** Text in its canonical composed form (NFC), as it is stored. */
export const nfc = (text: string): string => text.normalize('NFC');

/** The collation key of stored text (NFC): its fold, U+0001, the text. Byte order is the list order. */
export function collationKey(text: string): string {
  return fold(text) + KEY_SEPARATOR + text;
}

/** The fold part of a collation key. */
export function foldOfKey(key: string): string {
  const at = key.indexOf(KEY_SEPARATOR);
  return at < 0 ? key : key.slice(0, at);
}

/** A catalogue name as stored: trimmed, NFC, with its key. */
export function storedName(name: string): { name: string; name_key: string } {
  const text = nfc(name.trim());
  return { name: text, name_key: collationKey(text) };
}

/**
 * SQL (the same text on both backends) for the fold part of a key column, without the marks before
 * symbols: what the search indexes hold (migration 20261126T0100), so that `vini` finds `Vinícius`
 * on both. `column` is a declared identifier, never a request's.
 */
export function searchedFoldSql(column: string, pg: boolean): string {
  const fold = pg ? `split_part(${column}, chr(1), 1)` : `substr(${column}, 1, instr(${column}, char(1)) - 1)`;
  return `replace(${fold}, ${pg ? 'chr(2)' : 'char(2)'}, '')`;
}
