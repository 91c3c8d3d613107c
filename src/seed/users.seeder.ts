import { CompiledQuery, sql } from 'kysely';
import type { Db, UserTable } from '../db/database.js';
import { indexDefinitions } from '../db/indexes.js';
import { between, derivedSeed, pick, rng, type Random } from './random.js';
import { ROWS_PER_STATEMENT, type Seeder } from './seeder.js';
import { collationKey, foldOfKey, nfc } from '../db/collation.js';

export interface UserSeedOptions {
  users: number;
}

/** Users per transaction when adding to a table that already has users (--force). */
const USERS_PER_TRANSACTION = 100_000;

// Names as people write them (issue 33): Brazilian, Spanish, French and German ones with their
// accents, a few in lower case, beside others. 36 first names and 30 last names, as many as before,
// so that the lists' group sizes (what sorting by a name costs) stay the benchmark's.
// prettier-ignore
export const FIRST_NAMES = [
  'Ana', 'Álvaro', 'Bruno', 'Beatriz', 'Cecília', 'Chloé', 'Diego', 'Élodie', 'Émile', 'Fábio', 'François',
  'Gonçalo', 'Hélène', 'Inês', 'Íñigo', 'João', 'Jürgen', 'Jörg', 'Karin', 'Lúcia', 'Márcio', 'Mónica',
  'Nicolás', 'Noémie', 'Óscar', 'Pedro', 'Renée', 'Sérgio', 'Sofia', 'Thaís', 'Tomás', 'Vinícius', 'Zoë',
  'alice', 'ben', 'emma',
] as const;

// prettier-ignore
export const LAST_NAMES = [
  'Silva', 'Araújo', 'Conceição', 'Gonçalves', 'Magalhães', 'Simões', 'Brandão', 'Souza', 'García',
  'Martínez', 'López', 'Núñez', 'Peña', 'Ibáñez', 'Muñoz', 'Müller', 'Schröder', 'Weiß', 'Groß', 'Köhler',
  'Jäger', 'Dubois', 'Lefèvre', 'Lemaître', 'Béranger', 'Fontaine', 'van Dijk', "O'Brien", 'de la Cruz',
  'Smith',
] as const;

/** Countries with weights: Brazil is common enough for young-brazilians to have thousands of rows. */
const COUNTRIES: readonly (readonly [string, number])[] = [
  ['Brazil', 12],
  ['Argentina', 8],
  ['United States', 14],
  ['Germany', 8],
  ['France', 7],
  ['Japan', 7],
  ['Portugal', 5],
  ['Spain', 6],
  ['Italy', 6],
  ['México', 7],
  ['Canada', 5],
  ['India', 6],
  ['Nigeria', 4],
  ['Poland', 3],
  ['Chile', 2],
];
const COUNTRY_WEIGHT = COUNTRIES.reduce((sum, [, w]) => sum + w, 0);

function pickCountry(random: Random): string {
  let r = random() * COUNTRY_WEIGHT;
  for (const [name, weight] of COUNTRIES) {
    if ((r -= weight) < 0) return name;
  }
  return COUNTRIES[0]![0];
}

const COLUMNS = ['first_name', 'last_name', 'email', 'age', 'status', 'country', 'first_name_key', 'last_name_key', 'country_key', 'country_fold'] as const;

/** Each name as stored, in NFC, and its collation key (src/db/collation.ts), computed once per distinct name. */
const storedNames = new Map<string, { text: string; key: string }>();
function stored(name: string): { text: string; key: string } {
  let found = storedNames.get(name);
  if (found === undefined) {
    const text = nfc(name);
    storedNames.set(name, (found = { text, key: collationKey(text) }));
  }
  return found;
}

/** User number `n` (1-based) as the row's values in COLUMNS order; the email is unique by n. */
function planUser(random: Random, n: number): unknown[] {
  const first = stored(pick(random, FIRST_NAMES));
  const last = stored(pick(random, LAST_NAMES));
  const local = `${first.text}.${last.text}`
    .normalize('NFD')
    .replace(/[^A-Za-z.]/g, '')
    .toLowerCase();
  const age = between(random, 0, 99);
  const status = random() < 0.7 ? 'active' : 'inactive';
  const country = stored(pickCountry(random));
  return [first.text, last.text, `${local}.${n}@example.com`, age, status, country.text, first.key, last.key, country.key, foldOfKey(country.key)];
}

/**
 * The INSERT text for `rows` rows, built by Kysely once per size and dialect and then reused with new
 * values: compiling a 500-row insert each time would cost more than running it.
 */
function insertText(db: Db, rows: number, cache: Map<number, string>): string {
  let text = cache.get(rows);
  if (text === undefined) {
    const placeholder = Object.fromEntries(COLUMNS.map((c) => [c, c === 'age' ? 0 : ''])) as Pick<UserTable, (typeof COLUMNS)[number]>;
    text = db
      .insertInto('users')
      .values(Array.from({ length: rows }, () => placeholder))
      .compile().sql;
    cache.set(rows, text);
  }
  return text;
}

async function insertUsers(db: Db, random: Random, first: number, last: number, texts: Map<number, string>): Promise<void> {
  for (let start = first; start <= last; start += ROWS_PER_STATEMENT) {
    const end = Math.min(start + ROWS_PER_STATEMENT - 1, last);
    const values: unknown[] = [];
    for (let n = start; n <= end; n++) values.push(...planUser(random, n));
    await db.executeQuery(CompiledQuery.raw(insertText(db, end - start + 1, texts), values));
  }
}

/** The highest user id so far (0 for an empty table): added users are numbered after it, so emails stay unique. */
async function highestId(db: Db): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.max('id').as('max'))
    .executeTakeFirst();
  return Number(row?.max ?? 0);
}

export const usersSeeder: Seeder<UserSeedOptions> = {
  name: 'users',
  tables: ['users'],
  total: (o) => o.users,
  async run(db, o, progress) {
    const random = rng(derivedSeed(o.seed, 'users'));
    const texts = new Map<number, string>();
    const base = await highestId(db);
    if (base === 0) {
      // Into an empty table: one transaction that drops the secondary indexes, inserts every row and
      // builds the indexes again. Building an index from sorted data is several times faster than
      // updating six indexes row by row, and a crash or error rolls all of it back (DDL is
      // transactional on SQLite and PostgreSQL), so the schema is never left without its indexes.
      await db.transaction().execute(async (trx) => {
        const indexes = await indexDefinitions(trx, 'users');
        for (const index of indexes) await sql`drop index ${sql.id(index.name)}`.execute(trx);
        for (let first = 1; first <= o.users; first += USERS_PER_TRANSACTION) {
          const last = Math.min(first + USERS_PER_TRANSACTION - 1, o.users);
          await insertUsers(trx, random, first, last, texts);
          progress.advance(last - first + 1);
        }
        // The definitions come from the database's own catalogue, not from any input.
        for (const index of indexes) await sql.raw(index.sql).execute(trx);
      });
      return;
    }
    for (let first = base + 1; first <= base + o.users; first += USERS_PER_TRANSACTION) {
      const last = Math.min(first + USERS_PER_TRANSACTION - 1, base + o.users);
      await db.transaction().execute((trx) => insertUsers(trx, random, first, last, texts));
      progress.advance(last - first + 1);
    }
  },
};
