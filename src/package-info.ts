import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's package.json, found upwards from this file (works from src/ and from dist/src/). */
function readPackage(): { name: string; version: string; description: string } {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) return JSON.parse(readFileSync(candidate, 'utf8')) as { name: string; version: string; description: string };
    const parent = dirname(dir);
    if (parent === dir) return { name: 'music-catalogue', version: '0.0.0', description: '' };
    dir = parent;
  }
}

export const packageInfo = Object.freeze(readPackage());
