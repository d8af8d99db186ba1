// Runs Keel's wasm32 client (client-sdk/web/, built with emscripten) under node against a
// live keel-server on loopback, as the page will: a token from the --web endpoint's
// /token, a WebSocket to the listener it names (npm's ws: node 20 has no WebSocket
// client), and the module predicting the sandbox match and checking every confirmed
// tick's hash against the server's. Passes when the module reports at least 600 confirmed
// ticks, hash checks among them, and no mismatch, while random datagrams are fed in beside
// the server's; the server must count it as a player (keel_players on /metrics). The packet AEAD is libsodium-wrappers', the scene block's
// zstd fzstd's (tests/web/node_modules, installed by scripts/setup.sh with npm ci).
//
//   node tests/web/wasm_client_test.mjs --keel-server build/bin/keel-server \
//        --module build/web-client/bin/keel_web_client.js --scene scenes/demo.json --out build/wasm-client-test
//
// Exit 0 passed, 1 failed.
import { spawn } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { checkList, commandLine, freePort, metric, sleep } from '../viewer/browser_harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = commandLine();
const serverBin = resolve(args['keel-server'] || 'build/bin/keel-server');
const modulePath = resolve(args.module || 'build/web-client/bin/keel_web_client.js');
const scene = resolve(args.scene || join(here, '../../scenes/demo.json'));
const out = resolve(args.out || 'build/wasm-client-test');
const wantTicks = Number(args.ticks || 600);
const { failures, check } = checkList();
const getText = async (url) => { try { const r = await fetch(url); return r.ok ? await r.text() : ''; } catch { return ''; } };

async function loadLibraries() {
  try {
    const [{ default: sodium }, zstd, { WebSocket }] = await Promise.all([
      import('libsodium-wrappers'), import('fzstd'), import('ws')]);
    return { sodium, zstd, WebSocket };
  } catch (e) {
    console.error(`FAILED: ${e.message}: run scripts/setup.sh (it runs npm ci in tests/web)`);
    process.exit(1);
  }
}

if (!existsSync(modulePath)) {
  console.error(`FAILED: no wasm client at ${modulePath} (built by the web-client target, which needs emscripten: scripts/setup.sh installs it)`);
  process.exit(1);
}
const { sodium, zstd, WebSocket } = await loadLibraries();
const { createWebClient } = await import(pathToFileURL(join(here, '../../client-sdk/web/keel_web_client.mjs')).href);
const { default: factory } = await import(pathToFileURL(modulePath).href);
const wasmBinary = readFileSync(modulePath.replace(/\.js$/, '.wasm'));

mkdirSync(out, { recursive: true });
const [wsPort, webPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
const log = openSync(join(out, 'server.txt'), 'w');
const server = spawn(serverBin, ['--scene', scene, '--bind', '127.0.0.1:0', '--websocket', `127.0.0.1:${wsPort}`,
  '--web', `127.0.0.1:${webPort}`, '--metrics', `127.0.0.1:${metricsPort}`, '--record', out, '--status-interval', '0'],
{ stdio: ['ignore', log, log] });
let socket;
const finish = (code) => {
  if (socket) socket.terminate();
  server.kill('SIGTERM');
  process.exit(code);
};
const deadline = setTimeout(() => { console.error('FAILED: the wasm client test took longer than 60 s'); finish(1); }, 60000);
const origin = `http://127.0.0.1:${webPort}`;

try {
  let tokenText = '';
  for (let i = 0; i < 100 && !tokenText; ++i) { tokenText = await getText(origin + '/token'); if (!tokenText) await sleep(50); }
  check(tokenText !== '', `keel-server hands out a token on ${origin}/token`);
  const answer = JSON.parse(tokenText);
  const client = await createWebClient({ factory: (m) => factory({ ...m, wasmBinary }), sodium, zstd, predict: true });
  const now = () => performance.now() / 1000;
  // Untrusted bytes from JavaScript are refused, not trusted: text that is not base64, and
  // base64 of bytes that are not a token (parse_token, inside the module).
  check(!client.connect('not a token!', now()), 'text that is not base64 is refused as a token');
  check(!client.connect(Buffer.from(randomBytes(200)).toString('base64url'), now()), 'random bytes are refused as a token');
  check(client.connect(answer.token, now()), 'the wasm client takes the token');

  socket = new WebSocket(answer.websocket);
  socket.binaryType = 'nodebuffer';
  socket.on('message', (data, isBinary) => { if (isBinary) client.receive(new Uint8Array(data.buffer, data.byteOffset, data.length)); });
  const opened = await new Promise((res) => { socket.once('open', () => res(true)); socket.once('error', () => res(false)); });
  check(opened, `the WebSocket to ${answer.websocket} opens`);

  // The page's frame loop, at about 250 Hz: update, then send what the client wrote.
  let updates = 0, updateSeconds = 0, playing = false, garbage = 0, stats = client.stats();
  const started = now();
  const cpuBefore = process.cpuUsage();
  while (now() - started < 45) {
    const t0 = now();
    // While playing, now and then a datagram of random bytes, some longer than any Keel
    // packet, as if from the socket: the module drops and counts them, and the session
    // goes on.
    if (playing && updates % 50 === 7) {
      client.receive(randomBytes(updates % 3 === 0 ? 3000 : 1 + (updates % 1300)));
      ++garbage;
    }
    client.update(t0);
    updateSeconds += now() - t0;
    ++updates;
    for (const d of client.takeDatagrams()) socket.send(d);
    stats = client.stats();
    if (!playing && client.state() === 'playing') {
      playing = true;
      check(true, `the wasm client is playing (player ${client.playerId()}, ${stats.bodies} bodies, checkpoint tick ${stats.checkpoint_tick})`);
      const m = await getText(`http://127.0.0.1:${metricsPort}/metrics`);
      check(metric(m, 'keel_players') === 1, `the server counts it as a player (keel_players ${metric(m, 'keel_players')})`);
    }
    if (stats.confirmed_ticks >= wantTicks || stats.hash_mismatches > 0 || client.state() === 'disconnected') break;
    await sleep(4);
  }
  const cpu = process.cpuUsage(cpuBefore);
  const drops = client.drops();
  const dropped = Object.values(drops).reduce((a, b) => a + b, 0) + stats.oversized_datagrams;
  check(dropped >= garbage, `the ${garbage} random datagrams were dropped and counted ` +
    `(${stats.oversized_datagrams} oversized, ${JSON.stringify(drops)})`);
  check(playing, `the wasm client reached Playing (state ${client.state()}, close reason ${client.closeReason()}, drops ${JSON.stringify(drops)})`);
  check(stats.confirmed_ticks >= wantTicks, `${stats.confirmed_ticks} confirmed ticks (>= ${wantTicks})`);
  check(stats.hash_checks > 0, `${stats.hash_checks} confirmed hash checks`);
  check(stats.hash_mismatches === 0, `${stats.hash_mismatches} hash mismatches (first at tick ${stats.first_mismatch_tick})`);
  // Confirmed ticks are first predicted (a tick or two ahead, at the input lead), but for
  // those confirmed before the prediction is ahead: the checkpoint's first updates, and
  // any run of frames that arrives while the loop is held up (on a loaded 2-core machine
  // 32 of 600 were, in one CI run). So at least three in four, not all.
  check(stats.predicted_ticks > 0 && 4 * stats.predicted_ticks >= 3 * stats.confirmed_ticks, `it predicted (${stats.predicted_ticks} predicted ticks of ${stats.confirmed_ticks} confirmed, ${stats.rollbacks} rollbacks)`);
  const poses = client.poses(now());
  check(poses.length === stats.bodies && poses.length > 0 && poses.every((p) => p.position.every(Number.isFinite)),
    `${poses.length} body poses to draw, all finite`);
  // Figures for docs/performance.md, not checks: time inside the module's update, and the
  // whole process's CPU (the socket, the AEAD in JavaScript, the loop) per confirmed tick.
  const summary = {
    ...stats, updates, seconds: now() - started, mean_update_ms: (1000 * updateSeconds) / Math.max(1, updates),
    update_ms_per_confirmed_tick: (1000 * updateSeconds) / Math.max(1, stats.confirmed_ticks),
    process_cpu_ms_per_confirmed_tick: (cpu.user + cpu.system) / 1000 / Math.max(1, stats.confirmed_ticks),
  };
  writeFileSync(join(out, 'stats.json'), JSON.stringify(summary, null, 2));
  console.log(`wasm client: ${updates} updates, ${summary.mean_update_ms.toFixed(3)} ms each on average, ` +
    `${summary.update_ms_per_confirmed_tick.toFixed(3)} ms of update and ${summary.process_cpu_ms_per_confirmed_tick.toFixed(3)} ms of process CPU per confirmed tick (stats.json)`);
} catch (e) {
  check(false, `the test ran to its end (${e.stack || e.message})`);
}
clearTimeout(deadline);
console.log(failures.length ? `FAILED: ${failures.length} check(s)` : 'PASSED');
finish(failures.length ? 1 : 0);
