import { collationKey, fold } from '../../src/db/collation.js';
import type { Client } from '../helpers.js';

export interface SeedUser {
  id: number;
  first_name: string;
  last_name: string;
  email: string;
  age: number;
  status: 'active' | 'inactive';
  country: string;
}

/** A small, varied population: mixed-case names and countries, equal ages, both statuses. */
export const PEOPLE: Omit<SeedUser, 'id' | 'email'>[] = [
  { first_name: 'Ana', last_name: 'Souza', age: 25, status: 'active', country: 'Brazil' },
  { first_name: 'bruno', last_name: 'Lima', age: 40, status: 'active', country: 'brazil' },
  { first_name: 'Carla', last_name: 'Diaz', age: 30, status: 'inactive', country: 'Argentina' },
  { first_name: 'Dan', last_name: 'Evans', age: 19, status: 'active', country: 'BRAZIL' },
  { first_name: 'eva', last_name: 'Souza', age: 30, status: 'active', country: 'Chile' },
  { first_name: 'Ana', last_name: 'Lopez', age: 17, status: 'active', country: 'Brazil' },
  { first_name: 'Felipe', last_name: 'Rocha', age: 35, status: 'active', country: 'Brazil' },
  { first_name: 'Gil', last_name: 'Costa', age: 34, status: 'inactive', country: 'brazil' },
  { first_name: 'Hugo', last_name: 'Diaz', age: 62, status: 'active', country: 'argentina' },
];

export async function seedUsers(api: Client, people = PEOPLE, tag = 'u'): Promise<SeedUser[]> {
  const out: SeedUser[] = [];
  for (const [i, p] of people.entries()) {
    const res = await api.post('/users', { ...p, email: `${tag}${i}@example.com` });
    if (res.statusCode !== 201) throw new Error(`seed: ${res.statusCode} ${res.body}`);
    out.push(res.json<SeedUser>());
  }
  return out;
}

/** Parses an RFC 8288 Link header into rel -> URL. */
export function links(header: string | string[] | number | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of String(header ?? '').split(/,\s*(?=<)/)) {
    const m = /^<([^>]*)>;\s*rel="([^"]+)"$/.exec(part.trim());
    if (m) out[m[2]!] = m[1]!;
  }
  return out;
}

export const ids = (body: unknown) => (body as { id: number }[]).map((u) => u.id);

export const SORTABLE = ['id', 'first_name', 'last_name', 'age', 'status', 'country'] as const;
export type SortField = (typeof SORTABLE)[number];

/**
 * Text as the lists compare it (src/db/collation.ts, whose fold is checked against the Unicode
 * collation in test/db/collation.test.ts): names sort by their collation keys, byte by byte (the
 * fold, accents and case ignored, then the exact text); other text by code point.
 */
export const byCodePoint = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
export const byName = (a: string, b: string) => byCodePoint(collationKey(a.normalize('NFC')), collationKey(b.normalize('NFC')));
/** Whether `name` starts with `prefix`, accents and case ignored. */
export const startsWith = (name: string, prefix: string) => fold(name.normalize('NFC')).startsWith(fold(prefix.normalize('NFC')));
/** Whether two texts are one, accents and case ignored (lives_in). */
export const sameFold = (a: string, b: string) => fold(a.normalize('NFC')) === fold(b.normalize('NFC'));

/**
 * The oracle: what GET /users must answer for these filters and sort, computed in memory (names by
 * their collation keys, ties by id ascending).
 */
export function expectedUsers(users: readonly SeedUser[], f: Record<string, unknown>, sort: readonly { field: SortField; dir: string }[]): SeedUser[] {
  const rows = users.filter(
    (u) =>
      (f.status === undefined || u.status === f.status) &&
      (f.older_than === undefined || u.age > (f.older_than as number)) &&
      (f.younger_than === undefined || u.age < (f.younger_than as number)) &&
      (f.lives_in === undefined || (f.lives_in as string[]).some((c) => sameFold(c, u.country))) &&
      (f.first_name === undefined || u.first_name === (f.first_name as string).normalize('NFC')) &&
      (f.last_name === undefined || u.last_name === (f.last_name as string).normalize('NFC')) &&
      (f.first_name_starts_with === undefined || startsWith(u.first_name, f.first_name_starts_with as string)) &&
      (f.last_name_starts_with === undefined || startsWith(u.last_name, f.last_name_starts_with as string)),
  );
  return rows.sort((a, b) => {
    for (const s of sort) {
      const x = a[s.field];
      const y = b[s.field];
      const order = typeof x === 'number' ? x - (y as number) : s.field === 'status' ? byCodePoint(x, String(y)) : byName(x, String(y));
      if (order !== 0) return order * (s.dir === 'desc' ? -1 : 1);
    }
    return a.id - b.id;
  });
}

/** The query string of a filter record as the property tests draw it (lists as [a,b]). */
export function filterParams(filters: Record<string, unknown>): string[] {
  return Object.entries(filters).map(([k, v]) => `${k}=${Array.isArray(v) ? `[${v.join(',')}]` : String(v)}`);
}
