import type { Progress } from '../seed/seeder.js';

export type { Progress };

const QUIET: Progress = { advance() {}, done() {} };

/**
 * Progress of a long command, on its message stream (stderr: stdout stays for data). On a terminal a
 * one-line bar redrawn at most ~10 times a second; otherwise (CI, a redirected log) one plain line at each
 * tenth done, so a log shows the command is moving without being flooded by redraws.
 */
export function progressBar(stream: NodeJS.WritableStream & { isTTY?: boolean }, label: string, total: number): Progress {
  if (total <= 0) return QUIET;
  return stream.isTTY ? terminalBar(stream, label, total) : tenthLines(stream, label, total);
}

function terminalBar(stream: NodeJS.WritableStream, label: string, total: number): Progress {
  let current = 0;
  let drawnAt = 0;
  const draw = () => {
    const ratio = Math.min(1, current / total);
    const width = 30;
    const filled = Math.round(ratio * width);
    stream.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${current}/${total} ${(ratio * 100).toFixed(0)}%`);
  };
  return {
    advance(by) {
      current += by;
      const now = Date.now();
      if (now - drawnAt >= 100) {
        drawnAt = now;
        draw();
      }
    },
    done() {
      draw();
      stream.write('\n');
    },
  };
}

function tenthLines(stream: NodeJS.WritableStream, label: string, total: number): Progress {
  let current = 0;
  let tenthsWritten = 0;
  const line = () => stream.write(`${label}: ${current}/${total} (${Math.floor((Math.min(current, total) * 100) / total)}%)\n`);
  return {
    advance(by) {
      current += by;
      const tenths = Math.floor((Math.min(current, total) * 10) / total);
      // The last tenth is written by done(), once.
      if (tenths > tenthsWritten && tenths < 10) {
        tenthsWritten = tenths;
        line();
      }
    },
    done() {
      line();
    },
  };
}
