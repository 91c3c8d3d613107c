import type { Db } from '../../db/database.js';
import { HeldRows } from '../../db/arrivals.js';
import type { TableVersions } from '../../db/table-stamps.js';
import { isUniqueViolation } from '../../errors/index.js';
import { listPage, type ListPlan, type ListResult } from '../../query/index.js';
import type { Alias } from './aliases.schemas.js';
import { ALIASES } from './aliases.table.js';

/** One page of the aliases (query/ conventions) and their total. */
export async function pageAliases(db: Db, plan: ListPlan): Promise<ListResult<Alias>> {
  const base = () => db.selectFrom('aliases');
  const { rows, ...found } = await listPage(
    db,
    { key: 'aliases', table: 'aliases', values: {}, base, rows: () => base().select(['id', ...ALIASES.fields]) },
    plan,
  );
  return { rows: rows.map(({ id: _id, ...alias }) => alias), ...found };
}

export async function getAlias(db: Db, collection: string, name: string, versions?: TableVersions): Promise<Alias | undefined> {
  const read = () => db.selectFrom('aliases').select(ALIASES.fields).where('collection', '=', collection).where('name', '=', name).executeTakeFirst();
  // `versions` read after the request arrived (db/arrivals.ts): an alias held under them is the row.
  return versions ? heldAliases.get(db, `${collection}\u0000${name}`, versions, read) : read();
}

/** Aliases by collection and name, while the versions of the tables their read touched are those read before it. */
const heldAliases = new HeldRows<Alias>();

/** Creates or replaces; true when it was created. Two concurrent creators: one inserts, one replaces. */
export async function putAlias(db: Db, alias: Alias): Promise<boolean> {
  try {
    await db.insertInto('aliases').values(alias).execute();
    return true;
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
  }
  await db.updateTable('aliases').set({ query: alias.query }).where('collection', '=', alias.collection).where('name', '=', alias.name).execute();
  return false;
}

export async function removeAlias(db: Db, collection: string, name: string): Promise<boolean> {
  const result = await db.deleteFrom('aliases').where('collection', '=', collection).where('name', '=', name).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
