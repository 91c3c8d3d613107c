import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, runCli } from '../process.js';

const COMMANDS = ['serve', 'migrate', 'token', 'seed', 'export', 'import', 'events', 'backup', 'restore', 'openapi', 'version'];

describe('music-catalogue --help', () => {
  it('lists every command', async () => {
    const res = await runCli(['--help']);
    expect(res.code).toBe(0);
    for (const c of COMMANDS) expect(res.stdout).toMatch(new RegExp(`^  ${c} `, 'm'));
  });

  it('prints the usage of every command with --help, touching no database', async () => {
    const results = await Promise.all(COMMANDS.map((c) => runCli([c, '--help'], { DATABASE_URL: 'sqlite:/nonexistent/dir/never.db' })));
    results.forEach((res, i) => {
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(new RegExp(`^music-catalogue ${COMMANDS[i]}`));
      expect(res.stderr).toBe('');
    });
  });

  it('takes a command named like a property of every object (constructor, __proto__) as unknown, exit code 2', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const res = await runCli([name], { DATABASE_URL: 'sqlite:/nonexistent/dir/never.db' });
      expect([name, res.code]).toEqual([name, 2]);
      expect(res.stderr).toMatch(new RegExp(`^music-catalogue: unknown command "${name}"\n`));
      expect(res.stderr).toContain('Usage: music-catalogue <command>');
    }
  });

  it('rejects an unknown option with exit code 2 and the usage', async () => {
    const res = await runCli(['seed', '--artist', '3']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("Unknown option '--artist'");
    expect(res.stderr).toContain('music-catalogue seed [options]');
  });
});

describe('music-catalogue --version', () => {
  it("prints the package's version and nothing else, touching no database", async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['version', '--version', '-v', '-V']) {
      const res = await runCli([flag], { DATABASE_URL: 'sqlite:/nonexistent/dir/never.db' });
      expect([flag, res]).toEqual([flag, { code: 0, stdout: `music-catalogue ${version}\n`, stderr: '' }]);
    }
  });
});

describe('a reader that closes the pipe early (EPIPE)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mc-epipe-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** `music-catalogue <args> | head -c 1` under pipefail: the command's own exit code and stderr. */
  const throughHead = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ code: number; head: string; stderr: string }>((resolve) => {
      const child = spawn('bash', ['-c', `set -o pipefail; "${process.execPath}" "${CLI}" "$@" 2>"${dir}/stderr" | head -c 1`, 'bash', ...args], {
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let head = '';
      child.stdout.on('data', (d: Buffer) => (head += d.toString()));
      child.once('close', (code) => resolve({ code: code ?? -1, head, stderr: readFileSync(join(dir, 'stderr'), 'utf8') }));
    });

  it('ends quietly with exit code 0 on openapi, export and events, whose output is far larger than a pipe holds', async () => {
    const env = { DATABASE_URL: `sqlite:${join(dir, 'big.db')}` };
    expect((await runCli(['seed', '--artists', '60', '--users', '0'], env)).code).toBe(0);
    for (const args of [['openapi'], ['export'], ['events'], ['--help']]) {
      const res = await throughHead(args, env);
      expect([args, res]).toEqual([args, { code: 0, head: args[0] === '--help' ? 'U' : '{', stderr: '' }]);
    }
  });
});

describe('settings from a file (node --env-file, README "Configuration")', () => {
  it('reads DATABASE_URL from the file, and the environment wins over it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mc-envfile-'));
    try {
      writeFileSync(join(dir, '.env'), `DATABASE_URL=sqlite:${join(dir, 'from-file.db')}\nLOG_LEVEL=silent\n`);
      const run = (env: Record<string, string>) =>
        new Promise<number>((resolve) => {
          const child = spawn(process.execPath, [`--env-file=${join(dir, '.env')}`, CLI, 'migrate'], {
            env: { PATH: process.env.PATH ?? '', ...env },
            stdio: 'ignore',
          });
          child.once('exit', (code) => resolve(code ?? -1));
        });
      expect(await run({})).toBe(0);
      expect(existsSync(join(dir, 'from-file.db'))).toBe(true);
      expect(await run({ DATABASE_URL: `sqlite:${join(dir, 'from-env.db')}` })).toBe(0);
      expect(existsSync(join(dir, 'from-env.db'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
