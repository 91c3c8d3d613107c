import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../database.js';
import { startServerProcess, type ServerProcess } from '../process.js';
import { WORKER_HEAP_GROWING_PERCENT, WORKER_MALLOC_ARENAS, WORKER_SEMI_SPACE_MB, workerEnv, workerExecArgv } from '../../src/cluster.js';

// WORKERS=2: two processes behind one port (node:cluster hands connections out in turn). Whatever a
// worker remembers (cached answers, totals, page boundaries) is stamped with table versions in the
// database, so a write through one worker is seen by the other's very next answer.

const TOKEN = 'workers-test-admin-token-0123456';
let database: TestDatabase;
let server: ServerProcess;

/** The pids of the processes whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid ...": comm may hold spaces, so read past its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** A GET on a connection of its own: consecutive ones are handed to the workers in turn. */
async function freshGet(path: string): Promise<{ status: number; total: string | null; body: unknown }> {
  const res = await fetch(server.url + path, { headers: { authorization: `Bearer ${TOKEN}`, connection: 'close' } });
  return { status: res.status, total: res.headers.get('x-total-count'), body: await res.json() };
}

beforeAll(async () => {
  database = await freshDatabase();
  server = await startServerProcess({ DATABASE_URL: database.url, CATALOGUE_ADMIN_TOKEN: TOKEN, RATE_LIMIT_PER_MINUTE: '0', WORKERS: '2' });
  // The primary says "listening on" once every worker listens, so connections go to both in turn.
});
afterAll(async () => {
  if (server.child.exitCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  await database.drop();
});

describe('WORKERS=2', () => {
  it('says "listening on" once, with the number of workers, when every worker listens (not once per worker)', () => {
    const lines = server
      .stderr()
      .split('\n')
      .filter((line) => line.includes('listening on'));
    expect(lines).toEqual([expect.stringMatching(/^music-catalogue listening on http:\/\/127\.0\.0\.1:\d+ \(2 workers, database: /)]);
  });

  it('serves from two worker processes, each with the smaller young generation (WORKER_SEMI_SPACE_MB), old generation steps (WORKER_HEAP_GROWING_PERCENT) and malloc arenas (WORKER_MALLOC_ARENAS)', () => {
    const workers = childrenOf(server.child.pid!);
    expect(workers).toHaveLength(2);
    for (const pid of workers) {
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toContain(`--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`);
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toContain(`--heap-growing-percent=${WORKER_HEAP_GROWING_PERCENT}`);
      expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toContain(`MALLOC_ARENA_MAX=${WORKER_MALLOC_ARENAS}`);
    }
  });

  it('a write through one worker is in the next list and total of every worker, cached answers included', async () => {
    const path = '/users?lives_in=iceland&sort=age:asc';
    // Each worker answers it, and caches its answer.
    for (let i = 0; i < 6; i++) expect((await freshGet(path)).total).toBe('0');

    const created = await fetch(`${server.url}/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({ first_name: 'Björk', last_name: 'Gudmundsdottir', email: 'bjork@example.com', age: 30, status: 'active', country: 'Iceland' }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };

    for (let i = 0; i < 6; i++) {
      const res = await freshGet(path);
      expect(res.status).toBe(200);
      expect(res.total).toBe('1');
      expect((res.body as { id: number }[]).map((u) => u.id)).toEqual([id]);
    }
  });

  it('refuses several workers with per-process rate limits, naming the variable', async () => {
    await expect(startServerProcess({ DATABASE_URL: database.url, CATALOGUE_ADMIN_TOKEN: TOKEN, WORKERS: '2', RATE_LIMIT_PER_MINUTE: '60' })).rejects.toThrow(
      /WORKERS=2 needs REDIS_URL \(shared rate limits\) or RATE_LIMIT_PER_MINUTE=0/,
    );
  });

  it('stops every worker and exits 0 on SIGTERM', async () => {
    const workers = childrenOf(server.child.pid!);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
  });
});

describe('workerExecArgv', () => {
  it("adds the semi-space size and the heap growing percent to the primary's flags, each unless they or NODE_OPTIONS set it", () => {
    const semi = `--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`;
    const growing = `--heap-growing-percent=${WORKER_HEAP_GROWING_PERCENT}`;
    expect(workerExecArgv(['--enable-source-maps'])).toEqual(['--enable-source-maps', semi, growing]);
    expect(workerExecArgv(['--max-semi-space-size=32'])).toEqual(['--max-semi-space-size=32', growing]);
    expect(workerExecArgv([], '--max_semi_space_size=2 --trace-warnings')).toEqual([growing]);
    expect(workerExecArgv([], '--max-semi-space-size-x')).toEqual([semi, growing]);
    expect(workerExecArgv(['--heap_growing_percent=50'])).toEqual(['--heap_growing_percent=50', semi]);
  });
});

describe('workerEnv', () => {
  it("adds MALLOC_ARENA_MAX to the workers' environment, unless the primary's sets one", () => {
    expect(workerEnv({ PATH: '/usr/bin' })).toEqual({ MALLOC_ARENA_MAX: String(WORKER_MALLOC_ARENAS) });
    expect(workerEnv({ MALLOC_ARENA_MAX: '8' })).toEqual({});
  });
});
