import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { collationKey, foldOfKey } from '../../src/db/collation.js';
import { NAME_FIELDS, ODD, UsersIndex, SORT_FIELDS, idRanges } from '../../src/modules/users/index/users-index.js';
import { indexTuning } from '../../src/modules/users/index/query.js';
import { ADMIN_TOKEN, appsOnOneDatabase, seeded, type Seeded, type SharedDatabase } from '../helpers.js';
import { backend } from '../database.js';

// The users index (src/modules/users/index/) must never change an answer. Two instances on one
// database: `indexed` with USERS_INDEX=on, `plain` with it off (SQL answers everything). Random
// writes of every kind (POST one and many, PATCH, DELETE, aliases, and rows written by SQL outside
// the API, as psql would) go through either instance or the database; after each step random list
// URLs, of the family the index answers and outside it, are asked of both: status, body,
// X-Total-Count and Link must be the same. A write through `plain` read through `indexed` is the
// two-instance case: the index learns it from the change feed alone. At the end every structure of
// the index equals one built afresh from the table. Seeded (USERS_INDEX_SEED): a failure names its seed.

const SEED = Number(process.env.USERS_INDEX_SEED ?? 3701);
const STEPS = 40;
const QUERIES_PER_STEP = 25;

type Rnd = Seeded;

// Names equal at base strength (accents, case), a ß, an emoji, a name past U+FFFF, so ties and the
// collation keys' order are exercised; countries in several spellings of one fold.
const FIRST = [
  'Ana',
  'ana',
  'ÁNA',
  'Ána',
  'Bo',
  'Straße',
  'STRASSE',
  'Zoë',
  '🎸 Rock',
  '𝔄lpha',
  'Émile',
  'emile',
  '100%',
  'a_b',
  'back\\slash',
  '__proto__',
  'constructor',
];
const LAST = ['Silva', 'silva', 'Müller', 'Muller', 'Ørsted', 'Lee', 'lee', '[x]', '1999', '%off', '_x', '\\', 'Constructor', '__proto__'];
/** Name prefixes: one letter, accents and case, a prefix no name has, LIKE's and JSON's special characters, property names. */
const PREFIXES = [
  'a',
  'A',
  'á',
  'ana',
  'str',
  'STRASSE',
  'é',
  'm',
  'mü',
  'zz',
  '%',
  '_',
  '\\',
  '__proto__',
  '__',
  'constructor',
  'con',
  '🎸',
  '𝔄',
  '[',
  '1',
  's',
];
const COUNTRIES = ['Brazil', 'brazil', 'BRAZIL', 'México', 'Mexico', 'Norway', 'Chile', 'Japan', 'Ísland'];
const STATUSES = ['active', 'inactive'];
const SORTABLE = ['id', 'first_name', 'last_name', 'age', 'status', 'country'];
const LIVES_IN = ['brazil', 'mexico', 'MÉXICO', 'norway', 'chile', 'japan', 'island', 'nowhere'];

let emailSeq = 0;
function randomUser(r: Rnd) {
  return {
    first_name: r.pick(FIRST),
    last_name: r.pick(LAST),
    email: `u${emailSeq++}-${r.int(1e9)}@example.com`,
    age: r.chance(0.05) ? r.pick([0, 150]) : 15 + r.int(70),
    status: r.pick(STATUSES),
    country: r.pick(COUNTRIES),
  };
}

function randomPatch(r: Rnd) {
  const full = randomUser(r);
  const keys = Object.keys(full) as (keyof typeof full)[];
  const out: Record<string, unknown> = {};
  for (const k of keys) if (r.chance(0.35)) out[k] = full[k];
  if (Object.keys(out).length === 0) out.age = full.age;
  return out;
}

/** Filters of the family, and sometimes one outside it (answered by SQL on both). */
function randomFilters(r: Rnd): string[] {
  const out: string[] = [];
  if (r.chance(0.4)) out.push(`status=${r.pick(STATUSES)}`);
  if (r.chance(0.35)) out.push(`older_than=${r.int(90)}`);
  if (r.chance(0.35)) out.push(`younger_than=${r.int(100)}`);
  if (r.chance(0.4)) {
    const n = 1 + r.int(3);
    const list = Array.from({ length: n }, () => r.pick(LIVES_IN));
    out.push(n === 1 && r.chance(0.5) ? `lives_in=${encodeURIComponent(list[0]!)}` : `lives_in=${encodeURIComponent(`[${list.join(',')}]`)}`);
  }
  if (r.chance(0.25)) out.push(`first_name_starts_with=${encodeURIComponent(r.pick(PREFIXES))}`);
  if (r.chance(0.15)) out.push(`last_name_starts_with=${encodeURIComponent(r.pick(PREFIXES))}`);
  if (r.chance(0.05)) out.push(`last_name=${encodeURIComponent(r.pick(LAST))}`);
  return out;
}

function randomSort(r: Rnd): string[] {
  const n = r.pick([0, 1, 1, 2, 2, 2, 3]);
  const fields = [...SORTABLE].sort(() => r.int(3) - 1).slice(0, n);
  if (fields.length === 0) return [];
  const keys = fields.map((f) => (r.chance(0.5) ? `${f}:desc` : r.chance(0.5) ? `${f}:asc` : f));
  if (keys.length === 1 && r.chance(0.3)) return [`sort_by=${fields[0]}`, `order=${r.pick(['asc', 'desc'])}`];
  return [`sort=${keys.join(',')}`];
}

function randomPage(r: Rnd, users: number): string[] {
  const size = r.pick([1, 2, 5, 20, 100]);
  const deep = Math.max(1, Math.ceil(users / size) + 1);
  switch (r.int(5)) {
    case 0:
      return [];
    case 1:
      return [`page=${1 + r.int(deep)}`, `size=${size}`];
    case 2:
      return [`offset=${r.int(users + 5)}`, `limit=${size}`];
    case 3:
      return [`page=${1 + r.int(deep)}`, `pagesize=${size}`];
    default:
      return ['after=', `size=${size}`];
  }
}

describe(`users index against SQL (${backend}, seed ${SEED})`, () => {
  let shared: SharedDatabase;
  let indexed: FastifyInstance;
  let plain: FastifyInstance;

  beforeAll(async () => {
    // Ranges of 8 ids in the count table by id range: the few hundred users span dozens of them, and new ids grow it.
    idRanges.spanMin = 8;
    shared = await appsOnOneDatabase({ usersIndex: false }, { usersIndex: true });
    [plain, indexed] = shared.apps as [FastifyInstance, FastifyInstance];
  });
  afterAll(async () => {
    idRanges.spanMin = 1024;
    await shared?.close();
  });

  const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

  /** The users index's answers so far, read from /metrics as a client would. */
  async function answeredBy(app: FastifyInstance): Promise<{ index: number; sql: number }> {
    const text = (await app.inject({ method: 'GET', url: '/metrics', headers: auth })).body;
    const read = (by: string) => Number(new RegExp(`^users_index_lists_total\\{by="${by}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    return { index: read('index'), sql: read('sql') };
  }

  /** Single users (GET /users/{id}) the index answered so far, from /metrics. */
  async function usersByIndex(app: FastifyInstance): Promise<number> {
    const text = (await app.inject({ method: 'GET', url: '/metrics', headers: auth })).body;
    return Number(/^users_index_single_users_total\{by="index"\} (\d+)/m.exec(text)?.[1] ?? 0);
  }

  it('answers every list as SQL does, through random writes of every kind on either instance and outside the API', async () => {
    const r = seeded(SEED);
    const live = new Set<number>();
    const aliases: string[] = [];
    const either = () => (r.chance(0.5) ? indexed : plain);
    const send = async (method: 'POST' | 'PATCH' | 'DELETE' | 'PUT', url: string, payload?: unknown) => {
      const res = await either().inject({ method, url, headers: auth, ...(payload === undefined ? {} : { payload: payload as object }) });
      if (res.statusCode >= 300 && res.statusCode !== 404 && res.statusCode !== 409) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
      return res;
    };

    // Users before the index loads, and the load itself.
    for (let i = 0; i < 4; i++) {
      const res = await send(
        'POST',
        '/users',
        Array.from({ length: 60 }, () => randomUser(r)),
      );
      for (const u of res.json<{ id: number }[]>()) live.add(u.id);
    }
    await indexed.usersIndex!.loaded;
    expect(indexed.usersIndex!.state).toBe('ready');
    expect(plain.usersIndex).toBeUndefined();

    let compared = 0;
    let family = 0;
    let prefixes = 0;
    let singles = 0;
    // Its own draws: the seed's writes and queries stay those of `r`.
    const ru = seeded(SEED + 1);
    const usersBefore = await usersByIndex(indexed);
    const before = await answeredBy(indexed);
    for (let step = 0; step < STEPS; step++) {
      const writes = 1 + r.int(4);
      for (let w = 0; w < writes; w++) {
        const ids = [...live];
        const kind = r.int(9);
        if (kind === 0 || ids.length < 20) {
          const res = await send('POST', '/users', randomUser(r));
          if (res.statusCode === 201) live.add(res.json<{ id: number }>().id);
        } else if (kind === 1) {
          const res = await send(
            'POST',
            '/users',
            Array.from({ length: 1 + r.int(40) }, () => randomUser(r)),
          );
          if (res.statusCode === 201) for (const u of res.json<{ id: number }[]>()) live.add(u.id);
        } else if (kind <= 4) {
          await send('PATCH', `/users/${r.pick(ids)}`, randomPatch(r));
        } else if (kind === 5) {
          const id = r.pick(ids);
          await send('DELETE', `/users/${id}`);
          live.delete(id);
        } else if (kind === 6) {
          const name = `a${step}-${w}`;
          const query = [...randomFilters(r)].filter((f) => !f.startsWith('last_name=')).join('&') || 'status=active';
          const res = await send('PUT', `/aliases/users/${name}`, { query });
          if (res.statusCode < 300) aliases.push(name);
        } else {
          // Outside the API, as psql would: rows with their keys, several in one statement, and an update of many.
          const db = either().db;
          if (r.chance(0.5)) {
            const rows = Array.from({ length: 1 + r.int(5) }, () => {
              // As only a hand-written row can be: an age outside 0-150, a status the API does not take.
              const u = { ...randomUser(r), ...(r.chance(0.3) ? { age: r.pick([-3, 151, 999]) } : {}), ...(r.chance(0.2) ? { status: 'suspended' } : {}) };
              const country_key = collationKey(u.country);
              return {
                ...u,
                first_name_key: collationKey(u.first_name),
                last_name_key: collationKey(u.last_name),
                country_key,
                country_fold: foldOfKey(country_key),
              };
            });
            for (const row of await db.insertInto('users').values(rows).returning('id').execute()) live.add(row.id);
          } else {
            await db
              .updateTable('users')
              .set({ age: r.int(120), status: r.pick(STATUSES) })
              .where('id', 'in', ids.filter(() => r.chance(0.1)).concat(ids[0]!))
              .execute();
          }
        }
      }
      // Single users, held or deleted (or never written): the index's answer is SQL's, its ETag (the row version) included.
      for (let q = 0; q < 4; q++) {
        const ids = [...live];
        const id = ru.chance(0.8) && ids.length > 0 ? ru.pick(ids) : 1 + ru.int(Math.max(...ids, 1) + 5);
        const url = `/users/${id}`;
        const [a, b] = [await indexed.inject({ method: 'GET', url, headers: auth }), await plain.inject({ method: 'GET', url, headers: auth })];
        expect([a.statusCode, a.headers.etag, a.body], `${url} (step ${step})`).toEqual([b.statusCode, b.headers.etag, b.body]);
        if (a.statusCode === 200) singles++;
      }
      indexTuning.groupPage = r.pick(['cost', 'collect', 'walk'] as const);
      indexTuning.fromTheEnd = r.chance(0.5);
      // Pages in id order from the id permutation, not from a country's or status's groups, one step in four; a name's group walked from the start of the second key's order, one in three (not drawn: the seed's queries stay the same).
      indexTuning.idByGroups = step % 4 !== 3;
      indexTuning.spanStart = step % 3 !== 2;
      // Names' groups skipped by the names' count tables, or the names' permutations read from their start, one step in two.
      indexTuning.nameCounts = step % 2 === 0;
      // Pages in id order by the count table by id range, or walked, one step in three.
      indexTuning.idCounts = step % 3 !== 1;
      for (let q = 0; q < QUERIES_PER_STEP; q++) {
        const params = [...randomFilters(r), ...randomSort(r), ...randomPage(r, live.size)].sort(() => r.int(3) - 1);
        const onAlias = aliases.length > 0 && r.chance(0.15);
        const url = `/users${onAlias ? `/${r.pick(aliases)}` : ''}${params.length ? `?${params.join('&')}` : ''}`;
        // A name prefix with the family's filters, one or two sort keys: the index's to answer (read from /metrics around it).
        const prefixed =
          params.some((p) => /^(first|last)_name_starts_with=/.test(p)) &&
          !params.some((p) => /^last_name=/.test(p)) &&
          !params.some((p) => p.startsWith('sort=') && p.split(',').length > 2);
        const ahead = prefixed ? await answeredBy(indexed) : undefined;
        const [a, b] = [await indexed.inject({ method: 'GET', url, headers: auth }), await plain.inject({ method: 'GET', url, headers: auth })];
        if (ahead && a.statusCode === 200) {
          expect((await answeredBy(indexed)).index - ahead.index, `${url} answered by the index`).toBe(1);
          prefixes++;
        }
        const seen = (res: typeof a) => ({ status: res.statusCode, total: res.headers['x-total-count'], link: res.headers.link, body: res.body });
        expect(seen(a), `${url} (step ${step})`).toEqual(seen(b));
        compared++;
        // A cursor walk: the next pages, by the link SQL gave (the same link as the index's, checked above).
        let next = /<([^>]*)>; rel="next"/.exec(String(b.headers.link ?? ''))?.[1];
        for (let page = 0; next && page < 3; page++) {
          const [c, d] = [await indexed.inject({ method: 'GET', url: next, headers: auth }), await plain.inject({ method: 'GET', url: next, headers: auth })];
          expect(seen(c), `${next} (step ${step})`).toEqual(seen(d));
          next = r.chance(0.7) ? /<([^>]*)>; rel="next"/.exec(String(d.headers.link ?? ''))?.[1] : undefined;
        }
        if (a.statusCode === 200 && !params.some((p) => /^last_name=/.test(p))) family++;
      }
    }
    indexTuning.nameCounts = true;
    indexTuning.idCounts = true;
    indexTuning.fromTheEnd = true;
    // Not 'cost': the id ranges are taken whatever the group's size (query.ts groupByIdRanges).
    indexTuning.groupPage = 'collect';
    // Pages within a group of a status, age or country sort (in id order, query.ts groupByIdRanges), from either end, by the count table by id range.
    expect(indexed.usersIndex!.index.idCounts).not.toBeNull();
    for (const f of ['status=active', 'lives_in=brazil&older_than=30', 'younger_than=40', 'lives_in=[chile,japan]&status=inactive'])
      for (const s of ['sort=status', 'sort=status:desc', 'sort=country:desc', 'sort=age', 'sort=age:desc']) {
        const base = `/users?${f}&${s}`;
        const total = Number((await plain.inject({ method: 'GET', url: `${base}&page=1&size=7`, headers: auth })).headers['x-total-count']);
        for (const offset of [total - 1, total - 7, total - 30, Math.floor(total / 2) - 3, Math.floor(total / 3), 25]) {
          const url = `${base}&offset=${Math.max(0, offset)}&limit=7`;
          const [a, b] = [await indexed.inject({ method: 'GET', url, headers: auth }), await plain.inject({ method: 'GET', url, headers: auth })];
          expect([a.statusCode, a.headers['x-total-count'], a.body], url).toEqual([b.statusCode, b.headers['x-total-count'], b.body]);
        }
      }
    indexTuning.groupPage = 'cost';
    const after = await answeredBy(indexed);
    expect(compared).toBe(STEPS * QUERIES_PER_STEP);
    // Every held single user was the index's to answer (none of these rows has an age SQL would compare as text).
    expect(singles).toBeGreaterThan(STEPS * 2);
    expect((await usersByIndex(indexed)) - usersBefore).toBe(singles);
    expect(prefixes).toBeGreaterThan(100);
    // The family (name prefixes with it) was answered by the index (three sort keys are not in it, so not every one of them).
    expect(after.index - before.index).toBeGreaterThan(family * 0.7);

    // Every structure equals one built afresh from the table.
    await indexed.usersIndex!.current();
    const fresh = new UsersIndex();
    fresh.add(
      await plain.db
        .selectFrom('users')
        .select(['id', 'first_name', 'last_name', 'email', 'age', 'status', 'country', 'first_name_key', 'last_name_key', 'country_key', 'country_fold'])
        .orderBy('id')
        .execute(),
    );
    fresh.finishLoad();
    const held = indexed.usersIndex!.index;
    expect(held.size).toBe(fresh.size);
    // Each order (the ascending permutation, and each descending order read from it) lists the rows as a fresh build's.
    const rowsOf = (index: UsersIndex, field: (typeof SORT_FIELDS)[number], desc: boolean) =>
      index
        .order(field, desc)
        .slotsInOrder()
        .map((slot) => index.row(slot));
    for (const field of SORT_FIELDS) for (const desc of [false, true]) expect(rowsOf(held, field, desc)).toEqual(rowsOf(fresh, field, desc));
    // Each permutation's copy of the filter attributes is its slots' (country, status, age cell), as a fresh build's.
    const attrsOf = (index: UsersIndex, field: (typeof SORT_FIELDS)[number]) => {
      const p = index.perms[field];
      return Array.from(p.attrs.subarray(0, p.length), (attr, i) => {
        const row = attr >>> 8;
        const slot = p.slots[i]!;
        expect(attr).toBe(index.slotAttrs[slot]);
        const where = row === ODD ? 'odd' : `${index.country.sortText[index.rowCountry[row]!]}|${index.status.shown[index.rowStatus[row]!]}`;
        if (row !== ODD) expect([index.rowCountry[row], index.rowStatus[row]]).toEqual([index.countries[slot], index.statuses[slot]]);
        return `${where}|${(attr & 0xff) === ODD ? 'odd' : attr & 0xff}`;
      });
    };
    for (const field of SORT_FIELDS) expect(attrsOf(held, field)).toEqual(attrsOf(fresh, field));
    const totals = (index: UsersIndex) => {
      const out = new Map<string, number>();
      for (let c = 0; c < index.country.size; c++)
        for (let s = 0; s < index.status.size; s++)
          for (let age = 0; age < 151; age++) {
            const n = index.counts[(c * index.statusCap + s) * 151 + age] ?? 0;
            const k = `${index.country.sortText[c]}|${index.status.shown[s]}|${age}`;
            if (n !== 0) out.set(k, (out.get(k) ?? 0) + n);
          }
      return out;
    };
    expect(totals(held)).toEqual(totals(fresh));
    // Each name's count table (kept by the writes, grown by new names and rows) counts as a fresh build's.
    const nameTotals = (index: UsersIndex, field: (typeof NAME_FIELDS)[number]) => {
      const table = index.nameCounts[field];
      expect(table).not.toBeNull();
      const row = (r: number) => `${index.country.sortText[index.rowCountry[r]!]}|${index.status.shown[index.rowStatus[r]!]}`;
      return table!.cells((code) => index.nameDictionary(field).shown[code]!, row);
    };
    for (const field of NAME_FIELDS) expect(nameTotals(held, field)).toEqual(nameTotals(fresh, field));
    // The count table by id range (its ranges fixed at the load) counts the users held, by their ids, rows and ages.
    const rowName = (index: UsersIndex, r: number) => `${index.country.sortText[index.rowCountry[r]!]}|${index.status.shown[index.rowStatus[r]!]}`;
    expect(held.idCounts).not.toBeNull();
    expect(held.idCounts!.codes).toBeGreaterThan(10);
    const recount = new Map<string, number>();
    for (const slot of held.perms.id.slots.subarray(0, held.perms.id.length)) {
      const attr = held.slotAttrs[slot]!;
      if ((attr & 0xff) === ODD) continue;
      const k = `${Math.floor(held.ids[slot]! / held.idSpan)}|${rowName(held, attr >>> 8)}|${attr & 0xff}`;
      recount.set(k, (recount.get(k) ?? 0) + 1);
    }
    expect(held.idCounts!.cells(String, (r) => rowName(held, r))).toEqual(recount);
  });
});
