// The sandbox page's 3-D view (served by keel-server --web; docs/browser.md): the bodies of
// the wasm32 client's world description drawn with three.js (the replay viewer's vendored
// bundle, served as /three.js, the global KEEL_THREE) at the poses the client predicts,
// the predicted world's contact points, and the picking that turns a pointer into a world
// point (free ground to spawn on, a body to drag, the point a dragged body is pulled to).
// Drawing stays cheap with many bodies: meshes are built only when the body list changes,
// bodies of one shape and size share one geometry and bodies of one colour one material,
// and a frame only copies poses into the meshes and contact points into buffers made once.
'use strict';

(function () {
  const T = window.KEEL_THREE;
  const KIND_CHARACTER = 1, KIND_BALL = 2;  // the sandbox's body kinds (keel/games/sandbox.h)
  const MAX_CONTACTS = 4096;  // keel_web_client.mjs MAX_CONTACT_POINTS
  const NORMAL_LENGTH = 0.3;  // m: the drawn contact normal
  // The same colours as the replay viewer (replay/tool/viewer/viewer.js, baseColour).
  const palette = [0xe0a040, 0x58b368, 0xd46a6a, 0x6a8fd4, 0xc07ad4, 0x4fc1c1, 0xd4c45a, 0x9fd46a];
  function colourOf(b) {
    if (b.motion === 'static') return 0x7d838c;
    if (b.motion === 'kinematic') return 0x3fa7a0;
    if (b.kind === KIND_CHARACTER) return 0x4d8dff;
    if (b.kind === KIND_BALL) return 0xff9f2e;
    return palette[b.id % palette.length];
  }

  function createView(container) {
    const renderer = new T.WebGLRenderer({ antialias: false, preserveDrawingBuffer: true });
    renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
    container.appendChild(renderer.domElement);
    const scene = new T.Scene();
    scene.background = new T.Color(0x1d2229);
    const camera = new T.PerspectiveCamera(50, 1, 0.05, 2000);
    camera.position.set(13, 11, 17);
    scene.add(new T.HemisphereLight(0xdde6f0, 0x30343a, 1.6));
    const sun = new T.DirectionalLight(0xffffff, 1.6);
    sun.position.set(8, 20, 12);
    scene.add(sun);
    const grid = new T.GridHelper(64, 64, 0x4a525e, 0x343a44);  // the spawn area, 1 m squares
    grid.position.y = 0.002;
    scene.add(grid);
    // The left button is the visitor's (spawn, drag); the right one turns the camera.
    const controls = new T.OrbitControls(camera, renderer.domElement);
    controls.mouseButtons = { LEFT: null, MIDDLE: 1, RIGHT: 0 };  // three's MOUSE.DOLLY, MOUSE.ROTATE
    controls.target.set(0, 1, 0);
    controls.enableDamping = true;
    controls.update();

    // ---- Bodies ------------------------------------------------------------------------
    const geometries = new Map(), materials = new Map();
    const cached = (map, key, make) => { let v = map.get(key); if (!v) { v = make(); map.set(key, v); } return v; };
    const r4 = (x) => Math.round(x * 1e4) / 1e4;
    function geometryOf(c) {
      switch (c.shape) {
        case 'sphere': return cached(geometries, 's' + r4(c.radius), () => new T.SphereGeometry(c.radius, 16, 12));
        case 'box': {
          const h = c.half_extents;
          return cached(geometries, 'b' + h.map(r4), () => new T.BoxGeometry(2 * h[0], 2 * h[1], 2 * h[2]));
        }
        case 'capsule':
          return cached(geometries, 'c' + r4(c.radius) + ',' + r4(c.half_height),
            () => new T.CapsuleGeometry(c.radius, 2 * c.half_height, 4, 12));
        default: return null;  // hull, mesh, heightfield: drawn as the box of their points
      }
    }
    function meshOf(b, c) {
      const colour = colourOf(b);
      let geometry = geometryOf(c), mesh;
      if (geometry) {
        const material = cached(materials, colour + (c.trigger ? 't' : ''), () => new T.MeshStandardMaterial(
          { color: colour, roughness: 0.75, metalness: 0.05, transparent: c.trigger, opacity: c.trigger ? 0.25 : 1 }));
        mesh = new T.Mesh(geometry, material);
        mesh.position.set(...c.center);
        mesh.quaternion.set(...c.rotation);
      } else {
        const lo = c.bounds_min, hi = c.bounds_max;
        geometry = new T.BoxGeometry(Math.max(hi[0] - lo[0], 0.01), Math.max(hi[1] - lo[1], 0.01), Math.max(hi[2] - lo[2], 0.01));
        mesh = new T.Mesh(geometry, cached(materials, colour + 'w', () => new T.MeshBasicMaterial({ color: colour, wireframe: true })));
        const centre = new T.Vector3((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2);
        mesh.quaternion.set(...c.rotation);
        mesh.position.set(...c.center).add(centre.applyQuaternion(mesh.quaternion));
      }
      mesh.userData = { body: b.id, trigger: c.trigger };
      return mesh;
    }

    let drawn = new Map();  // id -> { group, body }
    let version = -1;
    const pickable = [];
    // Rebuilds the meshes when the client's body list changed (stats().world_version).
    function sync(client, worldVersion) {
      if (worldVersion === version) return;
      version = worldVersion;
      const next = new Map();
      for (const b of client.bodies()) {
        const old = drawn.get(b.id);
        if (old && old.body.colliders.length === b.colliders.length && old.body.kind === b.kind && old.body.motion === b.motion) {
          next.set(b.id, old);
          drawn.delete(b.id);
          continue;
        }
        const group = new T.Group();
        for (const c of b.colliders) group.add(meshOf(b, c));
        group.position.set(...b.position);
        group.quaternion.set(...b.rotation);
        group.userData.body = b.id;
        scene.add(group);
        next.set(b.id, { group, body: b });
      }
      for (const { group } of drawn.values()) {
        scene.remove(group);
        for (const m of group.children) if (m.material.wireframe) m.geometry.dispose();  // its own, not shared
      }
      drawn = next;
      pickable.length = 0;
      for (const { group } of drawn.values()) pickable.push(group);
    }

    const pose = new Float32Array(7);
    function placeBodies(client, now) {
      for (const [id, d] of drawn) {
        if (d.body.motion === 'static') continue;  // stays where it was described
        if (!client.poseInto(id, now, pose)) continue;
        d.group.position.set(pose[0], pose[1], pose[2]);
        d.group.quaternion.set(pose[3], pose[4], pose[5], pose[6]);
      }
    }

    // ---- Contact points and the drag line ----------------------------------------------
    const contactPositions = new T.Float32BufferAttribute(new Float32Array(MAX_CONTACTS * 3), 3);
    const contactGeometry = new T.BufferGeometry();
    contactGeometry.setAttribute('position', contactPositions);
    const contactPoints = new T.Points(contactGeometry,
      new T.PointsMaterial({ color: 0xffe14d, size: 6, sizeAttenuation: false, depthTest: false }));
    const normalPositions = new T.Float32BufferAttribute(new Float32Array(MAX_CONTACTS * 6), 3);
    const normalGeometry = new T.BufferGeometry();
    normalGeometry.setAttribute('position', normalPositions);
    const contactNormals = new T.LineSegments(normalGeometry, new T.LineBasicMaterial({ color: 0xffe14d, depthTest: false }));
    contactPoints.frustumCulled = contactNormals.frustumCulled = false;
    contactPoints.renderOrder = contactNormals.renderOrder = 2;
    scene.add(contactPoints, contactNormals);
    let contactCount = 0;
    function drawContacts(client, show) {
      contactPoints.visible = contactNormals.visible = show;
      contactCount = 0;
      if (!show) return;
      const { count, data } = client.contacts();
      const p = contactPositions.array, n = normalPositions.array;
      for (let i = 0; i < count; ++i) {
        const s = 6 * i;
        p[3 * i] = data[s]; p[3 * i + 1] = data[s + 1]; p[3 * i + 2] = data[s + 2];
        n[s] = data[s]; n[s + 1] = data[s + 1]; n[s + 2] = data[s + 2];
        n[s + 3] = data[s] + NORMAL_LENGTH * data[s + 3];
        n[s + 4] = data[s + 1] + NORMAL_LENGTH * data[s + 4];
        n[s + 5] = data[s + 2] + NORMAL_LENGTH * data[s + 5];
      }
      contactCount = count;
      contactGeometry.setDrawRange(0, count);
      normalGeometry.setDrawRange(0, 2 * count);
      contactPositions.needsUpdate = normalPositions.needsUpdate = true;
    }

    const dragPositions = new T.Float32BufferAttribute(new Float32Array(6), 3);
    const dragGeometry = new T.BufferGeometry();
    dragGeometry.setAttribute('position', dragPositions);
    const dragLine = new T.LineSegments(dragGeometry, new T.LineBasicMaterial({ color: 0xffffff, depthTest: false }));
    dragLine.frustumCulled = false;
    dragLine.visible = false;
    scene.add(dragLine);
    // The line from a held body's grabbed point to where it is pulled; null hides it.
    function drawDrag(held) {
      dragLine.visible = held !== null;
      if (!held) return;
      const d = drawn.get(held.id);
      if (!d) return;
      grabbed.copy(held.offset).add(d.group.position);
      dragPositions.array.set([grabbed.x, grabbed.y, grabbed.z, held.point.x, held.point.y, held.point.z]);
      dragPositions.needsUpdate = true;
    }

    // ---- Picking -----------------------------------------------------------------------
    const raycaster = new T.Raycaster(), ndc = new T.Vector2(), grabbed = new T.Vector3();
    // Planes as a normal and a point on them (the bundle has no Plane).
    const ground = { normal: new T.Vector3(0, 1, 0), point: new T.Vector3(0, 0, 0) };
    const dragPlane = { normal: new T.Vector3(), point: new T.Vector3() };
    // The ray's point on a plane into `out`; false when it is parallel or the plane behind.
    function onPlane(r, plane, out) {
      const along = r.direction.dot(plane.normal);
      if (Math.abs(along) < 1e-6) return false;
      const t = out.copy(plane.point).sub(r.origin).dot(plane.normal) / along;
      if (t < 0) return false;
      out.copy(r.direction).multiplyScalar(t).add(r.origin);
      return true;
    }
    function ray(clientX, clientY) {
      const r = renderer.domElement.getBoundingClientRect();
      ndc.set(((clientX - r.left) / r.width) * 2 - 1, -((clientY - r.top) / r.height) * 2 + 1);
      raycaster.setFromCamera(ndc, camera);
      return raycaster;
    }
    // What is under the pointer: { body: {id, motion, kind}, point, centre } for a body one
    // may drag, { ground: true, point } for free ground (an upward face, or the plane y = 0
    // where nothing is hit), or null.
    function pick(clientX, clientY) {
      const hits = ray(clientX, clientY).intersectObjects(pickable, true).filter((h) => !h.object.userData.trigger);
      if (hits.length) {
        const h = hits[0], d = drawn.get(h.object.userData.body);
        if (d && d.body.motion === 'dynamic' && d.body.kind !== KIND_CHARACTER) {
          return { body: d.body, point: h.point.clone(), centre: d.group.position.clone() };
        }
        // Ground is an upward face of a static body: not a character's head, not a box's lid.
        const up = h.face ? h.face.normal.clone().transformDirection(h.object.matrixWorld).y : 0;
        return d && d.body.motion === 'static' && up > 0.7 ? { ground: true, point: h.point.clone() } : null;
      }
      const p = new T.Vector3();
      return onPlane(raycaster.ray, ground, p) ? { ground: true, point: p } : null;
    }
    // Starts a drag: the plane facing the camera through the grabbed point.
    function beginDrag(point) {
      camera.getWorldDirection(dragPlane.normal);
      dragPlane.point.copy(point);
    }
    // The point of the drag plane under the pointer, into `out`; false when the ray misses it.
    function dragPoint(clientX, clientY, out) {
      return onPlane(ray(clientX, clientY).ray, dragPlane, out);
    }
    // Where a world point is on the page, in CSS pixels (the tests click there).
    function screenOf(p) {
      const v = new T.Vector3(p[0], p[1], p[2]).project(camera);
      const r = renderer.domElement.getBoundingClientRect();
      return { x: r.left + ((v.x + 1) / 2) * r.width, y: r.top + ((1 - v.y) / 2) * r.height, visible: v.z < 1 };
    }

    function resize() {
      const w = container.clientWidth || window.innerWidth, h = container.clientHeight || window.innerHeight;
      renderer.setSize(w, h, false);
      camera.aspect = w / h;
      camera.updateProjectionMatrix();
    }
    window.addEventListener('resize', resize);
    resize();

    function draw(client, now, options) {
      sync(client, options.worldVersion);
      placeBodies(client, now);
      drawContacts(client, options.contacts);
      drawDrag(options.held);
      controls.update();
      renderer.render(scene, camera);
    }

    return {
      canvas: renderer.domElement, draw, pick, beginDrag, dragPoint, screenOf,
      contactCount: () => contactCount,
      position: (id) => { const d = drawn.get(id); return d ? d.group.position.toArray() : null; },
      drawnBodies: () => drawn.size,
      vector: () => new T.Vector3(),
    };
  }

  window.KeelDraw = { createView };
})();
