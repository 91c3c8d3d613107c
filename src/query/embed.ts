import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../db/dialect.js';
import { run } from './shapes.js';

// embed=: the related items of every row of a page, in one statement per level, never one per row.
// Each parent gets at most EMBED_MAX_PER_PARENT of its children, by id (the order they were
// created), read as one index range per parent (children's index on (parent id, id)): SQLite joins
// the page's parent ids (a JSON array) to a correlated `id in (... limit n)`; PostgreSQL a LATERAL
// subquery per parent. The whole list of one parent's children stays its own paginated route.

export const EMBED_MAX_PER_PARENT = 10;

export interface EmbedSpec {
  /** The children's table and the column naming their parent. */
  table: 'albums' | 'songs';
  parent: 'artist_id' | 'album_id';
  /** The columns each child shows (declared by us, never from a request). */
  columns: readonly string[];
}

/** Children of each parent id (at most EMBED_MAX_PER_PARENT each, by id), grouped by parent. */
export async function childrenOf<C>(db: Kysely<unknown>, spec: EmbedSpec, parentIds: readonly number[]): Promise<Map<number, C[]>> {
  const out = new Map<number, C[]>(parentIds.map((id) => [id, []]));
  if (parentIds.length === 0) return out;
  const table = sql.table(spec.table);
  const parent = sql.ref(spec.parent);
  const columns = sql.join(spec.columns.map((c) => sql.ref(`c.${c}`)));
  const limit = sql.lit(EMBED_MAX_PER_PARENT);
  const query = isPostgres(db)
    ? sql`select p.id as parent_id, ${columns} from unnest(${sql.val(parentIds)}::integer[]) as p(id)
        cross join lateral (select * from ${table} where ${parent} = p.id order by id limit ${limit}) as c
        order by p.id, c.id`
    : sql`select p.value as parent_id, ${columns} from json_each(${JSON.stringify(parentIds)}) as p
        join ${table} as c on c.id in (select id from ${table} where ${parent} = p.value order by id limit ${limit})
        order by p.value, c.id`;
  const compiled = query.compile(db);
  const rows = await run<Record<string, unknown>>(db, { sql: compiled.sql, parameters: compiled.parameters });
  for (const row of rows) {
    const { parent_id, ...child } = row;
    out.get(Number(parent_id))?.push(child as C);
  }
  return out;
}
