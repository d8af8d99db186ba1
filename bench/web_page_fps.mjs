// The sandbox page's frame rate (docs/performance.md, "The sandbox page's frame rate"): a
// keel-server with --web and --web-client on loopback, the page in headless Chromium
// (Debian's, through tests/viewer's playwright-core, software WebGL: SwiftShader), and the
// requestAnimationFrame callbacks the page gets over a few seconds once its wasm32 client
// plays and every body is drawn. Rounds alternate between the scenes given, so that a
// change in the machine's load falls on all of them alike; the medians are printed.
//
//   node bench/web_page_fps.mjs --keel-server build/bin/keel-server --web-client build/web-client/page \
//        [--scenes scenes/demo.json,grid200,scenes/pyramid.json] [--rounds 3] [--seconds 5]
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { commandLine, findChromium, freePort, sleep } from '../tests/viewer/browser_harness.mjs';

const args = commandLine();
const serverBin = resolve(args['keel-server'] || 'build/bin/keel-server');
const webClient = resolve(args['web-client'] || 'build/web-client/page');
const rounds = Number(args.rounds || 3), seconds = Number(args.seconds || 5);
const { chromium, chromiumPath } = await findChromium(args);
const work = mkdtempSync(join(tmpdir(), 'keel-page-fps-'));

// "grid200": 200 bodies (boxes, spheres and capsules in turn) resting apart on a floor, so
// that they fall asleep and the prediction costs little: what is left is the drawing.
function gridScene(count) {
  const shapes = [{ shape: 'Box', half_extents: { x: 0.25, y: 0.25, z: 0.25 } }, { shape: 'Sphere', radius: 0.25 },
    { shape: 'Capsule', radius: 0.25, half_height: 0.25 }];
  const bodies = [{ id: 1, motion: 'Static', position: { x: 0, y: -0.5, z: 0 }, colliders: [{ shape: 'Box', half_extents: { x: 40, y: 0.5, z: 40 } }] }];
  for (let i = 0; i < count; ++i) {
    const c = shapes[i % 3];
    bodies.push({ id: i + 2, motion: 'Dynamic', position: { x: (i % 20) * 1.2 - 11.4, y: c.shape === 'Capsule' ? 0.5 : 0.25, z: Math.floor(i / 20) * 1.2 - 5.4 },
      colliders: [{ ...c, friction: 0.6, density: 500 }] });
  }
  const file = join(work, `grid${count}.json`);
  writeFileSync(file, JSON.stringify({ name: `grid${count}`, tick_rate: 60, gravity: { x: 0, y: -9.81, z: 0 }, bodies }));
  return file;
}
const scenes = (args.scenes || 'scenes/demo.json,grid200,scenes/pyramid.json').split(',')
  .map((s) => (s === 'grid200' ? gridScene(200) : resolve(s)));

async function oneRound(browser, scene) {
  const [wsPort, webPort] = [await freePort(), await freePort()];
  const server = spawn(serverBin, ['--scene', scene, '--bind', '127.0.0.1:0', '--websocket', `127.0.0.1:${wsPort}`,
    '--web', `127.0.0.1:${webPort}`, '--web-client', webClient, '--record', join(work, 'rec'), '--status-interval', '0'],
  { stdio: ['ignore', openSync(join(work, 'server.txt'), 'a'), openSync(join(work, 'server.txt'), 'a')] });
  try {
    const origin = `http://127.0.0.1:${webPort}`;
    for (let i = 0; i < 100; ++i) { try { if ((await fetch(origin + '/')).ok) break; } catch { /* not up yet */ } await sleep(50); }
    const page = await browser.newPage({ viewport: { width: 960, height: 540 } });
    await page.goto(origin + '/');
    // Playing, and every body of the description drawn.
    await page.waitForFunction(() => window.keelPage && window.keelPage.stats().hash_checks > 60 &&
      window.keelPage.drawnBodies() === window.keelPage.stats().bodies, null, { timeout: 30000 });
    const before = await page.evaluate(() => window.keelPage.cost());
    const result = await page.evaluate((ms) => new Promise((done) => {
      let frames = 0;
      const start = performance.now();
      const tick = (t) => { if (t - start < ms) { ++frames; requestAnimationFrame(tick); } else done({ frames, ms: t - start }); };
      requestAnimationFrame(tick);
    }), seconds * 1000);
    const s = await page.evaluate(() => window.keelPage.stats());
    const after = await page.evaluate(() => window.keelPage.cost());
    await page.close();
    // Of each second of the window: the milliseconds in the client's update and in drawing
    // (the JavaScript side of it; the rasterising runs in Chromium's GPU process).
    const per = (k) => ((after[k] - before[k]) * 1000) / result.ms;
    return { fps: (result.frames * 1000) / result.ms, bodies: s.bodies, mismatches: s.hash_mismatches,
      skipped: s.inputs_skipped, updateMs: per('updateMs'), drawMs: per('drawMs') };
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => (server.exitCode !== null ? r() : server.on('exit', r)));
  }
}

const browser = await chromium.launch({
  executablePath: chromiumPath, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--use-angle=swiftshader',
    '--enable-unsafe-swiftshader'],
});
const results = new Map(scenes.map((s) => [s, []]));
for (let r = 0; r < rounds; ++r) {
  for (const scene of scenes) {
    const x = await oneRound(browser, scene);
    results.get(scene).push(x);
    console.log(`round ${r + 1} ${scene}: ${x.fps.toFixed(1)} frames/s, ${x.bodies} bodies, ${x.mismatches} mismatches, ${x.skipped} input ticks skipped, ` +
      `update ${x.updateMs.toFixed(0)} ms/s, drawing ${x.drawMs.toFixed(0)} ms/s`);
  }
}
await browser.close();
rmSync(work, { recursive: true, force: true });
const median = (v) => { const s = [...v].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
for (const [scene, xs] of results) {
  console.log(`median ${scene}: ${median(xs.map((x) => x.fps)).toFixed(1)} frames/s with ${xs[0].bodies} bodies; ` +
    `update ${median(xs.map((x) => x.updateMs)).toFixed(0)} ms/s, drawing ${median(xs.map((x) => x.drawMs)).toFixed(0)} ms/s`);
}
