import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../process.js';

const COMMANDS = ['serve', 'migrate', 'token', 'seed', 'export', 'import', 'openapi'];

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
    for (const flag of ['--version', '-V']) {
      const res = await runCli([flag], { DATABASE_URL: 'sqlite:/nonexistent/dir/never.db' });
      expect(res).toEqual({ code: 0, stdout: `music-catalogue ${version}\n`, stderr: '' });
    }
  });
});
