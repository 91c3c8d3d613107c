import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { seed } from '../../src/cli/seed.js';
import { exportCommand } from '../../src/cli/export.js';
import { importCommand } from '../../src/cli/import.js';
import { cliIo } from './io.js';

async function exported(databaseUrl: string): Promise<string> {
  const io = cliIo({ databaseUrl });
  expect(await exportCommand.run([], io.ctx)).toBe(0);
  return io.stdout();
}

const artist = (id: number, name = `Artist ${id}`) => JSON.stringify({ type: 'artist', id, name, image: `https://img.example.com/${id}.jpg` });

describe('music-catalogue export / import', () => {
  it('round-trips the whole catalogue: import of an export exports the same bytes', async () => {
    const source = cliIo();
    await seed.run(['--artists', '4', '--albums-per-artist', '2', '--songs-per-album', '3'], source.ctx);
    const file = join(mkdtempSync(join(tmpdir(), 'mc-export-')), 'catalogue.ndjson');
    const exp = cliIo({ databaseUrl: source.databaseUrl });
    expect(await exportCommand.run(['--file', file], exp.ctx)).toBe(0);
    expect(exp.stderr()).toContain('exported 4 artists, 8 albums, 24 songs');

    const target = cliIo();
    expect(await importCommand.run(['--file', file], target.ctx)).toBe(0);
    expect(target.stdout()).toBe('imported 4 artists, 8 albums, 24 songs\n');
    expect(await exported(target.databaseUrl)).toBe(readFileSync(file, 'utf8'));
  });

  it('reports every bad line with its number and imports nothing', async () => {
    const lines = [
      artist(1),
      '{not json',
      JSON.stringify({ type: 'album', id: 1, artist_id: 1, name: 'A', year: '1997', image: 'https://img.example.com/a.jpg' }),
      '',
      JSON.stringify({ type: 'song', id: 1, album_id: 7, name: 'S', time: '04:44' }),
      artist(1, 'Again'),
      JSON.stringify({ type: 'label', id: 1 }),
      JSON.stringify({ type: 'artist', id: 2, name: '  ', image: 'https://img.example.com/2.jpg', genre: 'rock' }),
    ];
    const io = cliIo({ stdin: `${lines.join('\n')}\n` });
    expect(await importCommand.run([], io.ctx)).toBe(1);
    expect(io.stderr().trim().split('\n')).toEqual([
      'line 2: not valid JSON',
      'line 3: year: Must be integer.',
      'line 5: album_id: album 7 is neither in the file nor in the database',
      'line 6: id: duplicate artist id 1 (first on line 1)',
      'line 7: type: Must be one of: artist, album, song.',
      'line 8: genre: Unknown field.',
      'line 8: name: Must not be blank.',
      'import failed: 6 bad lines; nothing was imported',
    ]);
    expect(await exported(io.databaseUrl)).toBe('');
  });

  it('refuses ids that already exist, and accepts references to parents already stored', async () => {
    const io = cliIo({ stdin: `${artist(1)}\n` });
    expect(await importCommand.run([], io.ctx)).toBe(0);
    const clash = cliIo({ databaseUrl: io.databaseUrl, stdin: `${artist(2)}\n${artist(1)}\n` });
    expect(await importCommand.run([], clash.ctx)).toBe(1);
    expect(clash.stderr()).toContain('line 2: id: artist 1 already exists in the database');
    const album = JSON.stringify({ type: 'album', id: 5, artist_id: 1, name: 'Later', year: 2001, image: 'https://img.example.com/l.jpg' });
    const child = cliIo({ databaseUrl: io.databaseUrl, stdin: `${album}\n` });
    expect(await importCommand.run([], child.ctx)).toBe(0);
    expect(await exported(io.databaseUrl)).toBe(`${artist(1)}\n${album}\n`);
  });

  it('draws a bar of the file read on a terminal, on stderr, and prints the summary on stdout', async () => {
    const source = cliIo();
    await seed.run(['--artists', '3', '--albums-per-artist', '1', '--songs-per-album', '2'], source.ctx);
    const file = join(mkdtempSync(join(tmpdir(), 'mc-import-tty-')), 'catalogue.ndjson');
    expect(await exportCommand.run(['--file', file], cliIo({ databaseUrl: source.databaseUrl }).ctx)).toBe(0);
    const size = readFileSync(file).length;
    const io = cliIo({ tty: true });
    expect(await importCommand.run(['--file', file], io.ctx)).toBe(0);
    expect(io.stderr()).toContain('\rreading [');
    expect(io.stderr()).toContain(`${size}/${size} 100%`);
    expect(io.stdout()).toBe('imported 3 artists, 3 albums, 6 songs\n');
  });

  it('reads a file given with --file and says so when it is missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mc-import-'));
    writeFileSync(join(dir, 'one.ndjson'), `${artist(3)}\n`);
    const io = cliIo();
    expect(await importCommand.run(['--file', join(dir, 'one.ndjson')], io.ctx)).toBe(0);
    await expect(importCommand.run(['--file', join(dir, 'missing.ndjson')], cliIo().ctx)).rejects.toThrow('ENOENT');
  });
});
