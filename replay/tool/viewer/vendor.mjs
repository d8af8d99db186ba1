// Regenerates vendor/three-bundle.min.js from the pinned three package (package-lock.json):
//   cd replay/viewer && npm ci && npm run vendor
// The bundle is committed, so building Keel needs neither Node.js nor the npm registry.
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

const version = JSON.parse(readFileSync('node_modules/three/package.json', 'utf8')).version;
execFileSync('node_modules/.bin/esbuild', [
  'src/three-entry.js', '--bundle', '--minify', '--format=iife', '--global-name=KEEL_THREE',
  '--legal-comments=none', '--target=es2020', '--outfile=vendor/three-bundle.body.js',
], { stdio: 'inherit' });
const body = readFileSync('vendor/three-bundle.body.js', 'utf8');
const header = `/**
 * @license
 * three.js ${version} (https://threejs.org), the parts the Keel viewer uses, bundled and
 * minified from the npm package by replay/viewer/vendor.mjs.
 * Copyright 2010-2026 Three.js Authors
 * SPDX-License-Identifier: MIT (full text: replay/viewer/vendor/three-LICENSE)
 */
`;
writeFileSync('vendor/three-bundle.min.js', header + body);
rmSync('vendor/three-bundle.body.js');
copyFileSync('node_modules/three/LICENSE', 'vendor/three-LICENSE');
console.log(`vendor/three-bundle.min.js: three ${version}, ${(header.length + body.length) / 1024 | 0} KiB`);
