// What a resource's table module states (src/modules/<x>/<x>.table.ts), once for every reader: the
// repositories (insert, select, update, RETURNING), embeds, import and export, the event contract
// (modules/events/events.contract.ts), the Kysely types (db/database.ts). Data only: a table module
// imports nothing of the service, so every layer above may read it (test/platform/imports.test.ts).
// Migrations write out what they need of it (a migration never changes what it does), and
// test/db/table-modules.test.ts and test/events/contract.test.ts hold the migrated database to it.

export interface TableDefinition {
  /** The table. */
  table: string;
  /** The column naming the parent row, for a resource that lives under another. */
  parent?: string;
  /** What the resource is: what GET answers, an embed shows, an event carries and export writes, in this order. */
  fields: readonly string[];
  /** Of those, the names: each stored with its collation key `<field>_key` beside it (db/collation.ts). */
  names: readonly string[];
  /** Its events: `<type>.created|updated|deleted`; a deletion carries the `deleted` fields only. */
  event: { type: string; deleted: readonly string[] };
}

/**
 * The definition with `plain`: the fields stored as sent (neither the id nor a name), which the
 * repositories copy from a create or update body as they are.
 */
export function defineTable<const T extends TableDefinition>(def: T): T & { plain: readonly Exclude<T['fields'][number], 'id' | T['names'][number]>[] } {
  const plain = def.fields.filter((f) => f !== 'id' && !def.names.includes(f)) as Exclude<T['fields'][number], 'id' | T['names'][number]>[];
  return { ...def, plain };
}
