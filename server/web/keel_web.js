// The sandbox page's script (served by keel-server --web; docs/browser.md). It asks the
// page's own server for a development connect token and opens the WebSocket the token
// names. When the server serves the wasm32 client (--web-client, under /client/), the page
// loads it and runs Keel's C++ client over that WebSocket: handshake, scene, predicting
// the match and checking every confirmed tick's hash against the server's, with the checks
// and mismatches shown. Without it the page stops at the open WebSocket and says so.
'use strict';

(function () {
  const stateEl = document.getElementById('state');
  const checksEl = document.getElementById('checks');
  function show(text) {
    stateEl.textContent = text;
    document.title = 'Keel sandbox: ' + text;
  }

  async function fetchToken() {
    const answer = await fetch('/token', { cache: 'no-store' });
    if (!answer.ok) throw new Error('token endpoint: HTTP ' + answer.status + ' ' + (await answer.text()).trim());
    const t = await answer.json();
    if (typeof t.token !== 'string' || typeof t.websocket !== 'string' || !/^wss?:\/\//.test(t.websocket)) {
      throw new Error('token endpoint: an answer without token and websocket');
    }
    return t;
  }

  // The wasm32 client and its two libraries, or null when this server does not serve them.
  async function loadClient() {
    const index = await fetch('/client/index.json', { cache: 'no-store' });
    if (!index.ok || (await index.json()).wasm_client !== true) return null;
    const [{ createWebClient }, { default: factory }, { default: sodium }, zstd] = await Promise.all([
      import('/client/keel_web_client.mjs'), import('/client/keel_web_client.js'),
      import('/client/libsodium-wrappers.mjs'), import('/client/fzstd.mjs')]);
    return createWebClient({ factory, sodium, zstd, predict: true });
  }

  function run(client, ws, t) {
    const now = () => performance.now() / 1000;
    ws.onmessage = (e) => { if (e.data instanceof ArrayBuffer) client.receive(new Uint8Array(e.data)); };
    if (!client.connect(t.token, now())) throw new Error('the token from /token is not a connect token');
    // The network and the prediction every 8 ms; the counters are shown each frame.
    const timer = setInterval(() => {
      client.update(now());
      if (ws.readyState === WebSocket.OPEN) for (const d of client.takeDatagrams()) ws.send(d);
    }, 8);
    const frame = () => {
      const s = client.stats();
      show(client.state() + ' (client ' + t.client_id + ', player ' + client.playerId() + ', ' + s.bodies + ' bodies)');
      checksEl.textContent = 'confirmed ' + s.confirmed_ticks + ' · checks ' + s.hash_checks +
        ' · mismatches ' + s.hash_mismatches + ' · predicted ' + s.predicted_ticks + ' · rollbacks ' + s.rollbacks;
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
    ws.onclose = (e) => { clearInterval(timer); show('WebSocket closed (' + e.code + ')'); };
  }

  async function start() {
    show('asking for a token');
    const t = await fetchToken();
    const loading = loadClient();
    show('token for client ' + t.client_id + ' of match ' + t.match_id + '; opening ' + t.websocket);
    const ws = new WebSocket(t.websocket);
    ws.binaryType = 'arraybuffer';
    ws.onerror = () => show('WebSocket error');
    await new Promise((resolve) => { ws.onopen = resolve; });
    stateEl.dataset.websocket = 'open';  // for tests: the state line moves on at once
    const client = await loading;
    if (client === null) {
      show('WebSocket open to ' + t.websocket + ' (client ' + t.client_id + '); no protocol client (keel-server --web-client)');
      ws.onclose = (e) => show('WebSocket closed (' + e.code + ')');
      return;
    }
    show('WebSocket open to ' + t.websocket + ' (client ' + t.client_id + '); wasm client loaded');
    run(client, ws, t);
  }

  start().catch((e) => show('failed: ' + e.message));
})();
