#!/usr/bin/env node
// Thin launcher for the built CLI, dist/music-catalogue.mjs. `npm install`/`npm ci` build it once
// (the `prepare` script); after a source change, `npm run build` (or `npm run dev`) rebuilds it.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const built = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'music-catalogue.mjs');
if (!existsSync(built)) {
  console.error('music-catalogue: not built yet; run `npm run build` first');
  process.exit(1);
}
await import(pathToFileURL(built).href);
