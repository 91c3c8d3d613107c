import type { Db } from '../../db/database.js';
import { listPage, type ListPlan } from '../../query/index.js';
import type { CreateUserBody, PatchUserBody, User } from './users.schemas.js';

const COLUMNS = ['id', 'first_name', 'last_name', 'email', 'age', 'status', 'country'] as const;

/** Names and country are stored trimmed, as the catalogue stores names. */
function stored<T extends Partial<CreateUserBody>>(data: T): T {
  const out = { ...data };
  for (const key of ['first_name', 'last_name', 'country'] as const) {
    const v = out[key];
    if (typeof v === 'string') (out as Partial<CreateUserBody>)[key] = v.trim();
  }
  return out;
}

export async function insertUser(db: Db, data: CreateUserBody): Promise<User> {
  return db.insertInto('users').values(stored(data)).returning(COLUMNS).executeTakeFirstOrThrow();
}

export async function findUser(db: Db, id: number): Promise<User | undefined> {
  return db.selectFrom('users').select(COLUMNS).where('id', '=', id).executeTakeFirst();
}

export async function updateUser(db: Db, id: number, data: PatchUserBody): Promise<User | undefined> {
  return db
    .updateTable('users')
    .set((eb) => ({ ...stored(data), version: eb('version', '+', 1) }))
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirst();
}

export async function deleteUser(db: Db, id: number): Promise<boolean> {
  const result = await db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** One page of users and the total the filters select. */
export async function listUsers(db: Db, plan: ListPlan): Promise<{ rows: User[]; total: number }> {
  const base = () => db.selectFrom('users');
  return listPage(db, { key: 'users', params: [], base, rows: () => base().select(COLUMNS) }, plan);
}
