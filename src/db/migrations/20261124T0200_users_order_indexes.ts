import { sql, type Kysely } from 'kysely';

// Every sortable field of users gets an index in its order, both directions with ties by id
// ascending (a descending sort reads `field desc, id`), carrying the filtered columns (status, age,
// folded country) so a filter is checked in the index without visiting the row. A page read in sort
// order then walks index entries and stops at the page (query/statements.ts chooses that way when
// the exact total says it is the cheaper one); id order is the table's own.
//
// They replace the single-direction (field, id) indexes, which they contain. The same SQL on both
// backends: ciKey's `lower(col collate "binary")` text, which the planner needs to match.

const FOLDED = (col: string) => `lower(${col} collate "binary")`;
const COUNTRY = FOLDED('country');

export const USERS_ORDER_INDEXES = {
  first_name: [`${FOLDED('first_name')}`, `id, status, age, ${COUNTRY}`],
  last_name: [`${FOLDED('last_name')}`, `id, status, age, ${COUNTRY}`],
  age: ['age', `id, status, ${COUNTRY}`],
  status: [FOLDED('status'), `id, age, ${COUNTRY}`],
  country: [COUNTRY, 'id, status, age'],
} as const;

const REPLACED = {
  users_first_name_idx: `${FOLDED('first_name')}, id`,
  users_last_name_idx: `${FOLDED('last_name')}, id`,
  users_age_idx: 'age, id',
};

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [field, [key, rest]] of Object.entries(USERS_ORDER_INDEXES)) {
    await db.schema
      .createIndex(`users_${field}_asc`)
      .on('users')
      .expression(sql.raw(`${key}, ${rest}`))
      .execute();
    await db.schema
      .createIndex(`users_${field}_desc`)
      .on('users')
      .expression(sql.raw(`${key} desc, ${rest}`))
      .execute();
  }
  for (const name of Object.keys(REPLACED)) await db.schema.dropIndex(name).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [name, columns] of Object.entries(REPLACED)) await db.schema.createIndex(name).on('users').expression(sql.raw(columns)).execute();
  for (const field of Object.keys(USERS_ORDER_INDEXES)) {
    await db.schema.dropIndex(`users_${field}_asc`).execute();
    await db.schema.dropIndex(`users_${field}_desc`).execute();
  }
}
