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
    out.push(res.json() as SeedUser);
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
