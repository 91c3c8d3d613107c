// The machine description printed with every result.
import os from 'node:os';
import { readFileSync } from 'node:fs';

function osName() {
  try {
    return /^PRETTY_NAME="?([^"\n]+)/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? os.type();
  } catch {
    return os.type();
  }
}

export function machine() {
  return {
    cpus: os.availableParallelism(),
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${osName()} (${os.release()})`,
    node: process.version,
    // Other work on the machine skews every side; the 1-minute load average says how much there was.
    loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
  };
}
