import { sql, type Kysely } from 'kysely';

// A users list filtered to one country (or a few: lives_in=[a,b,c]) and sorted by a name, such as
// the young-brazilians alias sorted by last_name. The name's own order index (20261124T0200) walks
// every country's users to find this one's (one in fifteen on the seeded data); the country index
// finds them, but then all of them are sorted to return one page (26 ms for a deep alias page on a
// million users). These hold each country's users in each name's order, both directions (ties by id
// ascending), with the other filtered columns (status, age) checked in the index: a page walks only
// that country's entries in order and stops at the page. Several countries are read as one ordered
// merge of one range each (query/page-strategy.ts, pinned indexes). A country sorted by id has its
// index already (users_country_asc); by age, status or country the page is read per value of that
// key (query/statements.ts byValue). The same SQL on both backends.

const FOLDED = (col: string) => `lower(${col} collate "binary")`;

export const USERS_COUNTRY_NAME_INDEXES = ['first_name', 'last_name'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const field of USERS_COUNTRY_NAME_INDEXES) {
    for (const direction of ['asc', 'desc'] as const) {
      await db.schema
        .createIndex(`users_country_${field}_${direction}`)
        .on('users')
        .expression(sql.raw(`${FOLDED('country')}, ${FOLDED(field)}${direction === 'desc' ? ' desc' : ''}, id, status, age`))
        .execute();
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const field of USERS_COUNTRY_NAME_INDEXES) {
    for (const direction of ['asc', 'desc']) await db.schema.dropIndex(`users_country_${field}_${direction}`).execute();
  }
}
