// Opens pages written by `keel-replay view` in headless Chromium (Debian's, driven with
// playwright-core) and checks what a person would: the first frame draws, no console
// errors, no request leaves the page, the canvas is not blank, scrubbing to a tick shows
// that tick's hash (as `keel-replay dump` reports it), clicking a body shows its id, and
// the first divergent tick of a desync is marked where `keel-replay diff` finds it.
// Screenshots land in the output folder.
//
//   node tests/viewer/view_page_test.mjs --keel-replay build/bin/keel-replay \
//        --replay-tests build/bin/keel_replay_tests --out build/viewer-test
//
// Exit 0 passed, 1 failed, 77 skipped (no Chromium on this machine).
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { checkList, commandLine, findChromium } from './browser_harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = commandLine();
const replayBin = resolve(args['keel-replay'] || 'build/bin/keel-replay');
const testsBin = resolve(args['replay-tests'] || 'build/bin/keel_replay_tests');
const out = resolve(args.out || 'build/viewer-test');
const { chromium, chromiumPath } = await findChromium(args);
const { failures, check } = checkList();
const run = (bin, argv, env) => execFileSync(bin, argv, { encoding: 'utf8', env: { ...process.env, ...env } });

// The recordings: the scripted demo session twice, the second nudged at tick 240.
mkdirSync(out, { recursive: true });
run(testsBin, ['--gtest_filter=ViewExample.*'], { KEEL_VIEW_EXAMPLE_DIR: out });
const server = join(out, 'server.krec'), client = join(out, 'client.krec');
const plainPage = join(out, 'server.html'), desyncPage = join(out, 'desync.html');
run(replayBin, ['view', server, '--out', plainPage]);
run(replayBin, ['view', server, '--against', client, '--out', desyncPage]);
const diffText = (() => { try { return run(replayBin, ['diff', server, client]); } catch (e) { return e.stdout; } })();
const diffTick = Number(/first differing tick: (\d+)/.exec(diffText)[1]);
const diffBody = Number(/^ {2}(\d+) +[a-z_]+\.[xyzw] /m.exec(diffText)[1]);
const dumpHash = (tick) => JSON.parse(run(replayBin, ['dump', server, '--tick', String(tick)])).recorded_hash;

const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
});
const deadline = setTimeout(() => { console.error('FAILED: the browser test took longer than 60 s'); process.exit(1); }, 60000);

async function open(path) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
  const errors = [], requests = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) requests.push(r.url()); });
  await page.goto('file://' + path);
  await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 20000 });
  return { page, errors, requests };
}

// Distinct colours in a 64x64 copy of the WebGL canvas: a blank canvas has one.
const canvasColours = (page) => page.evaluate(() => {
  const src = document.querySelector('#view canvas');
  const c = document.createElement('canvas');
  c.width = c.height = 64;
  const g = c.getContext('2d');
  g.drawImage(src, 0, 0, 64, 64);
  const d = g.getImageData(0, 0, 64, 64).data;
  const seen = new Set();
  for (let i = 0; i < d.length; i += 4) seen.add((d[i] >> 3) << 10 | (d[i + 1] >> 3) << 5 | d[i + 2] >> 3);
  return seen.size;
});

async function scrub(page, tick) {
  await page.evaluate((t) => {
    const r = document.getElementById('timeline');
    r.value = String(t);
    r.dispatchEvent(new Event('input', { bubbles: true }));
  }, tick);
  return { tick: await page.textContent('#tick'), hash: await page.textContent('#hash') };
}

try {
  // 1. A recording on its own.
  {
    const { page, errors, requests } = await open(plainPage);
    const size = statSync(plainPage).size;
    check(true, `opened ${plainPage} (${(size / 1e6).toFixed(2)} MB)`);
    const colours = await canvasColours(page);
    check(colours > 8, `the canvas is drawn (${colours} distinct colours)`);
    for (const tick of [0, 123, 600]) {
      const shown = await scrub(page, tick);
      const expected = dumpHash(tick);
      check(shown.tick === String(tick) && shown.hash === expected, `scrubbed to tick ${tick}: page shows tick ${shown.tick} hash ${shown.hash}, keel-replay dump says ${expected}`);
    }
    // Click the middle of a dynamic box (scene body 2) and expect its id in the panel.
    await scrub(page, 30);
    const at = await page.evaluate(() => window.keelViewer.screenOf(2));
    if (at) await page.mouse.click(at.x, at.y);
    const selected = await page.textContent('#selection');
    check(at !== null && /^id2motion/.test(selected.replace(/\s+/g, '')), `clicking body 2 selects it ("${selected.slice(0, 60)}")`);
    await page.check('#contacts');
    await page.screenshot({ path: join(out, 'viewer.png') });
    check(errors.length === 0, `no console errors (${errors.join(' | ')})`);
    check(requests.length === 0, `no network requests (${requests.join(' ')})`);
    await page.close();
  }
  // 2. A desync investigation: the page opens at the first divergent tick.
  {
    const { page, errors, requests } = await open(desyncPage);
    const tick = await page.textContent('#tick');
    check(tick === String(diffTick), `the desync page opens at the first divergent tick ${tick} (keel-replay diff: ${diffTick})`);
    const marked = await page.evaluate(() => document.querySelector('.mark.diverge')?.title || '');
    check(marked.includes(String(diffTick)), `the timeline marks it ("${marked}")`);
    const list = await page.$$eval('#divlist li', (lis) => lis.map((li) => li.textContent));
    check(list.length > 0 && list[0].startsWith(`body ${diffBody}`), `the divergence list starts with body ${diffBody} (${list.slice(0, 3).join('; ')})`);
    const later = await scrub(page, 420);
    const spread = await page.$$eval('#divlist li', (lis) => lis.length);
    check(later.tick === '420' && spread >= 1, `at tick 420, ${spread} bodies differ`);
    await page.click('#divlist li:first-child');
    const picked = (await page.textContent('#selection')).replace(/\s+/g, ' ');
    check(/position error/.test(picked), `picking the first body of the list shows its position error ("${picked.slice(0, 80)}...")`);
    const colours = await canvasColours(page);
    check(colours > 8, `the canvas is drawn (${colours} distinct colours)`);
    await page.screenshot({ path: join(out, 'viewer-desync.png') });
    check(errors.length === 0, `no console errors (${errors.join(' | ')})`);
    check(requests.length === 0, `no network requests (${requests.join(' ')})`);
    await page.close();
  }
} catch (e) {
  failures.push(String(e.stack || e));
  console.error(e);
} finally {
  clearTimeout(deadline);
  await browser.close();
}
console.log(failures.length ? `FAILED: ${failures.length} check(s)` : `passed; screenshots in ${out}`);
process.exit(failures.length ? 1 : 0);
