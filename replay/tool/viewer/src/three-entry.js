// The parts of three.js the Keel viewer uses, bundled by `npm run vendor` into
// vendor/three-bundle.min.js (an IIFE that defines the global KEEL_THREE).
export {
  AmbientLight, BoxGeometry, BufferGeometry, CapsuleGeometry, Color, DirectionalLight,
  EdgesGeometry, Float32BufferAttribute, GridHelper, Group, HemisphereLight, LineBasicMaterial,
  LineSegments, Mesh, MeshBasicMaterial, MeshStandardMaterial, PerspectiveCamera, Points,
  PointsMaterial, Quaternion, Raycaster, Scene, SphereGeometry, Vector2, Vector3, WebGLRenderer,
  REVISION,
} from 'three';
export { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
