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
 * Starts the built service (`music-catalogue serve`, or `node <args>` in `cwd` when given) and
 * resolves once it says it listens; rejects if it exits first. `timeoutMs` only ends a start that
 * hangs (the process is killed): it is far longer than any start takes, however loaded the machine.
 */
export async function startServerProcess(
  env: Record<string, string>,
  timeoutMs = 60_000,
  command: { args: string[]; cwd?: string } = { args: [CLI, 'serve'] },
): Promise<ServerProcess> {
  // Port 0: the system picks a free port as the server binds it (a port found free beforehand may
  // be taken by someone else before the server gets to it); the server says which one it got.
  const child = spawn(process.execPath, command.args, {
    cwd: command.cwd,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const url = await new Promise<string>((resolve, reject) => {
    const hung = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start: ${err || out}`));
    }, timeoutMs);
    // Operator messages ("listening on ...") are on stderr.
    const listening = () => {
      const said = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (said) {
        clearTimeout(hung);
        resolve(said[1]!);
      }
    };
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      listening();
    });
    // 'close' comes after the output is read to its end, so the message carries all of it.
    child.once('close', () => {
      clearTimeout(hung);
      reject(new Error(`server exited early: ${err || out}`));
    });
  });
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
