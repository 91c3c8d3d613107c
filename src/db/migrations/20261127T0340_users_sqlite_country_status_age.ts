import { sql, type Kysely } from 'kysely';
import { isPostgres } from './util.js';

// SQLite only: one users index that holds status and age again, led by the country's fold (issue 37,
// "the SQL path stays"). Since migration 20261127T0100 no users index holds them, so the SQL path
// (USERS_INDEX=off, the warm-up, queries outside the users index's family) checks them on the row:
// a deep page of `young-brazilians` (a country, a status, an age range: 13,528 of Brazil's 120,109
// users at 1M) walked Brazil's name index fetching every entry's row, 50-220 ms. Through this index
// the matches are one range per age, read from its entries alone: 10-18 ms to sort all of them by a
// name, under 1 ms for one age's page in id order (the tie-break of a sort by age).
//
// Not on PostgreSQL: there an index holding status or age makes every PATCH of them a non-HOT update
// (migration 20261127T0100). On SQLite such a PATCH writes this one index's entry (a delete and an
// insert), where before 20261127T0100 it wrote 17.

const INDEX = 'users_country_status_age';
const COLUMNS = 'country_fold, status, age, id, first_name_key, last_name_key, country_key';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  await sql`create index if not exists ${sql.id(INDEX)} on users (${sql.raw(COLUMNS)})`.execute(db);
  // A database analyzed before (seed, import) gets this index's statistics too.
  const { rows } = await sql<{ n: number }>`select count(*) as n from sqlite_master where name = 'sqlite_stat1'`.execute(db);
  if (!Number(rows[0]?.n)) return;
  const { rows: users } = await sql<{ n: number }>`select count(*) as n from sqlite_stat1 where tbl = 'users'`.execute(db);
  if (Number(users[0]?.n)) await sql`analyze ${sql.id(INDEX)}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  await sql`drop index if exists ${sql.id(INDEX)}`.execute(db);
}
