// The Keel replay viewer: plays the data keel-replay view embedded in this page.
// Data layout: docs/replay.md, "The viewer page". Nothing here fetches anything.
(() => {
  'use strict';
  const T = window.KEEL_THREE;
  const $ = (id) => document.getElementById(id);

  // ---- Decoding --------------------------------------------------------------------
  function blob(id) {
    const text = $(id).textContent.trim();
    const bin = atob(text);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; ++i) bytes[i] = bin.charCodeAt(i);
    return new DataView(bytes.buffer);
  }

  // Velocities are stored as a float's upper 16 bits.
  const bf = new DataView(new ArrayBuffer(4));
  function bfloat16(u16) { bf.setUint32(0, u16 << 16 >>> 0); return bf.getFloat32(0); }

  const meta = JSON.parse($('keel-meta').textContent);
  const ticksView = blob('keel-ticks');
  const hashView = blob('keel-hashes');
  const nSamples = ticksView.byteLength / 4;
  const sampleTick = new Float64Array(nSamples);
  for (let s = 0; s < nSamples; ++s) sampleTick[s] = meta.first_tick + ticksView.getUint32(s * 4, true);
  const qs = meta.quat_scale;
  const bodies = meta.bodies;
  for (const b of bodies) b.shapes = b.shapes.map((i) => meta.shapes[i]);
  const nBodies = bodies.length;

  // Per body, over the samples from its first to its last in the world: alive, sleeping,
  // position, rotation, velocities (held between the records that change them). A match
  // throws many short-lived balls, so each body's arrays cover its own life only.
  function readRecords(visit) {
    const dv = blob('keel-poses');
    let o = 0;
    for (let s = 0; s < nSamples; ++s) {
      const n = dv.getUint32(o, true); o += 4;
      for (let r = 0; r < n; ++r) {
        const b = dv.getUint16(o, true), flags = dv.getUint8(o + 2);
        visit(s, b, flags, dv, o + 3);
        o += flags & 2 ? 3 : 35;
      }
      visit(s, -1);
    }
  }
  const track = (function decodePoses() {
    const first = new Int32Array(nBodies).fill(-1), last = new Int32Array(nBodies).fill(-1);
    const alive = new Uint8Array(nBodies);
    readRecords((s, b, flags) => {
      if (b < 0) return;
      if (flags & 2) { alive[b] = 0; last[b] = s - 1; return; }
      if (first[b] < 0) first[b] = s;
      alive[b] = 1;
      last[b] = Math.max(last[b], s);
    });
    for (let b = 0; b < nBodies; ++b) if (alive[b]) last[b] = nSamples - 1;
    const tracks = bodies.map((_, b) => {
      const n = first[b] < 0 ? 0 : last[b] - first[b] + 1;
      return { first: first[b] < 0 ? 0 : first[b], count: n, alive: new Uint8Array(n), sleep: new Uint8Array(n),
        pos: new Float32Array(n * 3), rot: new Float32Array(n * 4), lin: new Float32Array(n * 3), ang: new Float32Array(n * 3) };
    });
    const cur = bodies.map(() => new Float32Array(13)), sleeping = new Uint8Array(nBodies);
    const live = new Set();
    readRecords((s, b, flags, dv, o) => {
      if (b >= 0) {
        if (flags & 2) { live.delete(b); return; }
        live.add(b);
        sleeping[b] = flags & 1;
        const v = cur[b];
        for (let k = 0; k < 3; ++k) v[k] = dv.getFloat32(o + 4 * k, true);
        for (let k = 0; k < 4; ++k) v[3 + k] = dv.getInt16(o + 12 + 2 * k, true) / qs;
        for (let k = 0; k < 6; ++k) v[7 + k] = bfloat16(dv.getUint16(o + 20 + 2 * k, true));
        return;
      }
      for (const x of live) {  // the end of sample s: store every live body's state
        const t = tracks[x], i = s - t.first, v = cur[x];
        t.alive[i] = 1; t.sleep[i] = sleeping[x];
        for (let k = 0; k < 3; ++k) { t.pos[i * 3 + k] = v[k]; t.lin[i * 3 + k] = v[7 + k]; t.ang[i * 3 + k] = v[10 + k]; }
        for (let k = 0; k < 4; ++k) t.rot[i * 4 + k] = v[3 + k];
      }
    });
    return tracks;
  })();
  // The index of sample s in a body's arrays, or -1 when the body is not in the world then.
  function at(t, s) {
    const i = s - t.first;
    return i >= 0 && i < t.count && t.alive[i] ? i : -1;
  }

  // The other run's pose of bodies that differ from this run's, per sample.
  const other = [];  // other[s] = Map(body index -> {pos, rot})
  (function decodeAgainst() {
    const dv = blob('keel-against');
    let o = 0;
    for (let s = 0; s < nSamples && o < dv.byteLength; ++s) {
      const n = dv.getUint32(o, true); o += 4;
      const m = new Map();
      for (let r = 0; r < n; ++r) {
        const b = dv.getUint16(o, true), absent = dv.getUint8(o + 2) & 1;
        o += 3;
        const pos = [dv.getFloat32(o, true), dv.getFloat32(o + 4, true), dv.getFloat32(o + 8, true)];
        const rot = [0, 1, 2, 3].map((k) => dv.getInt16(o + 12 + 2 * k, true) / qs);
        const lin = [0, 1, 2].map((k) => dv.getFloat32(o + 20 + 4 * k, true));
        const ang = [0, 1, 2].map((k) => dv.getFloat32(o + 32 + 4 * k, true));
        o += 44;
        m.set(b, { absent, pos, rot, lin, ang });
      }
      other[s] = m;
    }
  })();

  const contactSamples = [];  // [{sample, points: Float32Array, normals: Float32Array}]
  (function decodeContacts() {
    if (!meta.contact_every) return;
    const dv = blob('keel-contacts');
    const nth = Math.max(1, Math.round(meta.contact_every / meta.every));
    let o = 0;
    for (let s = 0; s < nSamples && o < dv.byteLength; s += nth) {
      const n = dv.getUint32(o, true); o += 4;
      const points = new Float32Array(n * 3), normals = new Float32Array(n * 3);
      for (let i = 0; i < n; ++i) {
        for (let k = 0; k < 3; ++k) points[i * 3 + k] = dv.getFloat32(o + 4 * k, true);
        for (let k = 0; k < 3; ++k) normals[i * 3 + k] = dv.getInt8(o + 12 + k) / 127;
        o += 15;
      }
      contactSamples.push({ sample: s, points, normals });
    }
  })();

  function hashAt(tick) {
    const i = tick - meta.first_tick;
    const hi = hashView.getUint32(i * 8 + 4, true), lo = hashView.getUint32(i * 8, true);
    return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
  }
  const notReproduced = new Set(meta.not_reproduced);

  // The last sample at or before `tick` (binary search).
  function sampleAt(tick) {
    let lo = 0, hi = nSamples - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (sampleTick[mid] <= tick) lo = mid; else hi = mid - 1;
    }
    return lo;
  }

  // ---- Scene -----------------------------------------------------------------------
  const container = $('view');
  const renderer = new T.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
  container.appendChild(renderer.domElement);
  const scene = new T.Scene();
  scene.background = new T.Color(0x1d2229);
  const camera = new T.PerspectiveCamera(50, 1, 0.05, 5000);
  scene.add(new T.HemisphereLight(0xdde6f0, 0x30343a, 1.6));
  const sun = new T.DirectionalLight(0xffffff, 1.6);
  sun.position.set(8, 20, 12);
  scene.add(sun);
  const controls = new T.OrbitControls(camera, renderer.domElement);
  controls.enableDamping = true;

  // How each collider type is drawn. A type without an entry (a shape newer than this
  // page) is drawn as its bounding box, in wireframe.
  // Triangles from flat vertex and index arrays (collider frame). `flat`: one normal per
  // face, as a hull's faces and a level's walls are; otherwise smooth (terrain).
  function triangleGeometry(vertices, indices, flat) {
    let g = new T.BufferGeometry();
    g.setAttribute('position', new T.Float32BufferAttribute(vertices, 3));
    g.setIndex(indices);
    if (flat) g = g.toNonIndexed();
    g.computeVertexNormals();
    return g;
  }
  // A heightfield's grid: sample (row r, column c) at origin + (c, height, r) * cell size.
  function heightfieldGeometry(s) {
    const vertices = [], indices = [];
    for (let r = 0; r < s.rows; ++r) {
      for (let c = 0; c < s.columns; ++c) {
        vertices.push(s.origin[0] + c * s.cell_size, s.heights[r * s.columns + c], s.origin[1] + r * s.cell_size);
      }
    }
    for (let r = 0; r + 1 < s.rows; ++r) {
      for (let c = 0; c + 1 < s.columns; ++c) {
        const i = r * s.columns + c, right = i + 1, down = i + s.columns;
        indices.push(i, down, right, right, down, down + 1);  // counter-clockwise seen from above
      }
    }
    return triangleGeometry(vertices, indices, false);
  }
  const shapeGeometry = {
    sphere: (s) => new T.SphereGeometry(s.radius, 24, 16),
    box: (s) => new T.BoxGeometry(2 * s.half_extents[0], 2 * s.half_extents[1], 2 * s.half_extents[2]),
    capsule: (s) => new T.CapsuleGeometry(s.radius, 2 * s.half_height, 8, 16),
    hull: (s) => triangleGeometry(s.vertices, s.indices, true),
    mesh: (s) => triangleGeometry(s.vertices, s.indices, true),
    heightfield: heightfieldGeometry,
  };
  function geometryFor(s) {
    const make = shapeGeometry[s.type];
    if (make) return { geometry: make(s), known: true };
    return { geometry: new T.BoxGeometry(2 * s.bounds[0], 2 * s.bounds[1], 2 * s.bounds[2]), known: false };
  }

  const palette = [0xe0a040, 0x58b368, 0xd46a6a, 0x6a8fd4, 0xc07ad4, 0x4fc1c1, 0xd4c45a, 0x9fd46a];
  function baseColour(b) {
    if (b.motion === 'Static') return new T.Color(0x7d838c);
    if (b.motion === 'Kinematic') return new T.Color(0x3fa7a0);
    if (b.role === 'character') return new T.Color(0x4d8dff);
    if (b.role === 'ball') return new T.Color(0xff9f2e);
    return new T.Color(palette[b.id % palette.length]);
  }
  const sleepColour = new T.Color(0x5a4e8c), warnColour = new T.Color(0xff2d55), ghostColour = new T.Color(0xffe0e6);
  // Warning colours by position error: amber below a micrometre, red from a centimetre.
  const warnLow = new T.Color(0xffb020);
  function warnFor(err, out) {
    const a = isFinite(err) ? Math.max(0, Math.min(1, (Math.log10(Math.max(err, 1e-9)) + 6) / 4)) : 1;
    return out.copy(warnLow).lerp(warnColour, a);
  }

  function buildBody(b, ghost) {
    const group = new T.Group();
    const material = ghost
      ? new T.MeshBasicMaterial({ color: ghostColour, wireframe: true, transparent: true, opacity: 0.55 })
      : new T.MeshStandardMaterial({ color: baseColour(b), roughness: 0.75, metalness: 0.05 });
    for (const s of b.shapes) {
      const { geometry, known } = geometryFor(s);
      const mat = known ? material : new T.MeshBasicMaterial({ color: baseColour(b), wireframe: true });
      const mesh = new T.Mesh(geometry, mat);
      mesh.position.set(s.center[0], s.center[1], s.center[2]);
      mesh.quaternion.set(s.rotation[0], s.rotation[1], s.rotation[2], s.rotation[3]);
      if (s.trigger) { mat.transparent = true; mat.opacity = 0.25; }
      mesh.userData.body = b.index;
      group.add(mesh);
    }
    group.userData = { body: b.index, material, base: baseColour(b) };
    group.visible = false;
    scene.add(group);
    return group;
  }
  bodies.forEach((b, i) => { b.index = i; });
  const groups = bodies.map((b) => buildBody(b, false));
  const ghosts = new Array(nBodies).fill(null);
  const ghostOf = (i) => ghosts[i] || (ghosts[i] = buildBody(bodies[i], true));

  const contactGeometry = new T.BufferGeometry();
  const contactPoints = new T.Points(contactGeometry, new T.PointsMaterial({ color: 0xffe14d, size: 6, sizeAttenuation: false, depthTest: false }));
  const normalGeometry = new T.BufferGeometry();
  const contactNormals = new T.LineSegments(normalGeometry, new T.LineBasicMaterial({ color: 0xffe14d, depthTest: false }));
  contactPoints.renderOrder = contactNormals.renderOrder = 2;
  scene.add(contactPoints, contactNormals);
  const errorGeometry = new T.BufferGeometry();
  const errorLines = new T.LineSegments(errorGeometry, new T.LineBasicMaterial({ color: warnColour, depthTest: false }));
  scene.add(errorLines);

  // Frames the camera on some bodies as they are at a sample (all moving bodies when
  // `which` is empty; a floor the size of a field would otherwise fill the view).
  function frameCamera(sample, which) {
    const min = [Infinity, Infinity, Infinity], max = [-Infinity, -Infinity, -Infinity];
    const pick = which && which.length ? which : bodies.map((_, i) => i).filter((i) => bodies[i].motion !== 'Static');
    for (const b of pick) {
      const i = at(track[b], sample);
      if (i < 0) continue;
      const r = Math.min(5, Math.max(0.3, ...bodies[b].shapes.map((s) => Math.hypot(...s.bounds))));
      for (let k = 0; k < 3; ++k) {
        min[k] = Math.min(min[k], track[b].pos[i * 3 + k] - r);
        max[k] = Math.max(max[k], track[b].pos[i * 3 + k] + r);
      }
    }
    if (!isFinite(min[0])) { min.fill(-5); max.fill(5); }
    const centre = new T.Vector3((min[0] + max[0]) / 2, (min[1] + max[1]) / 2, (min[2] + max[2]) / 2);
    const size = Math.max(max[0] - min[0], max[1] - min[1], max[2] - min[2], which && which.length ? 9 : 6);
    controls.target.copy(centre);
    camera.position.set(centre.x + size * 0.45, centre.y + size * 0.55, centre.z + size * 0.9);
    camera.lookAt(centre);
  }

  // ---- State -----------------------------------------------------------------------
  const state = { tick: meta.first_tick, playing: false, speed: 1, selected: -1, lastTime: 0, frames: 0 };
  const against = meta.against;
  const firstDiverged = against && against.first_tick !== null ? against.first_tick : null;

  const v3 = new T.Vector3(), q0 = new T.Quaternion(), q1 = new T.Quaternion();
  function poseAt(b, tick, out) {
    const t = track[b];
    const s0 = sampleAt(tick), i0 = at(t, s0);
    if (i0 < 0) return false;
    const s1 = Math.min(s0 + 1, nSamples - 1), i1 = at(t, s1);
    let a = 0;
    if (s1 !== s0 && i1 >= 0 && sampleTick[s1] > sampleTick[s0]) a = (tick - sampleTick[s0]) / (sampleTick[s1] - sampleTick[s0]);
    a = Math.max(0, Math.min(1, a));
    out.position.set(t.pos[i0 * 3], t.pos[i0 * 3 + 1], t.pos[i0 * 3 + 2]);
    q0.set(t.rot[i0 * 4], t.rot[i0 * 4 + 1], t.rot[i0 * 4 + 2], t.rot[i0 * 4 + 3]).normalize();
    if (a > 0) {
      v3.set(t.pos[i1 * 3], t.pos[i1 * 3 + 1], t.pos[i1 * 3 + 2]);
      out.position.lerp(v3, a);
      q1.set(t.rot[i1 * 4], t.rot[i1 * 4 + 1], t.rot[i1 * 4 + 2], t.rot[i1 * 4 + 3]).normalize();
      q0.slerp(q1, a);
    }
    out.quaternion.copy(q0);
    return true;
  }

  // Bodies whose position in the other run differs at the sample drawn for `tick`,
  // largest error first: [{b, err, pos, rot}].
  function divergentAt(tick) {
    if (firstDiverged === null || tick < firstDiverged) return [];
    const s = sampleAt(tick);
    const m = other[s];
    if (!m) return [];
    const out = [];
    for (const [b, o] of m) {
      const t = track[b], i = at(t, s);
      // `only`: the body is in one run only ('this' or 'other'); its error is infinite.
      const only = o.absent ? 'this' : i < 0 ? 'other' : null;
      const err = !only ? Math.hypot(o.pos[0] - t.pos[i * 3], o.pos[1] - t.pos[i * 3 + 1], o.pos[2] - t.pos[i * 3 + 2]) : Infinity;
      // Velocity error against this run's stored (3-digit) velocity: for ordering only.
      const dv = !only ? Math.hypot(o.lin[0] - t.lin[i * 3], o.lin[1] - t.lin[i * 3 + 1], o.lin[2] - t.lin[i * 3 + 2]) : Infinity;
      out.push({ b, err, dv, only, pos: o.pos, rot: o.rot, lin: o.lin, ang: o.ang });
    }
    out.sort((x, y) => (y.err - x.err) || (y.dv - x.dv) || (bodies[x.b].id - bodies[y.b].id));
    return out;
  }

  function formatLength(m) {
    if (!isFinite(m)) return 'in one run only';
    const a = Math.abs(m);
    if (a === 0) return '0 m (velocity or rotation)';
    if (a >= 1) return m.toFixed(3) + ' m';
    if (a >= 1e-3) return (m * 1e3).toFixed(3) + ' mm';
    if (a >= 1e-6) return (m * 1e6).toFixed(3) + ' µm';
    return (m * 1e9).toFixed(3) + ' nm';
  }
  function describeError(d) {
    if (d.only === 'this') return 'only in this run';
    if (d.only === 'other') return 'only in the other run';
    return formatLength(d.err);
  }
  // A stored float32 with the digits that read back to the same bits.
  function exact(x) {
    const t = x.toPrecision(9);
    return t.includes('.') && !t.includes('e') ? t.replace(/0+$/, '').replace(/\.$/, '') : t;
  }
  const fmtExact = (v) => Array.from(v, exact).join(', ');
  const fmt3 = (v) => Array.from(v, (x) => x.toPrecision(3)).join(', ') + ' (3 digits)';
  const fmt = (v) => Array.from(v, (x) => (Math.abs(x) < 1e-4 && x !== 0 ? x.toExponential(3) : x.toFixed(4))).join(', ');

  // ---- Drawing ---------------------------------------------------------------------
  const labels = $('labels');
  function drawLabels(list) {
    labels.textContent = '';
    const rect = renderer.domElement.getBoundingClientRect();
    const placed = [];
    for (const d of list.slice(0, 8)) {
      const g = groups[d.b];
      if (!g.visible) continue;
      v3.copy(g.position).project(camera);
      if (v3.z > 1) continue;
      const x = (v3.x + 1) / 2 * rect.width;
      let y = (1 - v3.y) / 2 * rect.height;
      // Step a label up past the ones already placed near it, so none hides another.
      for (let i = 0; i < 12 && placed.some((p) => Math.abs(p[0] - x) < 110 && Math.abs(p[1] - y) < 16); ++i) y -= 16;
      placed.push([x, y]);
      const el = document.createElement('div');
      el.className = 'label3d';
      el.textContent = bodies[d.b].id + ': ' + describeError(d);
      el.style.left = x + 'px';
      el.style.top = y + 'px';
      labels.appendChild(el);
    }
  }

  function drawContacts(tick) {
    const show = $('contacts').checked && contactSamples.length > 0;
    contactPoints.visible = contactNormals.visible = show;
    if (!show) return null;
    const s = sampleAt(tick);
    let c = contactSamples[0];
    for (const x of contactSamples) { if (x.sample <= s) c = x; else break; }
    contactGeometry.setAttribute('position', new T.Float32BufferAttribute(c.points, 3));
    const seg = new Float32Array(c.points.length * 2);
    for (let i = 0; i < c.points.length / 3; ++i) {
      for (let k = 0; k < 3; ++k) {
        seg[i * 6 + k] = c.points[i * 3 + k];
        seg[i * 6 + 3 + k] = c.points[i * 3 + k] + 0.25 * c.normals[i * 3 + k];
      }
    }
    normalGeometry.setAttribute('position', new T.Float32BufferAttribute(seg, 3));
    return sampleTick[c.sample];
  }

  function draw() {
    const tick = state.tick;
    const shown = Math.floor(tick);
    const s = sampleAt(tick);
    const tint = $('sleeptint').checked;
    const div = divergentAt(shown);
    const divSet = new Map(div.map((d) => [d.b, d]));
    for (let b = 0; b < nBodies; ++b) {
      const g = groups[b];
      g.visible = poseAt(b, tick, g);
      const mat = g.userData.material;
      mat.color.copy(g.userData.base);
      const i = at(track[b], s);
      if (tint && i >= 0 && track[b].sleep[i]) mat.color.lerp(sleepColour, 0.65);
      if (divSet.has(b)) warnFor(divSet.get(b).err, mat.color);
      mat.emissive.setHex(b === state.selected ? 0x333333 : 0x000000);
    }
    const showGhost = $('ghost').checked;
    const seg = [];
    ghosts.forEach((g) => { if (g) g.visible = false; });
    for (const d of div) {
      if (!showGhost) break;
      if (d.only === 'this') continue;
      const g = ghostOf(d.b);
      g.visible = true;
      g.position.set(d.pos[0], d.pos[1], d.pos[2]);
      g.quaternion.set(d.rot[0], d.rot[1], d.rot[2], d.rot[3]).normalize();
      if (groups[d.b].visible) seg.push(...groups[d.b].position.toArray(), ...d.pos);
    }
    errorGeometry.setAttribute('position', new T.Float32BufferAttribute(new Float32Array(seg), 3));
    const contactTick = drawContacts(tick);
    renderer.render(scene, camera);
    drawLabels(div);
    return { shown, s, div, contactTick };
  }

  // ---- Panels ----------------------------------------------------------------------
  function row(name, value) {
    const tr = document.createElement('tr');
    const a = document.createElement('td'); a.textContent = name;
    const b = document.createElement('td'); b.textContent = value; b.className = 'mono';
    tr.append(a, b);
    return tr;
  }

  function updateSelection(shown, s, div) {
    const box = $('selection');
    box.textContent = '';
    const b = state.selected;
    if (b < 0) { box.textContent = 'Click a body.'; return; }
    const body = bodies[b], t = track[b];
    const table = document.createElement('table');
    table.append(row('id', body.id), row('motion', body.motion + (body.role !== 'scene' ? ' (' + body.role + ')' : '')),
      row('shapes', body.shapes.map((x) => x.type).join(', ')));
    if (body.kind) table.append(row('kind', body.kind));
    const i = at(t, s);
    const d = div.find((x) => x.b === b);
    if (i < 0) {
      table.append(row('tick ' + shown, d ? 'only in the other run' : 'not in the world'));
      if (d) table.append(row('other run', fmtExact(d.pos)), row('its lin. vel.', fmtExact(d.lin)));
    } else {
      table.append(
        row('at tick', sampleTick[s] === shown ? String(shown) : sampleTick[s] + ' (nearest drawn tick at or before ' + shown + ')'),
        row('position', fmtExact(t.pos.subarray(i * 3, i * 3 + 3))),
        row('rotation', fmt(t.rot.subarray(i * 4, i * 4 + 4)) + ' (x y z w ±3e-5)'),
        row('lin. velocity', fmt3(t.lin.subarray(i * 3, i * 3 + 3))),
        row('ang. velocity', fmt3(t.ang.subarray(i * 3, i * 3 + 3))),
        row('sleeping', t.sleep[i] ? 'yes' : 'no'));
      if (d && d.only) {
        table.append(row('other run', 'not in the world'));
      } else if (d) {
        table.append(row('other run', fmtExact(d.pos)), row('position error', formatLength(d.err)),
          row('its lin. vel.', fmtExact(d.lin)), row('its ang. vel.', fmtExact(d.ang)));
      }
    }
    box.appendChild(table);
  }

  function updateDivergence(shown, div) {
    const box = $('divergence');
    if (!against) return;
    box.hidden = false;
    box.textContent = '';
    const add = (cls, text) => { const p = document.createElement('div'); if (cls) p.className = cls; p.textContent = text; box.appendChild(p); return p; };
    add('', 'Against ' + against.kind + ': ' + against.path);
    if (against.inputs_at !== null) add('', 'inputs first differ at tick ' + against.inputs_at);
    if (firstDiverged === null) { add('', 'no difference: every hash matches'); return; }
    add('warn', 'first divergent tick: ' + firstDiverged);
    add('mono', 'A ' + against.hash_a + '  B ' + against.hash_b);
    add('', 'bodies that differ there (as keel-replay diff): ' + (against.diff_bodies.length ? against.diff_bodies.join(', ') : 'none — the re-runs agree; see keel-replay diff'));
    if (shown < firstDiverged) { add('', 'before the divergence: no body differs'); return; }
    add('', div.length + ' bodies differ at tick ' + shown + ', by position error:');
    const ul = document.createElement('ul');
    ul.id = 'divlist';
    for (const d of div) {
      const li = document.createElement('li');
      if (d.b === state.selected) li.className = 'sel';
      const a = document.createElement('span'); a.textContent = 'body ' + bodies[d.b].id;
      const e = document.createElement('span'); e.className = 'mono'; e.textContent = describeError(d);
      li.append(a, e);
      li.addEventListener('click', () => { state.selected = d.b; refresh(); });
      ul.appendChild(li);
    }
    box.appendChild(ul);
  }

  function updateStatus(r) {
    $('tick').textContent = String(r.shown);
    $('hash').textContent = hashAt(r.shown);
    const rerun = $('rerun');
    const bad = notReproduced.has(r.shown);
    rerun.className = bad ? 'bad' : '';
    rerun.textContent = bad ? 're-run here: NOT reproduced (the hash above is the recorded one)' : 're-run here: reproduced';
    const parts = [];
    if (meta.every > 1) parts.push('drawn every ' + meta.every + ' ticks (interpolated between)');
    if (!$('contacts').checked) { /* nothing */ } else if (!contactSamples.length) parts.push('contacts were left out of this page');
    else if (r.contactTick !== r.shown) parts.push('contacts shown: tick ' + r.contactTick);
    $('sampling').textContent = parts.join('; ');
    // The game events of the shown tick, by the game's own names.
    const here = (meta.events || []).filter((e) => e.tick === r.shown);
    $('events').textContent = here.length ? 'events: ' + here.map((e) => e.name + (e.payload ? ' (' + e.payload + ')' : '')).join('; ') : '';
    $('timeline').value = String(r.shown);
    if (document.activeElement !== $('tickinput')) $('tickinput').value = String(r.shown);
  }

  let lastShown = -1;
  function refresh(force = true) {
    const r = draw();
    if (force || r.shown !== lastShown) {
      updateStatus(r);
      updateSelection(r.shown, r.s, r.div);
      updateDivergence(r.shown, r.div);
      lastShown = r.shown;
    }
    state.frames += 1;
    if (state.frames === 1) document.body.dataset.ready = '1';
  }

  // ---- Controls --------------------------------------------------------------------
  function setTick(t) {
    state.tick = Math.max(meta.first_tick, Math.min(meta.last_tick, Math.round(Number(t))));
    refresh(true);
  }
  function setPlaying(p) {
    state.playing = p;
    if (p && state.tick >= meta.last_tick) state.tick = meta.first_tick;
    $('play').textContent = p ? 'Pause' : 'Play';
  }

  $('title').textContent = 'Keel replay · ' + (meta.scene || 'scene');
  $('source').textContent = meta.source + ' · ticks ' + meta.first_tick + '..' + meta.last_tick + ' at ' + meta.tick_rate + ' Hz · ' + meta.build.build_id + ', ' + meta.build.compiler + ', ' + meta.build.target;
  $('warnings').textContent = meta.warnings.length ? 'warnings: ' + meta.warnings.join('; ') : '';
  const timeline = $('timeline');
  timeline.min = String(meta.first_tick);
  timeline.max = String(meta.last_tick);
  timeline.addEventListener('input', () => { setPlaying(false); setTick(timeline.value); });
  $('tickinput').addEventListener('change', (e) => { setPlaying(false); setTick(e.target.value); });
  $('play').addEventListener('click', () => setPlaying(!state.playing));
  $('speed').addEventListener('change', (e) => { state.speed = Number(e.target.value); });
  for (const id of ['contacts', 'sleeptint', 'ghost']) $(id).addEventListener('change', () => refresh(true));
  if (against && firstDiverged !== null) $('ghostlabel').hidden = false;
  window.addEventListener('keydown', (e) => {
    if (e.target.tagName === 'INPUT' && e.target.type === 'number') return;
    if (e.code === 'Space') { e.preventDefault(); setPlaying(!state.playing); }
    else if (e.code === 'ArrowRight') { setPlaying(false); setTick(Math.floor(state.tick) + 1); }
    else if (e.code === 'ArrowLeft') { setPlaying(false); setTick(Math.floor(state.tick) - 1); }
    else if (e.code === 'KeyF' && state.selected >= 0) { frameCamera(sampleAt(state.tick), [state.selected]); refresh(true); }
  });

  // Timeline marks: the first divergent tick, and ticks not reproduced here.
  (function marks() {
    const span = Math.max(1, meta.last_tick - meta.first_tick);
    const place = (tick, cls, text) => {
      const m = document.createElement('div');
      m.className = 'mark ' + cls;
      m.style.left = ((tick - meta.first_tick) / span * 100) + '%';
      m.title = text;
      if (cls === 'diverge') { const s = document.createElement('span'); s.textContent = text; m.appendChild(s); }
      $('marks').appendChild(m);
    };
    for (const t of meta.not_reproduced.slice(0, 200)) place(t, 'rerun', 'tick ' + t + ' not reproduced here');
    for (const e of meta.events || []) place(e.tick, 'event', 'tick ' + e.tick + ': ' + e.name + (e.payload ? ' ' + e.payload : ''));
    if (firstDiverged !== null) place(firstDiverged, 'diverge', 'diverges at ' + firstDiverged);
  })();

  // Click (without dragging) selects the body under the pointer.
  const raycaster = new T.Raycaster(), pointer = new T.Vector2();
  let down = null;
  renderer.domElement.addEventListener('pointerdown', (e) => { down = [e.clientX, e.clientY]; });
  renderer.domElement.addEventListener('pointerup', (e) => {
    if (!down || Math.hypot(e.clientX - down[0], e.clientY - down[1]) > 4) return;
    const rect = renderer.domElement.getBoundingClientRect();
    pointer.set((e.clientX - rect.left) / rect.width * 2 - 1, -((e.clientY - rect.top) / rect.height) * 2 + 1);
    raycaster.setFromCamera(pointer, camera);
    const hit = raycaster.intersectObjects(groups.filter((g) => g.visible), true)[0];
    state.selected = hit ? hit.object.userData.body : -1;
    refresh(true);
  });

  function resize() {
    const w = container.clientWidth || 800, h = container.clientHeight || 600;
    renderer.setSize(w, h, false);
    camera.aspect = w / h;
    camera.updateProjectionMatrix();
  }
  window.addEventListener('resize', () => { resize(); refresh(true); });
  resize();

  // Draws only when something changed: playing, the camera moving, or an event (which
  // calls refresh itself). An idle page costs nothing.
  let dirty = true;
  controls.addEventListener('change', () => { dirty = true; });
  function loop(time) {
    const dt = state.lastTime ? Math.min(0.1, (time - state.lastTime) / 1000) : 0;
    state.lastTime = time;
    if (state.playing) {
      state.tick = Math.min(meta.last_tick, state.tick + dt * meta.tick_rate * state.speed);
      if (state.tick >= meta.last_tick) setPlaying(false);
      dirty = true;
    }
    controls.update();
    if (dirty) {
      dirty = false;
      refresh(false);
    }
    requestAnimationFrame(loop);
  }
  // Start at the first divergent tick when there is one, looking at what diverged: that
  // is what the page is for.
  if (firstDiverged !== null) {
    state.tick = firstDiverged;
    const first = divergentAt(firstDiverged).map((d) => d.b);
    frameCamera(sampleAt(firstDiverged), first);
  } else {
    frameCamera(0, null);
  }
  refresh(true);
  requestAnimationFrame(loop);

  // For scripts (the browser test) and the console.
  // screenOf(id): where body `id` is drawn, in page coordinates (null when not drawn).
  function screenOf(id) {
    const b = bodies.findIndex((x) => x.id === id);
    if (b < 0 || !groups[b].visible) return null;
    const p = groups[b].position.clone().project(camera);
    const rect = renderer.domElement.getBoundingClientRect();
    return { x: rect.left + (p.x + 1) / 2 * rect.width, y: rect.top + (1 - p.y) / 2 * rect.height };
  }
  window.keelViewer = { meta, setTick, hashAt, divergentAt, screenOf, state, bodies };
})();
