import { storedName } from '../db/collation.js';

// A catalogue resource's body as its table stores it (artists, albums, songs: the table module's
// `plain` fields as sent, the name trimmed, in NFC, with its collation key): the one mapping
// every writer of the catalogue uses (the repositories, import).

/** Every field of a create body (or an import record), as stored. */
export function storedRow<T extends { name: string }, P extends keyof T & string>(
  def: { plain: readonly P[] },
  data: T,
): { name: string; name_key: string } & Pick<T, P> {
  const out: Record<string, unknown> = storedName(data.name);
  for (const field of def.plain) out[field] = data[field];
  return out as { name: string; name_key: string } & Pick<T, P>;
}

/** The fields a PATCH sent, as stored (the same rules); the others left out. */
export function storedPatch<T extends { name?: string }, P extends keyof T & string>(
  def: { plain: readonly P[] },
  patch: T,
): Partial<{ name: string; name_key: string } & Pick<T, P>> {
  const out: Record<string, unknown> = patch.name !== undefined ? storedName(patch.name) : {};
  for (const field of def.plain) if (patch[field] !== undefined) out[field] = patch[field];
  return out as Partial<{ name: string; name_key: string } & Pick<T, P>>;
}
