// npm's `prepare` (run by `npm install` and `npm ci` in this directory): build dist/ once, at install,
// so that `npm start` only runs the built file and needs no dev dependency.
//
// Without the dev dependencies (`npm ci --omit=dev`, e.g. a production image that copies dist/ from
// a build stage) nothing can be built: the install goes on, keeping whatever build is there, and says so.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const installed = (name) => {
  try {
    require.resolve(`${name}/package.json`);
    return true;
  } catch {
    return false;
  }
};

if (installed('typescript') && installed('esbuild')) {
  // npm_execpath is the npm running this script; the same npm runs the build.
  const npm = process.env.npm_execpath;
  const result = npm
    ? spawnSync(process.execPath, [npm, 'run', '--silent', 'build'], { stdio: 'inherit' })
    : spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
const built = existsSync(fileURLToPath(new globalThis.URL('../dist/music-catalogue.mjs', import.meta.url)));
process.stderr.write(
  built
    ? 'music-catalogue: dev dependencies not installed; keeping the existing build dist/music-catalogue.mjs\n'
    : 'music-catalogue: dev dependencies not installed and no build in dist/: build with `npm ci && npm run build` and copy dist/ here\n',
);
