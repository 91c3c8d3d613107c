import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../database.js';
import { startServerProcess, type ServerProcess } from '../process.js';

// The README's five-minute tour, run top to bottom in bash against a fresh database, and every output
// it shows checked against what the commands print. Shown output is either a block of `#   ` lines
// under a command or a `# ...` comment after it on the same line; `...` stands for any text.

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const ADMIN = 'dev-admin-token-change-me';
const START = `CATALOGUE_ADMIN_TOKEN=${ADMIN} npm start &`;

interface Step {
  command: string;
  shown: string[];
}

/** The tour's commands (continuations joined) with the output each shows. */
function tourSteps(): Step[] {
  const section = README.slice(README.indexOf('## A five-minute tour'));
  const block = /^```sh\n([\s\S]*?)^```/m.exec(section)![1]!;
  const steps: Step[] = [];
  for (const line of block.replace(/\\\n\s*/g, ' ').split('\n')) {
    if (/^# {3}/.test(line)) {
      steps[steps.length - 1]!.shown.push(line.slice(4).trim());
    } else if (line.trim() && !line.startsWith('#')) {
      const inline = /\s{2,}# (.*)$/.exec(line);
      steps.push({ command: inline ? line.slice(0, inline.index) : line, shown: inline ? [inline[1]!.trim()] : [] });
    }
  }
  return steps;
}

const matcher = (shown: string) =>
  new RegExp(
    `^${shown
      .split('...')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    'i',
  );

let database: TestDatabase;
let server: ServerProcess;
beforeAll(async () => {
  database = await freshDatabase();
  server = await startServerProcess({ DATABASE_URL: database.url, CATALOGUE_ADMIN_TOKEN: ADMIN });
});
afterAll(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  await database.drop();
});

describe('the README tour', () => {
  it('runs top to bottom on a fresh database, and every output it shows is what the commands print', async () => {
    const steps = tourSteps();
    expect(steps[0]!.command).toBe(START);
    expect(steps[1]!.command).toBe('B=http://127.0.0.1:3000');
    // The test started the service itself (on a free port): those two lines are replaced.
    const run = steps.slice(2);
    const script = [`set -eo pipefail`, `B=${server.url}`, ...run.map((s, i) => `printf '\\n@@%s\\n' ${i}; ${s.command} 2>&1`)].join('\n');
    const output = await new Promise<string>((resolve, reject) => {
      // The tour's seed uses the service's database, as `npm start` and `npm run seed` share the default one.
      const child = spawn('bash', ['-c', script], {
        cwd: new URL('../..', import.meta.url),
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: database.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`the tour failed (exit ${code}): ${err}\n${out}`))));
    });
    const outputs = output.split(/\n@@\d+\n/).slice(1);
    expect(outputs).toHaveLength(run.length);
    let checked = 0;
    run.forEach((step, i) => {
      const lines = outputs[i]!.split(/\r?\n/).map((l) => l.trim());
      let at = 0;
      for (const shown of step.shown) {
        const re = matcher(shown);
        const found = lines.findIndex((l, j) => j >= at && re.test(l));
        expect({ command: step.command, shown, found: found >= 0 }, outputs[i]).toEqual({ command: step.command, shown, found: true });
        at = found + 1;
        checked++;
      }
    });
    expect(checked).toBeGreaterThan(15);
  });
});
