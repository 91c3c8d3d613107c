import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, watchPgStatements, type Client, type TestContext } from '../helpers.js';

// PostgreSQL: a deep page of a catalogue list far from every remembered boundary first reads a
// ladder of boundaries up to it (list/postgres.ts ladder, issue 32); later deep pages of the list
// seek from a rung near them. Every page is the one OFFSET would read, at the table's version: a
// write in between moves the version, and the rungs read before it are not used.

let ctx: TestContext;
let reader: Client;
let writer: Client;
/** The texts of the statements the app sends while set. */
let recording: string[] | undefined;
let unwatch: (() => void) | undefined;

const ARTISTS = 1400;

beforeAll(async () => {
  unwatch = watchPgStatements((text, run) => (recording?.push(text), run()));
  ctx = await buildTestApp();
  writer = client(ctx.app, ctx.tokens.write);
  reader = client(ctx.app, ctx.tokens.read);
  for (let from = 0; from < ARTISTS; from += 100) {
    // Names that sort apart from their ids (and tie in pairs, by id).
    const items = Array.from({ length: 100 }, (_, i) => ({
      name: `Ladder ${String(((from + i) * 7919) % 700).padStart(4, '0')}`,
      image: 'https://img.example.com/l.jpg',
    }));
    const res = await writer.post('/artists', items);
    expect(res.statusCode).toBe(201);
  }
});
afterAll(async () => {
  unwatch?.();
  await ctx.close();
});

type Artist = { id: number; name: string };

async function page(url: string): Promise<{ rows: Artist[]; statements: string[] }> {
  recording = [];
  try {
    const res = await reader.get(url);
    expect(res.statusCode).toBe(200);
    return { rows: res.json<Artist[]>(), statements: recording.filter((text) => /"artists"/.test(text)) };
  } finally {
    recording = undefined;
  }
}

/** The whole list in that sort, read from the start in pages of 100 (no deep page). */
async function whole(sort: string): Promise<Artist[]> {
  const out: Artist[] = [];
  for (let p = 1; out.length % 100 === 0; p++) {
    const { rows } = await page(`/artists?sort=${sort}&page=${p}&size=100`);
    out.push(...rows);
    if (rows.length === 0) break;
  }
  return out;
}

describe('deep catalogue pages on PostgreSQL', () => {
  it.each(['name:asc', 'name:desc,id:desc', 'id:desc'])('read a ladder once, then seek from its rungs; every page as OFFSET reads it (%s)', async (sort) => {
    const first = await page(`/artists?sort=${sort}&page=61&size=20`);
    expect(first.statements.filter((text) => text.includes('row_number()'))).toHaveLength(1);
    const later = await page(`/artists?sort=${sort}&page=53&size=25`);
    expect(later.statements, later.statements.join('\n')).toHaveLength(1);
    expect(later.statements[0]).not.toContain('row_number()');
    expect(later.statements[0]).toMatch(/"k0" [<>=]|"id" [<>]|[<>] \$/);
    const all = await whole(sort);
    expect(all).toHaveLength(ARTISTS);
    expect(first.rows).toEqual(all.slice(1200, 1220));
    expect(later.rows).toEqual(all.slice(1300, 1325));

    // A write moves the version: the pages read after it are those of the new list.
    const res = await writer.post('/artists', { name: 'Ladder 0000', image: 'https://img.example.com/l.jpg' });
    expect(res.statusCode).toBe(201);
    const after = await page(`/artists?sort=${sort}&page=53&size=25`);
    const again = await whole(sort);
    expect(again).toHaveLength(ARTISTS + 1);
    expect(after.rows).toEqual(again.slice(1300, 1325));
    const del = await writer.delete(`/artists/${res.json<Artist>().id}`);
    expect(del.statusCode).toBe(204);
  });
});
