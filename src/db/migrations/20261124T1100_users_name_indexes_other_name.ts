import { sql, type Kysely } from 'kysely';

// The name order indexes (20261124T0200) also carry the other name, folded. A sort led by a name and
// then the other one (first_name:asc,last_name:desc) sorts each first name's users by last name:
// thirty thousand of them on the seeded million, for any page in that group. The index holds the
// first key's order and the filtered columns; without the second key each entry visited its row
// (17 ms for a first page, where age as the second key, which the index holds, takes 3 ms). A first
// name prefix sorted by last name likewise walks the last name index and checks the prefix in it.
// Same names, same order (the appended column only widens the entries); the same SQL on both backends.

const FOLDED = (col: string) => `lower(${col} collate "binary")`;
const COUNTRY = FOLDED('country');
const OTHER = { first_name: 'last_name', last_name: 'first_name' } as const;

async function rebuild(db: Kysely<unknown>, withOther: boolean): Promise<void> {
  for (const [field, other] of Object.entries(OTHER)) {
    for (const direction of ['asc', 'desc'] as const) {
      const name = `users_${field}_${direction}`;
      await db.schema.dropIndex(name).execute();
      await db.schema
        .createIndex(name)
        .on('users')
        .expression(sql.raw(`${FOLDED(field)}${direction === 'desc' ? ' desc' : ''}, id, status, age, ${COUNTRY}${withOther ? `, ${FOLDED(other)}` : ''}`))
        .execute();
    }
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await rebuild(db, true);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await rebuild(db, false);
}
