// keel_web_client.mjs — the JavaScript face of the wasm32 client (docs/browser.md, "The
// wasm32 client"), for a page and for node alike. The caller brings the three things that
// differ between them: the module factory (keel_web_client.js, built from client-sdk/web/),
// libsodium-wrappers and fzstd; this file only moves bytes between them and the socket.
//
//   const client = await createWebClient({ factory, sodium, zstd, predict: true });
//   client.connect(tokenBase64, now);         // the `token` of keel-server's /token
//   socket.onmessage = (e) => client.receive(new Uint8Array(e.data));
//   every frame: client.update(now); for (const d of client.takeDatagrams()) socket.send(d);
//
// `now` is in seconds on any monotonic clock (performance.now() / 1000).

/// keel_web_stat's counters, by the names this file reports them under.
export const STATS = [
  'confirmed_ticks', 'hash_checks', 'hash_mismatches', 'predicted_ticks', 'rollbacks', 'snapshots_received',
  'bodies', 'first_mismatch_tick', 'server_desyncs', 'connects', 'checkpoint_tick', 'datagrams_received',
  'datagrams_sent', 'inputs_sent', 'oversized_datagrams',
];
export const STATES = ['disconnected', 'connecting', 'accepted', 'playing', 'reconnecting'];

/// The bytes of a base64 text, URL-safe alphabet, no padding (token_to_base64's form); null
/// when it is not that.
export function decodeBase64Url(text) {
  if (typeof text !== 'string' || text.length > 4096 || !/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) {
    return null;
  }
  const standard = text.replace(/-/g, '+').replace(/_/g, '/');
  const padded = standard + '='.repeat((4 - (standard.length % 4)) % 4);
  const binary = atob(padded);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; ++i) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export async function createWebClient({ factory, sodium, zstd, predict = true }) {
  await sodium.ready;
  const module = await factory({ keelSodium: sodium, keelZstd: zstd });
  return new WebClient(module, predict);
}

class WebClient {
  constructor(module, predict) {
    this.m = module;
    this.handle = module._keel_web_create(predict ? 1 : 0);
    this.maxDatagram = module._keel_web_max_datagram_bytes();
    this.inBuffer = module._malloc(this.maxDatagram + 1);
    this.outBuffer = module._malloc(this.maxDatagram);
    this.poseBuffer = module._malloc(7 * 4);
  }

  /// Starts connecting with a /token answer's `token`; false when it is not a token.
  connect(tokenBase64, now) {
    const bytes = decodeBase64Url(tokenBase64);
    if (bytes === null) return false;
    const at = this.m._malloc(Math.max(1, bytes.length));
    this.m.HEAPU8.set(bytes, at);
    const result = this.m._keel_web_connect(this.handle, at, bytes.length, now);
    this.m._free(at);
    return result === 0;
  }

  /// One datagram from the server (a WebSocket binary message). A longer message than any
  /// Keel packet is cut to one byte more than the cap, which the module then refuses.
  receive(bytes) {
    const size = Math.min(bytes.length, this.maxDatagram + 1);
    this.m.HEAPU8.set(bytes.subarray(0, size), this.inBuffer);
    this.m._keel_web_receive(this.handle, this.inBuffer, size);
  }

  update(now) { this.m._keel_web_update(this.handle, now); }

  /// The datagrams to send now, each a fresh Uint8Array.
  takeDatagrams() {
    const out = [];
    for (;;) {
      const size = this.m._keel_web_take_datagram(this.handle, this.outBuffer, this.maxDatagram);
      if (size === 0) return out;
      out.push(this.m.HEAPU8.slice(this.outBuffer, this.outBuffer + size));
    }
  }

  state() { return STATES[this.m._keel_web_state(this.handle)] ?? 'unknown'; }
  closeReason() { return this.m._keel_web_close_reason(this.handle); }
  playerId() { return this.m._keel_web_player_id(this.handle) >>> 0; }

  stats() {
    const s = {};
    STATS.forEach((name, id) => { s[name] = this.m._keel_web_stat(this.handle, id); });
    return s;
  }

  /// The non-zero drop counters by reason name ({ auth_failed: 12, … }).
  drops() {
    const out = {};
    for (let reason = 1; ; ++reason) {
      const count = this.m._keel_web_drops(this.handle, reason);
      if (count < 0) return out;
      if (count > 0) out[this.m.UTF8ToString(this.m._keel_web_drop_name(reason))] = count;
    }
  }

  /// Every known body's pose to draw at `now`: [{ id, position: [x, y, z], rotation: [x, y, z, w] }].
  poses(now) {
    const out = [];
    const count = this.m._keel_web_stat(this.handle, STATS.indexOf('bodies'));
    for (let i = 0; i < count; ++i) {
      const id = this.m._keel_web_body_id(this.handle, i) >>> 0;
      if (this.m._keel_web_pose(this.handle, id, now, this.poseBuffer) === 0) continue;
      const f = this.m.HEAPF32.subarray(this.poseBuffer >> 2, (this.poseBuffer >> 2) + 7);
      out.push({ id, position: [f[0], f[1], f[2]], rotation: [f[3], f[4], f[5], f[6]] });
    }
    return out;
  }

  destroy() {
    this.m._free(this.inBuffer);
    this.m._free(this.outBuffer);
    this.m._free(this.poseBuffer);
    this.m._keel_web_destroy(this.handle);
    this.handle = 0;
  }
}
