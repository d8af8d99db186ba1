// Opens the page keel-server --web serves (docs/browser.md) in headless Chromium (Debian's,
// driven with playwright-core from tests/viewer/node_modules) against a live keel-server on
// loopback, and checks the leg that works today: the page loads with no console error and
// no request to another origin, fetches a token from /token, and opens the WebSocket the
// token names, which the server counts (keel_websocket_connections on /metrics).
// With --web-client DIR (the folder scripts/build-web-client.sh writes, served by
// keel-server --web-client) the page also loads the wasm32 client and runs it over that
// WebSocket: the test then waits for the page to show at least 600 confirmed hash checks
// and no mismatch. A screenshot lands in the output folder.
//
//   node tests/web/page_test.mjs --keel-server build/bin/keel-server --scene scenes/demo.json --out build/web-test \
//        [--web-client build/web-client/page]
//
// Exit 0 passed, 1 failed, 77 skipped (no Chromium on this machine).
import { spawn } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
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

mkdirSync(out, { recursive: true });
const [wsPort, webPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
const log = openSync(join(out, 'server.txt'), 'w');
const server = spawn(serverBin, ['--scene', scene, '--bind', '127.0.0.1:0', '--websocket', `127.0.0.1:${wsPort}`,
  '--web', `127.0.0.1:${webPort}`, '--metrics', `127.0.0.1:${metricsPort}`, '--record', out, '--status-interval', '0',
  ...(webClient ? ['--web-client', webClient] : [])],
{ stdio: ['ignore', log, log] });
let browser;
const finish = async (code) => {
  if (browser) await browser.close().catch(() => {});
  server.kill('SIGTERM');
  process.exit(code);
};
const deadline = setTimeout(() => { console.error('FAILED: the web page test took longer than 75 s'); finish(1); }, 75000);
const origin = `http://127.0.0.1:${webPort}`;
const getText = async (url) => { try { const r = await fetch(url); return r.ok ? await r.text() : ''; } catch { return ''; } };

try {
  let up = false;
  for (let i = 0; i < 100 && !up; ++i) { up = (await getText(origin + '/')) !== ''; if (!up) await sleep(50); }
  check(up, `keel-server serves the page on ${origin}`);
  if (!up) throw new Error('no page');

  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
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
  if (webClient) {
    // The wasm client's counters, as the page shows them ("confirmed N · checks N · mismatches N …").
    const counters = (text) => {
      const get = (name) => { const m = new RegExp(name + ' (\\d+)').exec(text); return m ? Number(m[1]) : -1; };
      return { checks: get('checks'), mismatches: get('mismatches'), text };
    };
    await page.waitForFunction((want) => {
      const text = document.getElementById('checks').textContent;
      const checks = /checks (\d+)/.exec(text), mismatches = /mismatches (\d+)/.exec(text);
      return (checks && Number(checks[1]) >= want) || (mismatches && Number(mismatches[1]) > 0);
    }, wantChecks, { timeout: 40000 }).catch(() => {});
    const c = counters(await page.textContent('#checks'));
    const playing = await page.textContent('#state');
    check(/^playing/.test(playing), `the page's wasm client is playing ("${playing}")`);
    check(c.checks >= wantChecks, `the page shows ${c.checks} confirmed hash checks (>= ${wantChecks}): "${c.text}"`);
    check(c.mismatches === 0, `the page shows ${c.mismatches} hash mismatches`);
    check(errors.length === 0, `no console errors while the wasm client ran (${errors.join(' | ')})`);
    check(foreign.length === 0, `still no request left the page's origin (${foreign.join(' ')})`);
  }
  const m = await getText(`http://127.0.0.1:${metricsPort}/metrics`);
  check(metric(m, 'keel_websocket_connections') === 1, `the server holds the page's WebSocket (keel_websocket_connections ${metric(m, 'keel_websocket_connections')})`);
  await page.screenshot({ path: join(out, 'page.png') });
} catch (e) {
  check(false, `the test ran to its end (${e.message})`);
}
clearTimeout(deadline);
console.log(failures.length ? `FAILED: ${failures.length} check(s)` : 'PASSED');
await finish(failures.length ? 1 : 0);
