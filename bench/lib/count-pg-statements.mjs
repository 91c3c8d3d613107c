// Preloaded into the service and its workers by bench/pg-statements.mjs (node --import): counts the
// statements each process sends through the pg driver, by text, and writes the running counts to
// $PG_STATEMENTS_DIR/<pid>.json (through a rename, so a reader never sees half a file) every 200 ms.
// Nothing else changes: the driver's own query() runs as before. The service loads pg with require
// (the same module object this patches).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const dir = process.env.PG_STATEMENTS_DIR;
let pg;
try {
  pg = dir ? createRequire(path.join(process.cwd(), 'package.json'))('pg') : undefined;
} catch {
  pg = undefined;
}
if (pg) {
  const counts = new Map();
  let changed = false;
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (...args) {
    const config = args[0];
    const text = typeof config === 'string' ? config : config?.text || '?';
    counts.set(text, (counts.get(text) ?? 0) + 1);
    changed = true;
    return original.apply(this, args);
  };
  const file = path.join(dir, `${process.pid}.json`);
  setInterval(() => {
    if (!changed) return;
    changed = false;
    fs.writeFileSync(`${file}.tmp`, JSON.stringify([...counts]));
    fs.renameSync(`${file}.tmp`, file);
  }, 200).unref();
}
