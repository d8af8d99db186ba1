// Opens the page keel-server --web serves (docs/browser.md) in headless Chromium (Debian's,
// driven with playwright-core from tests/viewer/node_modules) against a live keel-server on
// loopback, and checks the leg that works today: the page loads with no console error and
// no request to another origin, fetches a token from /token, and opens the WebSocket the
// token names, which the server counts (keel_websocket_connections on /metrics).
// With --web-client DIR (the folder scripts/build-web-client.sh writes, served by
// keel-server --web-client) the page also loads the wasm32 client, and a second page (its
// own browser context and token) joins the same match: page A spawns a box, a sphere and a
// capsule by clicking free ground, drags its box up and flips the gravity; page B sees each
// of these; both reach 600 confirmed ticks with 0 hash mismatches. Then the server stops and
// its recording must verify with keel-replay and hold those inputs (export --inputs, dump).
// A screenshot of page A dragging lands in the output folder (docs/images/browser-page-sandbox.png).
//
//   node tests/web/page_test.mjs --keel-server build/bin/keel-server --scene scenes/demo.json --out build/web-test \
//        [--web-client build/web-client/page] [--keel-replay build/bin/keel-replay]
//
// Exit 0 passed, 1 failed, 77 skipped (no Chromium on this machine).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { checkList, commandLine, findChromium, freePort, metric, sleep } from '../viewer/browser_harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = commandLine();
const serverBin = resolve(args['keel-server'] || 'build/bin/keel-server');
const scene = resolve(args.scene || join(here, '../../scenes/demo.json'));
const out = resolve(args.out || 'build/web-test');
const webClient = args['web-client'] ? resolve(args['web-client']) : '';
const wantChecks = 600;
const { chromium, chromiumPath } = await findChromium(args);
const { failures, check } = checkList();

rmSync(join(out, 'recordings'), { recursive: true, force: true });
mkdirSync(join(out, 'recordings'), { recursive: true });
const [wsPort, webPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
const log = openSync(join(out, 'server.txt'), 'w');
const replayBin = resolve(args['keel-replay'] || join(dirname(serverBin), 'keel-replay'));
const server = spawn(serverBin, ['--scene', scene, '--bind', '127.0.0.1:0', '--websocket', `127.0.0.1:${wsPort}`,
  '--web', `127.0.0.1:${webPort}`, '--metrics', `127.0.0.1:${metricsPort}`, '--record', join(out, 'recordings'), '--status-interval', '0',
  ...(webClient ? ['--web-client', webClient] : [])],
{ stdio: ['ignore', log, log] });
let browser;
const finish = async (code) => {
  if (browser) await browser.close().catch(() => {});
  if (server.exitCode === null) server.kill('SIGTERM');
  process.exit(code);
};
const deadline = setTimeout(() => { console.error('FAILED: the web page test took longer than 90 s'); finish(1); }, 90000);
const origin = `http://127.0.0.1:${webPort}`;
const getText = async (url) => { try { const r = await fetch(url); return r.ok ? await r.text() : ''; } catch { return ''; } };

// ---- Two pages in one match (with --web-client) -------------------------------------------
// Free ground of scenes/demo.json (the ground's top is y = 0) where page A spawns: away from
// the scene's bodies, the trigger at the origin and the players' spawn circle of radius 8.
const spawnSpots = { box: [2, 0, 3], sphere: [-3, 0, -2], capsule: [-0.5, 0, 2.5] };
const counters = (page) => page.evaluate(() => {
  const s = window.keelPage ? window.keelPage.stats() : null;
  return s && { checks: s.hash_checks, confirmed: s.confirmed_ticks, mismatches: s.hash_mismatches, bodies: s.bodies };
});
const spawnedOn = (page) => page.evaluate(() => (window.keelPage ? window.keelPage.bodies().filter((b) => b.kind === 3) : []));
async function until(what, timeoutMs, probe) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v || Date.now() > end) return v;
    await sleep(100);
  }
}

async function openPage(context, errors, foreign, name) {
  const p = await context.newPage();
  p.on('console', (m) => { if (m.type() === 'error') errors.push(`${name}: ${m.text()}`); });
  p.on('pageerror', (e) => errors.push(`${name}: ${e}`));
  p.on('request', (r) => { if (!r.url().startsWith(origin + '/')) foreign.push(r.url()); });
  await p.goto(origin + '/');
  return p;
}

// Page A (the first page) spawns by clicking free ground with each shape of the chooser and
// drags its box up; page B, a second browser context with its own token, sees it all.
async function twoPages(a, errors, foreign) {
  const contextB = await browser.newContext({ viewport: { width: 960, height: 540 } });
  const b = await openPage(contextB, errors, foreign, 'page B');
  const playing = await until('both play', 20000, async () => {
    const [ca, cb] = [await counters(a), await counters(b)];
    return ca && cb && ca.checks > 30 && cb.checks > 30 && { ca, cb };
  });
  check(!!playing, `both pages play and check hashes (${JSON.stringify(playing)})`);
  if (!playing) return;
  check((await a.textContent('#state')) !== (await b.textContent('#state')), 'the two pages are two players');
  const before = (await spawnedOn(b)).length;
  check(before === 0, `page B sees no spawned body before page A clicks (${before})`);

  // A click on free ground spawns the chosen shape, one body per click. After each click
  // page A is starved on purpose: its script is held busy for 1.2 s (72 ticks), so the
  // server gets no input from it and repeats its last frame, the click's, and then its
  // client, more than 30 ticks behind, skips input ticks. A held spawn value would spawn a
  // body every 15 ticks of that; the spawn counter spawns once (game-rules.md section 12).
  const skippedBefore = await a.evaluate(() => window.keelPage.stats().inputs_skipped);
  for (const [shape, spot] of Object.entries(spawnSpots)) {
    await a.check(`input[name="shape"][value="${shape}"]`);
    const at = await a.evaluate((p) => window.keelPage.screenOf(p), spot);
    const count = (await spawnedOn(b)).length;
    await a.mouse.click(at.x, at.y);
    await sleep(100);  // the click's frame goes out with the next updates (every 8 ms)
    await a.evaluate(() => { const t = performance.now(); while (performance.now() - t < 1200) { /* starve */ } });
    const seen = await until(`B sees the ${shape}`, 5000, async () => (await spawnedOn(b)).length > count);
    check(seen, `page B sees page A's ${shape}, spawned by a click at (${spot}) (pixel ${at.x.toFixed(0)}, ${at.y.toFixed(0)})`);
    await sleep(300);  // past the sandbox's spawn cooldown (15 ticks)
  }
  await sleep(1000);  // anything a repeated frame would still spawn has arrived by now
  // One click is one spawn, however many of page A's input ticks were repeated or skipped.
  const spawnedB = await spawnedOn(b);
  const skipped = (await a.evaluate(() => window.keelPage.stats().inputs_skipped)) - skippedBefore;
  check(skipped > 0, `page A, starved after each click, skipped input ticks (${skipped})`);
  check(spawnedB.length === 3,
    `page B sees ${spawnedB.length} spawned bodies for page A's three clicks (page A skipped ${skipped} input ticks)`);
  const near = (p, q, d) => p && Math.hypot(p[0] - q[0], p[2] - q[2]) < d;
  const boxB = spawnedB.find((s) => near(s.position, spawnSpots.box, 0.5));
  check(!!boxB, `page B has a spawned body where page A clicked for the box (${JSON.stringify(spawnedB.map((s) => s.position))})`);
  if (!boxB) return;

  // A drag on the box pulls it up toward the pointer; B sees it rise, then fall when let go.
  const boxA = (await spawnedOn(a)).find((s) => s.id === boxB.id);
  const grab = await a.evaluate((p) => window.keelPage.screenOf(p), boxA.position);
  await a.mouse.move(grab.x, grab.y);
  await a.mouse.down();
  for (let i = 1; i <= 10; ++i) { await a.mouse.move(grab.x, grab.y - 12 * i); await sleep(30); }
  const lifted = await until('B sees the box rise', 6000, async () => {
    const s = (await spawnedOn(b)).find((x) => x.id === boxB.id);
    return s && s.position[1] > 2.0 && s;
  });
  check(!!lifted, `page B sees the dragged box lifted above 2 m (y ${lifted ? lifted.position[1].toFixed(2) : 'never'})`);
  await a.screenshot({ path: join(out, 'page.png') });
  await a.mouse.up();
  const fell = await until('B sees the box fall', 6000, async () => {
    const s = (await spawnedOn(b)).find((x) => x.id === boxB.id);
    return s && s.position[1] < 0.6 && s;
  });
  check(!!fell, `let go, the box falls back to the ground on page B (y ${fell ? fell.position[1].toFixed(2) : 'never'})`);

  // The gravity switch is match-wide: A sets it low, B's predicted world has a quarter g.
  await a.click('#gravity-low');
  const low = await until('B has low gravity', 4000, async () => {
    const g = await b.evaluate(() => window.keelPage.gravity());
    return g && Math.abs(g.world[1] - 0.25 * g.scene[1]) < 1e-4 && g;
  });
  check(!!low, `page A's gravity switch reaches page B (g ${low ? low.world[1].toFixed(4) : '?'} m/s^2, a quarter of the scene's)`);
  check(await b.evaluate(() => document.getElementById('gravity-low').classList.contains('on')), 'page B lights its "low" switch');
  await b.click('#gravity-normal');
  const normal = await until('A has normal gravity', 4000, async () => {
    const g = await a.evaluate(() => window.keelPage.gravity());
    return g && g.world[1] === g.scene[1] && g;
  });
  check(!!normal, 'page B sets it back to normal and page A sees that');

  await a.check('#contacts');
  const contacts = await until('contact points', 3000, () => a.evaluate(() => window.keelPage.contactCount()));
  check(contacts > 0, `the contact points switch draws the predicted world's contacts (${contacts} points)`);

  const done = await until('600 checks', 30000, async () => {
    const [ca, cb] = [await counters(a), await counters(b)];
    return ((ca.checks >= wantChecks && cb.checks >= wantChecks) || ca.mismatches > 0 || cb.mismatches > 0) && { ca, cb };
  });
  for (const [name, c] of [['A', done && done.ca], ['B', done && done.cb]]) {
    check(c && c.confirmed >= wantChecks && c.checks >= wantChecks,
      `page ${name} confirmed ${c && c.confirmed} ticks with ${c && c.checks} hash checks (>= ${wantChecks})`);
    check(c && c.mismatches === 0, `page ${name} shows ${c && c.mismatches} hash mismatches`);
  }
  for (const p of [a, b]) {
    const st = await p.textContent('#state');
    check(/^playing/.test(st), `still playing ("${st}")`);
  }
  const fps = await a.textContent('#frames');
  check(/\d+ frames\/s/.test(fps), `page A shows its frame rate ("${fps}")`);
  check(errors.length === 0, `no console errors on either page (${errors.join(' | ')})`);
  check(foreign.length === 0, `no request left the pages' origin (${foreign.join(' ')})`);
}

// The server's recording of that match: it verifies, and its inputs hold the spawns.
async function checkRecording() {
  server.kill('SIGTERM');
  const exited = await until('server exit', 10000, async () => server.exitCode !== null);
  check(exited && server.exitCode === 0, `keel-server stopped cleanly (exit ${server.exitCode})`);
  const recs = readdirSync(join(out, 'recordings')).filter((f) => f.endsWith('.krec'));
  check(recs.length === 1, `the server wrote one recording (${recs.join(' ')})`);
  if (recs.length !== 1) return;
  const rec = join(out, 'recordings', recs[0]);
  const verify = spawnSync(replayBin, ['verify', rec], { encoding: 'utf8', timeout: 30000 });
  check(verify.status === 0, `keel-replay verify ${recs[0]}: ${(verify.stdout + verify.stderr).trim().split('\n').pop()}`);
  const inputsCsv = join(out, 'inputs.csv');
  const exp = spawnSync(replayBin, ['export', rec, '--csv', join(out, 'bodies.csv'), '--every', '600', '--inputs', inputsCsv],
    { encoding: 'utf8', timeout: 30000 });
  check(exp.status === 0, `keel-replay export --inputs (${exp.stderr.trim()})`);
  if (exp.status !== 0) return;
  // CSV fields, a quoted one ("(2, 0, 3)") holding commas.
  const fields = (line) => {
    const out = [];
    let f = '', quoted = false;
    for (let i = 0; i < line.length; ++i) {
      const ch = line[i];
      if (quoted && ch === '"' && line[i + 1] === '"') { f += '"'; ++i; } else if (ch === '"') quoted = !quoted;
      else if (ch === ',' && !quoted) { out.push(f); f = ''; } else f += ch;
    }
    out.push(f);
    return out;
  };
  const [header, ...rows] = readFileSync(inputsCsv, 'utf8').trim().split('\n').map(fields);
  const cols = header;
  const spawnCol = cols.indexOf('spawn'), dragCol = cols.indexOf('drag_body'), gravityCol = cols.indexOf('gravity');
  check(spawnCol > 0 && dragCol > 0 && gravityCol > 0, `the inputs name the sandbox's visitor fields (${header.join(' ')})`);
  const firstTickWith = (col, value) => { const r = rows.find((f) => f[col] === value); return r ? Number(r[0]) : -1; };
  const spawnTicks = {};
  for (const shape of Object.keys(spawnSpots)) {
    spawnTicks[shape] = firstTickWith(spawnCol, shape);
    check(spawnTicks[shape] > 0, `the recording holds page A's ${shape} spawn (first at tick ${spawnTicks[shape]})`);
  }
  // Each click is one new spawn counter in page A's frames (1, 2, 3), held between clicks.
  const seqCol = cols.indexOf('spawn_seq');
  const seqs = new Set(rows.map((f) => f[seqCol]).filter((v) => v !== undefined && v !== '0'));
  check(seqCol > 0 && seqs.size === 3, `the recording holds three spawn counters for three clicks (${[...seqs].join(' ')})`);
  const dragged = rows.some((f) => f[dragCol] !== undefined && f[dragCol] !== '0');
  check(dragged, 'the recording holds the drag (a drag_body other than 0)');
  check(firstTickWith(gravityCol, 'low') > 0 && firstTickWith(gravityCol, 'normal') > 0, 'the recording holds both gravity switches');
  if (spawnTicks.box > 0) {
    const dump = spawnSync(replayBin, ['dump', rec, '--tick', String(spawnTicks.box)], { encoding: 'utf8', timeout: 30000 });
    let inputs = [];
    try { inputs = JSON.parse(dump.stdout).inputs; } catch { /* reported below */ }
    const spawnInput = inputs.find((i) => i.input && i.input.spawn === 'box');
    check(!!spawnInput, `keel-replay dump --tick ${spawnTicks.box} shows player ${spawnInput && spawnInput.player}'s box spawn at ${spawnInput && JSON.stringify(spawnInput.input.spawn_at)}`);
  }
}

try {
  let up = false;
  for (let i = 0; i < 100 && !up; ++i) { up = (await getText(origin + '/')) !== ''; if (!up) await sleep(50); }
  check(up, `keel-server serves the page on ${origin}`);
  if (!up) throw new Error('no page');

  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
  const page = await browser.newPage({ viewport: { width: 960, height: 540 } });
  const errors = [], foreign = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith(origin + '/')) foreign.push(r.url()); });
  await page.goto(origin + '/');
  const opened = await page.waitForFunction(() => document.getElementById('state').dataset.websocket === 'open', null,
    { timeout: 10000 }).then(() => true, () => false);
  const state = await page.textContent('#state');
  check(opened, `the page fetched a token and opened the WebSocket it names ("${state}")`);
  check(/client \d+/.test(state), 'the page shows its client id from the token');
  check(errors.length === 0, `no console errors (${errors.join(' | ')})`);
  check(foreign.length === 0, `no request left the page's origin (${foreign.join(' ')})`);
  if (webClient) await twoPages(page, errors, foreign);
  const m = await getText(`http://127.0.0.1:${metricsPort}/metrics`);
  const pages = webClient ? 2 : 1;
  check(metric(m, 'keel_websocket_connections') === pages, `the server holds the pages' ${pages} WebSocket(s) (keel_websocket_connections ${metric(m, 'keel_websocket_connections')})`);
  if (!webClient) await page.screenshot({ path: join(out, 'page.png') });
  await browser.close();
  browser = null;
  if (webClient) await checkRecording();
} catch (e) {
  check(false, `the test ran to its end (${e.message})`);
}
clearTimeout(deadline);
console.log(failures.length ? `FAILED: ${failures.length} check(s)` : 'PASSED');
await finish(failures.length ? 1 : 0);
