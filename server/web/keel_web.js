// The sandbox page's script (served by keel-server --web; docs/browser.md). This leg asks
// the page's own server for a development connect token and opens the WebSocket the token
// names. The Keel handshake over it is the protocol client's job (docs/browser.md, "What
// runs where"), which this script does not carry yet: the page shows how far it got.
'use strict';

(function () {
  const stateEl = document.getElementById('state');
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

  async function start() {
    show('asking for a token');
    const t = await fetchToken();
    show('token for client ' + t.client_id + ' of match ' + t.match_id + '; opening ' + t.websocket);
    const ws = new WebSocket(t.websocket);
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => show('WebSocket open to ' + t.websocket + ' (client ' + t.client_id + '); no protocol client yet');
    ws.onclose = (e) => show('WebSocket closed (' + e.code + ')');
    ws.onerror = () => show('WebSocket error');
  }

  start().catch((e) => show('failed: ' + e.message));
})();
