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
  'datagrams_sent', 'inputs_sent', 'oversized_datagrams', 'spawn_clicks', 'world_version',
  'inputs_skipped', 'inputs_late',
];
export const MOTIONS = ['static', 'kinematic', 'dynamic'];
export const SHAPES = ['sphere', 'box', 'capsule', 'hull', 'mesh', 'heightfield'];
/// The sandbox's spawn shapes and gravity switches by name (game-rules.md section 12).
export const SPAWN_SHAPES = { box: 1, sphere: 2, capsule: 3 };
export const GRAVITY = { normal: 1, off: 2, low: 3, high: 4 };
/// The most contact points contacts() reads in one call.
export const MAX_CONTACT_POINTS = 4096;
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
    this.infoBuffer = module._malloc(20 * 4);
    this.contactBuffer = module._malloc(MAX_CONTACT_POINTS * 6 * 4);
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

  /// The id of the index-th body of the world description (0 past the end).
  bodyId(index) { return this.m._keel_web_body_id(this.handle, index) >>> 0; }

  /// Writes the pose to draw of body `id` at `now` into out[0..7) (position x y z, rotation
  /// x y z w) without allocating; false when the body is unknown.
  poseInto(id, now, out) {
    if (this.m._keel_web_pose(this.handle, id, now, this.poseBuffer) === 0) return false;
    const base = this.poseBuffer >> 2;
    for (let k = 0; k < 7; ++k) out[k] = this.m.HEAPF32[base + k];
    return true;
  }

  /// Every body of the world description with its colliders, for building what to draw
  /// (call it when stats().world_version changes):
  /// [{ id, motion, kind, position, rotation, colliders: [{ shape, center, rotation, radius,
  ///   half_height, half_extents, trigger, bounds_min, bounds_max }] }].
  bodies() {
    const out = [];
    const count = this.m._keel_web_stat(this.handle, STATS.indexOf('bodies'));
    const f = () => this.m.HEAPF32.subarray(this.infoBuffer >> 2, (this.infoBuffer >> 2) + 20);
    for (let i = 0; i < count; ++i) {
      if (this.m._keel_web_body_info(this.handle, i, this.infoBuffer) === 0) break;
      const b = f();
      const body = { id: this.bodyId(i), motion: MOTIONS[b[0]] ?? 'dynamic', kind: b[1], position: [b[3], b[4], b[5]],
        rotation: [b[6], b[7], b[8], b[9]], colliders: [] };
      const colliders = b[2];
      for (let c = 0; c < colliders; ++c) {
        if (this.m._keel_web_collider(this.handle, i, c, this.infoBuffer) === 0) break;
        const d = f();
        body.colliders.push({ shape: SHAPES[d[0]] ?? 'unknown', center: [d[1], d[2], d[3]], rotation: [d[4], d[5], d[6], d[7]],
          radius: d[8], half_height: d[9], half_extents: [d[10], d[11], d[12]], trigger: d[13] !== 0,
          bounds_min: [d[14], d[15], d[16]], bounds_max: [d[17], d[18], d[19]] });
      }
      out.push(body);
    }
    return out;
  }

  /// The predicted world's contact points: their number, and a Float32Array view of six
  /// floats each (point, normal) valid until the next call into the module.
  contacts() {
    const n = this.m._keel_web_contacts(this.handle, this.contactBuffer, MAX_CONTACT_POINTS);
    return { count: n, data: this.m.HEAPF32.subarray(this.contactBuffer >> 2, (this.contactBuffer >> 2) + 6 * n) };
  }

  /// The predicted world's gravity and the scene's ({ world: [x, y, z], scene: [x, y, z] }),
  /// or null before the prediction runs.
  gravityNow() {
    if (this.m._keel_web_gravity_now(this.handle, this.infoBuffer) === 0) return null;
    const g = this.m.HEAPF32.subarray(this.infoBuffer >> 2, (this.infoBuffer >> 2) + 6);
    return { world: [g[0], g[1], g[2]], scene: [g[3], g[4], g[5]] };
  }

  /// The sandbox's visitor input (game-rules.md section 12), applied by the server at a
  /// tick like every input. Each returns false when the module refused the numbers.
  /// spawn: 'box', 'sphere' or 'capsule' with its lowest point at `at` ([x, y, z]).
  spawn(shape, at) { return (SPAWN_SHAPES[shape] ?? 0) !== 0 && this.m._keel_web_spawn(this.handle, SPAWN_SHAPES[shape], at[0], at[1], at[2]) === 0; }
  /// drag: pull body `id` toward `to`; id 0 lets go.
  drag(id, to) { return this.m._keel_web_drag(this.handle, id >>> 0, to[0], to[1], to[2]) === 0; }
  /// gravity: 'normal', 'off', 'low' or 'high'.
  gravity(mode) { return (GRAVITY[mode] ?? 0) !== 0 && this.m._keel_web_gravity(this.handle, GRAVITY[mode]) === 0; }

  destroy() {
    this.m._free(this.infoBuffer);
    this.m._free(this.contactBuffer);
    this.m._free(this.inBuffer);
    this.m._free(this.outBuffer);
    this.m._free(this.poseBuffer);
    this.m._keel_web_destroy(this.handle);
    this.handle = 0;
  }
}
