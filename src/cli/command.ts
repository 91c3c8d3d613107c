import { parseArgs, type ParseArgsConfig } from 'node:util';

/** What a command may touch: its environment and two output streams (tests pass their own). */
export interface CliContext {
  env: Record<string, string | undefined>;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  /** Messages for the person at the terminal: progress, summaries, problems (never data). */
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** Standard input, for commands that read a stream (import). */
  stdin?: NodeJS.ReadableStream;
}

export interface Command {
  summary: string;
  usage: string;
  /** Resolves with the exit code. */
  run(args: string[], ctx: CliContext): Promise<number>;
}

/** A mistake in how a command was called: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Strict option parsing: unknown options and stray arguments are usage errors, not ignored. */
export function parseOptions<O extends Options>(args: string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

/** A whole number option within bounds. */
export function intOption(value: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`--${name} must be an integer between ${min} and ${max}, got "${value}"`);
  }
  return Number(value);
}

export function write(stream: NodeJS.WritableStream, text: string): void {
  stream.write(text.endsWith('\n') ? text : `${text}\n`);
}
