import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The shell examples in the README and docs/ are meant to be pasted. curl reads `[a,b]` and `{a,b}`
// in a URL as its own globbing syntax (and fails or fans out), so a command whose URL holds them
// must turn globbing off with -g (--globoff).

const root = join(import.meta.dirname, '..', '..');
const files = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
];

/** Each shell command of the fenced sh/bash blocks of a markdown text, continuation lines joined. */
function shellCommands(markdown: string): string[] {
  const commands: string[] = [];
  for (const block of markdown.matchAll(/^```(?:sh|bash|shell|console)\n([\s\S]*?)^```/gm)) {
    const joined = block[1]!.replace(/\\\n\s*/g, ' ');
    commands.push(
      ...joined
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line && !line.startsWith('#')),
    );
  }
  return commands;
}

function curlArgs(command: string): string[] | undefined {
  const at = command.search(/(^|[\s(|;&])curl\s/);
  if (at < 0) return undefined;
  const words = command.slice(at).match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
  return words.slice(1);
}

const globsOff = (args: string[]) => args.some((a) => a === '--globoff' || /^-[a-zA-Z]*g[a-zA-Z]*$/.test(a));
/** The URL arguments (the tour's `$B/...` or a literal http(s) URL); request bodies may hold braces freely. */
const urls = (args: string[]) => args.map((a) => a.replace(/^["']|["']$/g, '')).filter((a) => /^(\$B|\$\{B\}|https?:\/\/)/.test(a));
const hasGlobSyntax = (args: string[]) => urls(args).some((url) => /[[\]{}]/.test(url.replace(/^\$\{B\}/, '')));

describe('shell examples in the documentation', () => {
  it.each(files)('%s: every curl URL with brackets or braces turns curl globbing off (-g)', (file) => {
    const offending = shellCommands(readFileSync(join(root, file), 'utf8'))
      .map(curlArgs)
      .filter((args): args is string[] => args !== undefined && hasGlobSyntax(args) && !globsOff(args));
    expect(offending).toEqual([]);
  });

  it('finds the bracketed list example of the README tour (the check above is not vacuous)', () => {
    const commands = shellCommands(readFileSync(join(root, 'README.md'), 'utf8')).map(curlArgs);
    expect(commands.filter((args) => args && hasGlobSyntax(args)).length).toBeGreaterThan(0);
  });
});
