import { describe, expect, it } from 'vitest';
import { seed } from '../../src/cli/seed.js';
import { exportCommand } from '../../src/cli/export.js';
import { cliIo } from './io.js';
import { runCli } from '../process.js';

async function seededExport(args: string[]): Promise<string> {
  const io = cliIo();
  expect(await seed.run(args, io.ctx)).toBe(0);
  expect(io.stdout()).toBe(''); // stdout is for data; seed has none
  const out = cliIo({ databaseUrl: io.databaseUrl });
  expect(await exportCommand.run([], out.ctx)).toBe(0);
  return out.stdout();
}

const count = (ndjson: string, type: string) => ndjson.split('\n').filter((l) => l.includes(`"type":"${type}"`)).length;

describe('music-catalogue seed', () => {
  it('creates the chosen numbers of artists, albums and songs, valid by the API rules', async () => {
    const data = await seededExport(['--artists', '7', '--albums-per-artist', '3', '--songs-per-album', '4']);
    expect([count(data, 'artist'), count(data, 'album'), count(data, 'song')]).toEqual([7, 21, 84]);
    const names: string[] = [];
    for (const line of data.trim().split('\n')) {
      const r = JSON.parse(line) as { name: string; time?: string; year?: number; image?: string };
      expect(r.name.trim()).toBe(r.name);
      expect(r.name.normalize('NFC')).toBe(r.name);
      names.push(r.name);
      if (r.time) expect(r.time).toMatch(/^[0-9]{2}:[0-5][0-9]$/);
      if (r.year) expect(r.year).toBeGreaterThanOrEqual(1000);
      if (r.image) expect(r.image).toMatch(/^https:\/\//);
    }
    // Names as people write them: Portuguese, Spanish, French and German ones, with their accents.
    expect(names.filter((n) => /\P{ASCII}/u.test(n)).length).toBeGreaterThan(names.length / 3);
  });

  it('is deterministic: the same options give the same data, another --seed other data', async () => {
    const args = ['--artists', '5', '--albums-per-artist', '2', '--songs-per-album', '3', '--seed', '42'];
    const a = await seededExport(args);
    expect(await seededExport(args)).toBe(a);
    expect(await seededExport([...args.slice(0, -1), '43'])).not.toBe(a);
  });

  it('refuses a database with data unless --force, which adds to it', async () => {
    const io = cliIo();
    expect(await seed.run(['--artists', '2', '--albums-per-artist', '1', '--songs-per-album', '1'], io.ctx)).toBe(0);
    const again = cliIo({ databaseUrl: io.databaseUrl });
    expect(await seed.run(['--artists', '2'], again.ctx)).toBe(1);
    expect(again.stderr()).toContain(
      'already has data (artists, albums, songs, users); use --force to add the demo data beside it (nothing is deleted or changed)',
    );
    expect(await seed.run(['--artists', '3', '--albums-per-artist', '0', '--force'], cliIo({ databaseUrl: io.databaseUrl }).ctx)).toBe(0);
    const out = cliIo({ databaseUrl: io.databaseUrl });
    await exportCommand.run([], out.ctx);
    expect(count(out.stdout(), 'artist')).toBe(5);
  });

  it('draws a progress bar on a terminal, on stderr', async () => {
    const io = cliIo({ tty: true });
    expect(await seed.run(['--artists', '3', '--albums-per-artist', '1', '--songs-per-album', '1', '--users', '5'], io.ctx)).toBe(0);
    expect(io.stdout()).toBe('');
    expect(io.stderr()).toContain('\rcatalogue [');
    expect(io.stderr()).toContain('9/9 100%');
    expect(io.stderr()).toContain('\rusers [');
    expect(io.stderr()).toContain('5/5 100%');
    expect(io.stderr()).toMatch(/\nseeded 14 rows in \d+\.\d+s\n$/);
  });

  it('reports progress as plain lines and a summary on stderr when not on a terminal', async () => {
    const io = cliIo();
    // 250 artists of one row each, written 100 a transaction: a line at 40%, at 80% and at the end.
    expect(await seed.run(['--artists', '250', '--albums-per-artist', '0', '--users', '0'], io.ctx)).toBe(0);
    expect(io.stdout()).toBe('');
    expect(io.stderr()).toMatch(/^catalogue: 100\/250 \(40%\)\ncatalogue: 200\/250 \(80%\)\ncatalogue: 250\/250 \(100%\)\nseeded 250 rows in \d+\.\d+s\n$/);
  });

  it('as a process with piped output: stdout stays empty, progress and the summary are lines on stderr', async () => {
    const { databaseUrl } = cliIo();
    const res = await runCli(['seed', '--artists', '2', '--albums-per-artist', '1', '--songs-per-album', '2', '--users', '3'], {
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'silent',
    });
    expect(res.code).toBe(0);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^catalogue: 8\/8 \(100%\)\nusers: 3\/3 \(100%\)\nseeded 11 rows in \d+\.\d+s\n$/);
  });

  it('rejects out-of-range sizes as usage errors', async () => {
    await expect(seed.run(['--artists', '10000001'], cliIo().ctx)).rejects.toThrow('--artists must be an integer between 0 and');
    await expect(seed.run(['--songs-per-album', 'ten'], cliIo().ctx)).rejects.toThrow('--songs-per-album must be an integer');
  });
});
