import { describe, expect, it } from 'vitest';

// The harness is plain .mjs (run without a build step); loaded by path so the type checker leaves it be.
const lib = (name: string) => new URL(`../../bench/lib/${name}.mjs`, import.meta.url).href;
type Measurement = { rps: number; p50: number; p99: number; errors: number; peakRss?: number };
type Target = { target: string; measured?: string; status: string };
const { evaluateTargets } = (await import(lib('targets'))) as {
  evaluateTargets: (best: Record<string, Record<string, Measurement>>, extra: { readyMs?: number; peakRss?: number }) => Target[];
};
const { chartSvg } = (await import(lib('chart'))) as { chartSvg: (s: { id: string; title: string }[], best: Record<string, Record<string, Measurement>>) => string };
const { parseOptions } = (await import(lib('options'))) as { parseOptions: (argv: string[]) => Record<string, unknown> };
const { summarise } = (await import(lib('profile'))) as { summarise: (p: unknown, top?: number) => string };

const m = (rps: number, p50 = 1, p99 = 5, errors = 0): Measurement => ({ rps, p50, p99, errors });
const statusOf = (targets: Target[], prefix: string) => targets.find((t) => t.target.startsWith(prefix))?.status;

describe('bench targets', () => {
  it('judges each target from the measured figures', () => {
    const targets = evaluateTargets(
      {
        'get-artist': { ceiling: m(10_000), service: m(7_500), postgres: m(4_000) },
        'get-songs': { ceiling: m(10_000), service: m(6_000), postgres: m(2_000) },
        'users-p50': { service: m(12_000, 2, 9.5) },
        'users-p4000-c1': { service: m(800, 5.2) },
        'post-song': { service: m(5_500, 3, 9, 1) },
      },
      { readyMs: 400, peakRss: 160 * 1024 * 1024 },
    );
    expect(statusOf(targets, 'GET an artist')).toBe('met');
    expect(statusOf(targets, 'GET the songs')).toBe('NOT met');
    expect(statusOf(targets, 'Users list (page 50): >=')).toBe('met');
    expect(statusOf(targets, 'Users list (page 50): p99')).toBe('met');
    expect(statusOf(targets, 'Users list page 4000')).toBe('NOT met');
    expect(statusOf(targets, 'POST a song')).toBe('NOT met'); // fast enough, but an error is not an acknowledged write
    expect(statusOf(targets, 'Peak RSS')).toBe('NOT met');
    expect(statusOf(targets, 'Start to ready')).toBe('met');
    expect(targets.find((t) => t.target.startsWith('PostgreSQL'))).toMatchObject({ status: 'NOT met', measured: expect.stringContaining('get-songs') });
  });

  it('says "not measured" for a scenario that did not run', () => {
    const targets = evaluateTargets({}, {});
    expect(targets.every((t) => t.status === 'not measured')).toBe(true);
  });
});

describe('bench chart', () => {
  it('draws one bar per side and scenario, with escaped titles', () => {
    const svg = chartSvg([{ id: 'a', title: 'GET <artist>' }], { a: { ceiling: m(50_000), service: m(20_000), peer: m(3) } });
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('GET &lt;artist&gt;');
    expect(svg.match(/<\/title><\/rect>/g)).toHaveLength(3);
  });
});

describe('bench options', () => {
  it('scales down with --quick and rejects unknown flags', () => {
    expect(parseOptions(['--quick'])).toMatchObject({ users: 100_000, artists: 1_000, peerUsers: 100_000 });
    expect(parseOptions([])).toMatchObject({ users: 1_000_000, artists: 10_000, connections: 32 });
    expect(() => parseOptions(['--nope'])).toThrow(/unknown option/);
  });
});

describe('bench profile summary', () => {
  it('ranks functions and packages by self time', () => {
    const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 9 });
    const text = summarise({
      nodes: [
        { callFrame: frame('executeQuery', 'file:///x/node_modules/kysely/dist/esm/driver.js'), hitCount: 30 },
        { callFrame: frame('handler', 'file:///x/dist/src/modules/artists/artists.routes.js'), hitCount: 10 },
        { callFrame: frame('(garbage collector)', ''), hitCount: 60 },
      ],
    });
    expect(text).toMatch(/60\.0%\s+GC/);
    expect(text).toMatch(/30\.0%\s+executeQuery kysely\/dist\/esm\/driver\.js:10/);
    expect(text).toMatch(/10\.0%\s+service \(dist\/src\)/);
  });
});
