// The sandbox page's script (served by keel-server --web; docs/browser.md). It asks the
// page's own server for a development connect token and opens the WebSocket the token
// names. When the server serves the wasm32 client (--web-client, under /client/), the page
// loads it and runs Keel's C++ client over that WebSocket: handshake, scene, predicting
// the match and checking every confirmed tick's hash against the server's, with the checks
// and mismatches shown; it draws the predicted match in 3-D (keel_draw.js) and turns the
// visitor's clicks, drags and switches into the sandbox's input. Without the client the
// page stops at the open WebSocket and says so.
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

  // The visitor's tools (page.html's #tools): the spawn chooser, the gravity switches and
  // the contact points switch. Every action is the sandbox's declared input (game-rules.md
  // section 12), handed to the wasm client, which sends it for the server to apply at a tick.
  function tools(client) {
    const actionEl = document.getElementById('action');
    const contactsEl = document.getElementById('contacts');
    const buttons = Array.from(document.querySelectorAll('[data-gravity]'));
    for (const b of buttons) b.addEventListener('click', () => { client.gravity(b.dataset.gravity); actionEl.textContent = 'gravity ' + b.dataset.gravity; });
    const scales = { normal: 1, off: 0, low: 0.25, high: 2 };
    return {
      shape: () => document.querySelector('input[name="shape"]:checked').value,
      contacts: () => contactsEl.checked,
      say: (text) => { actionEl.textContent = text; },
      // Lights the switch the predicted world's gravity matches, whoever set it.
      showGravity: () => {
        const g = client.gravityNow();
        const scale = g && g.scene[1] !== 0 ? g.world[1] / g.scene[1] : 1;
        for (const b of buttons) b.classList.toggle('on', Math.abs(scales[b.dataset.gravity] - scale) < 1e-3);
      },
    };
  }

  // The spawn area of the sandbox's spawn_at and drag_to fields (game-rules.md section 12).
  const inArea = (p) => Math.abs(p.x) <= 32 && Math.abs(p.z) <= 32 && p.y >= -2 && p.y <= 30;

  // Left button: on free ground spawns the chosen shape there, on a dynamic body holds it
  // and pulls it toward the pointer (on the plane facing the camera through the grabbed
  // point) until the button is let go.
  function pointer(client, view, ui) {
    let held = null;
    const canvas = view.canvas;
    canvas.addEventListener('contextmenu', (e) => e.preventDefault());
    canvas.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      const hit = view.pick(e.clientX, e.clientY);
      if (hit && hit.body) {
        held = { id: hit.body.id, offset: hit.point.clone().sub(hit.centre), point: hit.point.clone(), target: view.vector() };
        view.beginDrag(hit.point);
        client.drag(held.id, hit.centre.toArray());
        ui.say('dragging body ' + held.id);
      } else if (hit && hit.ground) {
        if (!inArea(hit.point)) { ui.say('outside the spawn area (|x|, |z| <= 32 m)'); return; }
        client.spawn(ui.shape(), hit.point.toArray());
        ui.say('spawn ' + ui.shape() + ' at ' + hit.point.toArray().map((v) => v.toFixed(2)).join(', '));
      }
    });
    canvas.addEventListener('pointermove', (e) => {
      if (!held || !view.dragPoint(e.clientX, e.clientY, held.point)) return;
      held.target.copy(held.point).sub(held.offset);  // the centre goes where the grabbed point is kept under the pointer
      client.drag(held.id, held.target.toArray());
    });
    const release = () => { if (held) { client.drag(0, [0, 0, 0]); ui.say('let go of body ' + held.id); held = null; } };
    canvas.addEventListener('pointerup', release);
    canvas.addEventListener('pointercancel', release);
    return { held: () => held };
  }

  function run(client, ws, t) {
    const now = () => performance.now() / 1000;
    ws.onmessage = (e) => { if (e.data instanceof ArrayBuffer) client.receive(new Uint8Array(e.data)); };
    if (!client.connect(t.token, now())) throw new Error('the token from /token is not a connect token');
    // The network and the prediction every 8 ms; the view and the counters every frame.
    const cost = { updateMs: 0, drawMs: 0, frames: 0 };  // summed since the page started
    const timer = setInterval(() => {
      const started = performance.now();
      client.update(now());
      cost.updateMs += performance.now() - started;
      if (ws.readyState === WebSocket.OPEN) for (const d of client.takeDatagrams()) ws.send(d);
    }, 8);
    const view = window.KeelDraw.createView(document.getElementById('view'));
    const ui = tools(client);
    const hand = pointer(client, view, ui);
    const framesEl = document.getElementById('frames');
    const rate = { frames: 0, since: performance.now(), fps: 0, drawMs: 0 };
    const frame = () => {
      const s = client.stats();
      const started = performance.now();
      view.draw(client, now(), { worldVersion: s.world_version, contacts: ui.contacts(), held: hand.held() });
      rate.drawMs = performance.now() - started;
      cost.drawMs += rate.drawMs;
      ++cost.frames;
      ui.showGravity();
      show(client.state() + ' (client ' + t.client_id + ', player ' + client.playerId() + ', ' + s.bodies + ' bodies)');
      checksEl.textContent = 'confirmed ' + s.confirmed_ticks + ' · checks ' + s.hash_checks +
        ' · mismatches ' + s.hash_mismatches + ' · predicted ' + s.predicted_ticks + ' · rollbacks ' + s.rollbacks;
      if (++rate.frames, started - rate.since >= 1000) {
        rate.fps = (rate.frames * 1000) / (started - rate.since);
        rate.frames = 0;
        rate.since = started;
        framesEl.textContent = rate.fps.toFixed(0) + ' frames/s · drawing ' + rate.drawMs.toFixed(1) + ' ms' +
          (ui.contacts() ? ' · ' + view.contactCount() + ' contact points' : '');
      }
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
    ws.onclose = (e) => { clearInterval(timer); show('WebSocket closed (' + e.code + ')'); };
    // For tests and the frame-rate benchmark: where things are, never a way around the input.
    window.keelPage = {
      stats: () => client.stats(),
      bodies: () => client.bodies().map((b) => ({ id: b.id, kind: b.kind, motion: b.motion, position: view.position(b.id) })),
      screenOf: (p) => view.screenOf(p),
      contactCount: () => view.contactCount(),
      drawnBodies: () => view.drawnBodies(),
      gravity: () => client.gravityNow(),
      // Milliseconds spent in the client's update (network and prediction) and in drawing,
      // summed since the page started, and the frames drawn.
      cost: () => ({ ...cost }),
    };
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
