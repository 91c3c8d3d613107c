import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../dist/music-catalogue.mjs', import.meta.url));

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<number | string>;
}

/**
 * Starts the built service (`music-catalogue serve`, or `node <args>` in `cwd` when given) and waits
 * until it says it listens.
 */
export async function startServerProcess(
  env: Record<string, string>,
  timeoutMs = 15_000,
  command: { args: string[]; cwd?: string } = { args: [CLI, 'serve'] },
): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, command.args, {
    cwd: command.cwd,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while (!err.includes('listening on')) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`server exited early: ${err || out}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start in time: ${err || out}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return { child, url, stdout: () => out, stderr: () => err, exited };
}

/** Runs the CLI to completion. */
export async function runCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? -1)));
  return { code, stdout, stderr };
}
