#!/usr/bin/env node
// Thin launcher: the CLI lives in the compiled output (run `npm run build` once, or `npm start`).
import('../dist/music-catalogue.mjs').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND') {
    console.error('music-catalogue: not built yet; run `npm run build` first');
    process.exit(1);
  }
  throw err;
});
