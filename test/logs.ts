import { Writable } from 'node:stream';

export interface LogLine {
  level: number;
  msg?: string;
  [key: string]: unknown;
}

/** Pino levels, as numbers in the JSON lines. */
export const LEVEL = { info: 30, warn: 40, error: 50 } as const;

/**
 * A logger destination that keeps every JSON line, for `buildApp(config, { logger: { level, stream } })`.
 * `next(match)` resolves when a line matching it is written (an event, never a sleep).
 */
export function captureLogs() {
  const lines: LogLine[] = [];
  const waiting: Array<{ match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString().split('\n').filter(Boolean)) {
        const line = JSON.parse(text) as LogLine;
        lines.push(line);
        for (const w of [...waiting]) {
          if (w.match(line)) {
            waiting.splice(waiting.indexOf(w), 1);
            w.resolve(line);
          }
        }
      }
      done();
    },
  });
  return {
    stream,
    lines,
    next(match: (line: LogLine) => boolean): Promise<LogLine> {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiting.push({ match, resolve }));
    },
  };
}
