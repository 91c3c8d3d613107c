export interface Progress {
  advance(by: number): void;
  done(): void;
}

const QUIET: Progress = { advance() {}, done() {} };

/**
 * A one-line progress bar, redrawn at most ~10 times a second. Only on a terminal: piped or
 * redirected output (CI, scripts) stays quiet.
 */
export function progressBar(stream: NodeJS.WritableStream & { isTTY?: boolean }, label: string, total: number): Progress {
  if (!stream.isTTY || total <= 0) return QUIET;
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
