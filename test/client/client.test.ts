import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogueClient, catalogueTour } from '../../client/example.js';
import { buildTestApp, client, type TestContext } from '../helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let ctx: TestContext;
let base: string;

beforeAll(async () => {
  ctx = await buildTestApp();
  base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => ctx.close());

describe('client/example.ts (openapi-fetch over the generated types)', () => {
  it('creates an artist, an album and a song over HTTP and reads them back', async () => {
    const tour = await catalogueTour(catalogueClient(base, ctx.tokens.write));
    expect(tour.artist).toEqual({ id: expect.any(Number), name: 'Low', image: 'https://img.example.com/low.jpg' });
    expect(tour.artistView).toEqual({ name: 'Low', image: 'https://img.example.com/low.jpg' });
    expect(tour.withAlbums).toEqual({ name: 'Low', image: 'https://img.example.com/low.jpg', albums: [tour.album] });
    expect(tour.album).toEqual({ id: expect.any(Number), name: 'Things We Lost in the Fire', year: 2001, image: 'https://img.example.com/twlitf.jpg' });
    expect(tour.withSongs).toEqual({ name: tour.album.name, year: 2001, image: tour.album.image, songs: [tour.song] });
    expect(tour.song).toEqual({ id: expect.any(Number), name: 'Sunflower', time: '04:35' });
  });

  it('surfaces the standard error body as a typed error', async () => {
    const api = catalogueClient(base, ctx.tokens.read);
    const { data, error, response } = await api.GET('/artists/{artist_id}', { params: { path: { artist_id: 999999 } } });
    expect(data).toBeUndefined();
    expect(response.status).toBe(404);
    expect(error).toEqual({ code: 'NOT_FOUND', message: 'Artist not found.' });
  });
});

describe('client/schema.d.ts', () => {
  it('is what `npm run client:generate` makes from the current document (regenerate it when this fails)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mc-client-'));
    try {
      const doc = join(dir, 'openapi.json');
      writeFileSync(doc, `${JSON.stringify((await client(ctx.app).get('/openapi.json')).json(), null, 2)}\n`);
      const out = join(dir, 'schema.d.ts');
      const run = spawnSync(process.execPath, [join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'), doc, '-o', out], { cwd: ROOT, encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      expect(readFileSync(join(ROOT, 'client/schema.d.ts'), 'utf8')).toBe(readFileSync(out, 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
