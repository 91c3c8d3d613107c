import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { seed } from '../../src/cli/seed.js';
import { eventsCommand } from '../../src/cli/events.js';
import { cliIo } from './io.js';

describe('music-catalogue events', () => {
  it('exports the events in sequence order as NDJSON, from a sequence and of chosen types', async () => {
    const source = cliIo();
    await seed.run(['--artists', '2', '--albums-per-artist', '1', '--songs-per-album', '2'], source.ctx);
    const all = cliIo({ databaseUrl: source.databaseUrl });
    expect(await eventsCommand.run([], all.ctx)).toBe(0);
    const lines = all
      .stdout()
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { sequence: number; type: string; path: string; resource: { id: number } });
    expect(lines.map((l) => l.sequence)).toEqual(lines.map((_, i) => i + 1));
    expect(lines.filter((l) => l.type === 'artist.created')).toHaveLength(2);
    expect(lines.filter((l) => l.type === 'song.created')).toHaveLength(4);

    const file = join(mkdtempSync(join(tmpdir(), 'mc-events-')), 'events.ndjson');
    const some = cliIo({ databaseUrl: source.databaseUrl });
    expect(await eventsCommand.run(['--after', '2', '--types', 'song.created', '--file', file], some.ctx)).toBe(0);
    const songs = lines.filter((l) => l.type === 'song.created' && l.sequence > 2);
    expect(readFileSync(file, 'utf8')).toBe(songs.map((l) => `${JSON.stringify(l)}\n`).join(''));
    expect(some.stderr()).toBe(`exported ${songs.length} events to ${file}\n`);
  });

  it('refuses an unknown type', async () => {
    const io = cliIo();
    await expect(eventsCommand.run(['--types', 'song.renamed'], io.ctx)).rejects.toThrow(/unknown event type song.renamed/);
  });
});
