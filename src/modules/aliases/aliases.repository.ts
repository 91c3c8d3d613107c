import type { Db } from '../../db/database.js';
import { isUniqueViolation } from '../../errors/index.js';
import type { Alias } from './aliases.schemas.js';

export async function listAliases(db: Db): Promise<Alias[]> {
  return db.selectFrom('aliases').select(['name', 'collection', 'query']).orderBy('collection').orderBy('name').execute();
}

export async function getAlias(db: Db, collection: string, name: string): Promise<Alias | undefined> {
  return db.selectFrom('aliases').select(['name', 'collection', 'query']).where('collection', '=', collection).where('name', '=', name).executeTakeFirst();
}

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
