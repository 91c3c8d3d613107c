import { describe, expect, it } from 'vitest';
import { FOLD_MAX_BYTES, KEY_SEPARATOR, SYMBOL_MARK, collationKey, fold, foldOfKey, storedName } from '../../src/db/collation.js';
import { FIRST_NAMES, LAST_NAMES } from '../../src/seed/users.seeder.js';
import { LANGUAGES } from '../../src/seed/random.js';

// The fold (src/db/collation.ts) against the Unicode Collation Algorithm at base strength as ICU
// implements it (Intl.Collator, root and Portuguese): on every name the seed writes it orders and
// equates as the collator does; where it differs by design, the differences are listed here.

const root = new Intl.Collator(undefined, { sensitivity: 'base' });
const pt = new Intl.Collator('pt', { sensitivity: 'base' });
const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);
const byFold = (a: string, b: string) => sign(Buffer.compare(Buffer.from(fold(a)), Buffer.from(fold(b))));

/** Pairs of `names` the fold orders otherwise than `collator`. */
function disagreements(names: readonly string[], collator: Intl.Collator): string[] {
  const out: string[] = [];
  for (let i = 0; i < names.length; i++) {
    for (let j = i + 1; j < names.length; j++) {
      const [a, b] = [names[i]!, names[j]!];
      if (byFold(a, b) !== sign(collator.compare(a, b))) out.push(`${a} | ${b}`);
    }
  }
  return out;
}

const COUNTRIES = [
  'Brazil',
  'Argentina',
  'United States',
  'Germany',
  'France',
  'Japan',
  'Portugal',
  'Spain',
  'Italy',
  'México',
  'Canada',
  'India',
  'Nigeria',
  'Poland',
  'Chile',
];
const SEED_WORDS = LANGUAGES.flatMap((l) => [l.article, ...l.adjectives, ...l.nouns]);
const PHRASES = LANGUAGES.flatMap((l) => l.adjectives.flatMap((a) => l.nouns.map((n) => (l.adjectiveFirst ? `${a} ${n}` : `${n} ${a}`))));

describe('the fold against Intl.Collator at base strength', () => {
  it('orders and equates every name the seed writes as the root and the Portuguese collation do', () => {
    const seeded = [...new Set([...FIRST_NAMES, ...LAST_NAMES, ...COUNTRIES, ...SEED_WORDS, ...PHRASES])];
    expect(seeded.length).toBeGreaterThan(500);
    // International names, with their accents: as the seed writes them (in NFC).
    expect(seeded.filter((name) => /\P{ASCII}/u.test(name)).length).toBeGreaterThan(150);
    expect(seeded.filter((name) => name !== name.normalize('NFC'))).toEqual([]);
    expect(disagreements(seeded, root)).toEqual([]);
    expect(disagreements(seeded, pt)).toEqual([]);
  });

  it('agrees on accents, case, letters read as others, ligatures and other scripts', () => {
    const names = [
      ...['Barry Wordsworth', 'Barão Vermelho', 'Alvaro Zeta', 'Álvaro Lins', 'Vinícius', 'Vinicius', 'VINÍCIUS', 'Mötley Crüe', 'Motörhead'],
      ...['Straße', 'Strasse', 'Strauss', 'Øster', 'Oster', 'Æon', 'Aeon', 'Œuvre', 'Oeuvre', 'Łódź', 'Lodz', 'Đorđe', 'Dorde', 'ħal', 'hal'],
      ...['ﬁnal', 'final', 'İstanbul', 'Istanbul', 'Ζωή', 'ζωη', 'Σοφία', 'ΣΟΦΙΑ', 'Ёлка', 'Елка', 'Ñandú', 'nandu', 'Ça va', 'Ca va', 'Þór', 'Thor'],
      ...['Åse', 'Ase', 'Ångström', 'angstrom', 'ǅemal', 'Džemal', 'Dzemal', 'a٣', 'a3', 'a9', 'E\u0301mile', 'Émile', 'emile', '½', '1/2'],
      ...['Guns N Roses', 'a b', 'ab', '1999', 'Abba', '🎸 Band', 'Band', 'x', 'X', ''],
    ];
    expect(disagreements(names, root)).toEqual([]);
  });

  it('differs where documented: the dotless ı and й fold to i and и, punctuation and symbols among themselves by code point', () => {
    // (docs/query-conventions.md and src/db/collation.ts say so.)
    const names = ['Işık', 'Isik', 'Йорк', 'Иорк', 'a-b', 'a_b', 'a.b', 'a:b', '¡Hola', '[Untitled]'];
    expect(disagreements(names, root)).toEqual(['Işık | Isik', 'Йорк | Иорк', 'a-b | a_b', 'a_b | a.b', 'a_b | a:b', 'a.b | a:b', '¡Hola | [Untitled]']);
  });
});

describe('collation keys', () => {
  it('are one for one text, composed or decomposed', () => {
    expect(collationKey('Émile'.normalize('NFD').normalize('NFC'))).toBe(collationKey('Émile'));
    expect(fold('E\u0301mile')).toBe(fold('Émile'));
    expect(storedName('  E\u0301mile ')).toEqual({ name: 'Émile', name_key: collationKey('Émile') });
  });

  it('hold the fold, U+0001 and the text; the fold holds no U+0001 and marks symbols with U+0002 only', () => {
    for (const text of ['Vinícius', 'AC/DC', 'a\u0001b\u0002c', '\u200dZ\u00ad', 'O’Brien 🎸']) {
      const key = collationKey(text);
      expect(key).toBe(`${fold(text)}${KEY_SEPARATOR}${text}`);
      expect(foldOfKey(key)).toBe(fold(text));
      expect(fold(text)).not.toContain(KEY_SEPARATOR);
      expect(fold(text).replace(new RegExp(`${SYMBOL_MARK}[^${SYMBOL_MARK}]`, 'gu'), '')).not.toContain(SYMBOL_MARK);
    }
    expect(fold('a\u0001b\u0002c')).toBe('abc');
    expect(fold('\u200dZ\u00ad')).toBe('z');
    expect(fold('AC/DC')).toBe(`ac${SYMBOL_MARK}/dc`);
  });

  it('fold a prefix to a prefix of the fold (the typeahead is one range of keys)', () => {
    for (const text of ['Vinícius Cantuária', 'Straße', 'ﬁnal', 'İstanbul', 'Ζωή', '🎸 Guitar', 'Ñandú']) {
      const chars = [...text];
      for (let n = 1; n <= chars.length; n++) expect(fold(text).startsWith(fold(chars.slice(0, n).join(''))), `${text} ${n}`).toBe(true);
    }
  });

  it('cut the fold at FOLD_MAX_BYTES, so that a key fits an index entry', () => {
    const long = '\ufdfa'.repeat(100); // each expands to a phrase of 18 characters
    expect(Buffer.byteLength(fold(long))).toBeLessThanOrEqual(FOLD_MAX_BYTES);
    expect(Buffer.byteLength(fold(long))).toBeGreaterThan(FOLD_MAX_BYTES - 4);
    expect(Buffer.byteLength(fold('😀'.repeat(200)))).toBeLessThanOrEqual(FOLD_MAX_BYTES);
  });
});
