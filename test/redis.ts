import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './process.js';

export interface TestRedis {
  url: string;
  stop(): Promise<void>;
}

/** What redis-server says when the port it was given was taken meanwhile. */
const PORT_TAKEN = /Address already in use/;

/**
 * A Redis server of the test's own (Debian's redis-server), on a free loopback port, nothing saved to
 * disk: no state shared with any other test file or user of the machine. Ready once it says so.
 * A port found free (`pickPort`, freePort by default) may be bound by another process before
 * redis-server binds it: when it says so, another port is picked and the start tried again (as the
 * scale harness does for PostgreSQL).
 */
export async function startRedis(pickPort: () => Promise<number> = freePort): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'mc-redis-'));
  for (;;) {
    const port = await pickPort();
    const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const ready = await new Promise<boolean>((resolve, reject) => {
      child.once('error', reject);
      // 'close', not 'exit': its output is read to the end by then.
      child.once('close', (code) => (PORT_TAKEN.test(out) ? resolve(false) : reject(new Error(`redis-server exited (${code}): ${out}`))));
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) resolve(true);
      });
    });
    if (!ready) continue;
    child.removeAllListeners('close');
    return {
      url: `redis://127.0.0.1:${port}`,
      async stop() {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}
