// Canonical state: every field that influences a future step, written little-endian,
// field by field, without padding, in slot order. Capacities, tree shapes and pointers
// never appear, so two worlds that will step identically serialise identically.
//
// Layout (docs/determinism.md has the table):
//   "KEELSTAT" u32 version | settings | tick u64 | next_auto_id u32
//   body slots: u32 count, per slot: u8 alive, u32 generation, [body fields]
//   body free list | shape slots | shape free list | contacts (in key order)
//   touching pairs | sensed pairs | joints (only when the world has had any, tagged)
//   | characters (only when the world has any)
//   | solver section (only when the solver settings are not the default, tagged)
// The state hash over these bytes is in state/hash.cpp (from the bytes) and
// state/world_hash.cpp (from the world, with kept digests).
#include <keel/sim/world.h>

#include "character/character.h"
#include "state/state_check.h"
#include "state/state_io.h"
#include "world_impl.h"

#include <cmath>
#include <cstring>

namespace keel::sim {

namespace {

constexpr char kMagic[8] = {'K', 'E', 'E', 'L', 'S', 'T', 'A', 'T'};
constexpr uint32_t kStateVersion = 5;  // 5: bodies keep their kind
// Bounds for reading untrusted state: far above any real world, low enough that a
// forged count cannot make us allocate gigabytes before the bytes run out.
constexpr uint32_t kMaxSlots = 1u << 22;

// Each field list below is written once, as a template over the direction: IO is a
// FieldWriter (Settings, Body... const) or a FieldReader (not const), and the few lines
// where reading differs (checks, derived fields) sit under `if constexpr (IO::kReading)`.

template <class IO, class S>
void visit_settings(IO& io, S& s) {
  io.u32(s.tick_rate);
  io.vec3(s.gravity);
  io.u32(s.substeps);
  io.f32(s.contact_hertz);
  io.f32(s.contact_damping_ratio);
  io.f32(s.contact_push_max_speed);
  io.f32(s.restitution_threshold);
  // threads is deliberately absent: it never changes results.
  if constexpr (IO::kReading) {
    if (Status st = validate_settings(s); !st) io.fail(st.error().message);
  }
}

// A body's fields up to its collider list (at most kBodyFieldBytes).
constexpr size_t kBodyFieldBytes = 200;
template <class IO, class B>
void visit_body_fields(IO& io, B& b) {
  io.u32(b.id);
  io.enum8(b.motion, MotionType::Dynamic, "body motion type unknown");
  io.transform(b.origin);
  io.vec3(b.center);
  io.vec3(b.local_center);
  io.vec3(b.linear_velocity);
  io.vec3(b.angular_velocity);
  io.f32(b.mass);
  io.f32(b.inv_mass);
  io.mat3(b.inertia_local);
  io.mat3(b.inv_inertia_local);
  io.f32(b.linear_damping);
  io.f32(b.angular_damping);
  io.f32(b.gravity_scale);
  io.f32(b.sleep_time);
  io.u32(b.island);
  io.f32(b.reach);
  io.u32(b.layer);
  io.u32(b.collides_with);
  io.u32(b.kind);
  // bit 0 freeze_rotation, bit 1 bullet (a byte that read 0/1 before bullets existed).
  if constexpr (IO::kReading) {
    uint8_t flags = 0;
    io.u8(flags);
    if (flags > 3) io.fail("body flags unknown");
    b.freeze_rotation = (flags & 1u) != 0;
    b.bullet = (flags & 2u) != 0;
  } else {
    io.u8(uint8_t((b.freeze_rotation ? 1u : 0u) | (b.bullet ? 2u : 0u)));
  }
  io.flag(b.can_sleep);
  io.flag(b.sleeping);
}

}  // namespace

// A body slot: alive, generation, and a live body's fields and collider slots.
void write_body_slot(StateWriter& w, const Body& b) {
  RecordWriter<5 + kBodyFieldBytes> fields;
  fields.u8(b.alive);
  fields.u32(b.generation);
  if (b.alive) visit_body_fields(fields, b);
  w.bytes(fields.written());
  if (!b.alive) return;
  w.u32(uint32_t(b.shapes.size()));
  for (uint32_t s : b.shapes) w.u32(s);
}

namespace {


void read_body(StateReader& r, Body& b) {
  FieldReader io(r);
  visit_body_fields(io, b);
  uint32_t n = r.count(4);
  b.shapes.resize(n);
  for (uint32_t& s : b.shapes) s = r.u32();
}

// A collider's fields before its geometry data (at most kShapeFieldBytes).
constexpr size_t kShapeFieldBytes = 96;
template <class IO, class S>
void visit_shape_fields(IO& io, S& s) {
  io.u32(s.body);
  io.enum8(s.type, ShapeType::Heightfield, "collider shape unknown");
  io.transform(s.local);
  io.f32(s.radius);
  io.f32(s.half_height);
  io.vec3(s.half_extents);
  io.f32(s.friction);
  io.f32(s.static_friction);
  io.f32(s.restitution);
  io.f32(s.density);
  io.flag(s.is_trigger);
  io.flag(s.enabled);
  io.flag(s.is_static);
  io.vec3(s.fat.lower);
  io.vec3(s.fat.upper);
}

}  // namespace

// A collider slot: alive, and a live collider's fields and geometry data.
void write_shape_slot(StateWriter& w, const Shape& s) {
  RecordWriter<1 + kShapeFieldBytes> fields;
  fields.u8(s.alive);
  if (s.alive) visit_shape_fields(fields, s);
  w.bytes(fields.written());
  if (!s.alive) return;
  if (s.type == ShapeType::Hull) {
    // The input cloud: the build is deterministic, so restoring rebuilds identical bytes.
    const std::vector<Vec3>& pts = s.hull->points;
    w.u32(uint32_t(pts.size()));
    for (const Vec3& p : pts) w.vec3(p);
  }
  // Geometry data follows only the shapes that have it, so the bytes of spheres, boxes
  // and capsules are unchanged.
  if (s.type == ShapeType::Mesh) {
    w.u32(uint32_t(s.mesh->vertices.size()));
    for (const Vec3& v : s.mesh->vertices) w.vec3(v);
    w.u32(uint32_t(s.mesh->indices.size()));
    for (uint32_t i : s.mesh->indices) w.u32(i);
  } else if (s.type == ShapeType::Heightfield) {
    w.u32(s.heightfield->rows);
    w.u32(s.heightfield->columns);
    w.f32(s.heightfield->cell_size);
    for (float h : s.heightfield->heights) w.f32(h);
  }
}

namespace {


// Reads a mesh's data, checks it like a scene's, and shares the replaced world's mesh at
// the same slot when the data is the same (a client rolling back rebuilds no BVH).
void read_mesh(StateReader& r, Shape& s, const Shape* previous) {
  std::vector<Vec3> points(r.count(12, kMaxMeshVertices));
  for (Vec3& v : points) v = r.vec3();
  std::vector<uint32_t> indices(r.count(4, kMaxMeshTriangles * 3));
  for (uint32_t& i : indices) i = r.u32();
  if (!r.ok()) return;
  if (previous && previous->mesh && previous->mesh->vertices == points && previous->mesh->indices == indices) {
    s.mesh = previous->mesh;
    return;
  }
  if (Status st = check_mesh_data(points, indices); !st) {
    r.fail("mesh collider: " + st.error().message);
    return;
  }
  s.mesh = build_mesh(points, indices);
}

void read_heightfield(StateReader& r, Shape& s, const Shape* previous) {
  const uint32_t rows = r.u32(), columns = r.u32();
  const float cell = r.f32();
  if (uint64_t(rows) * columns > kMaxHeightfieldSamples || uint64_t(rows) * columns * 4 > r.remaining()) {
    r.fail("heightfield collider: sample count exceeds the bytes left");
    return;
  }
  std::vector<float> heights(size_t(rows) * columns);
  for (float& h : heights) h = r.f32();
  if (!r.ok()) return;
  const HeightField* p = previous ? previous->heightfield.get() : nullptr;
  if (p && p->rows == rows && p->columns == columns && p->cell_size == cell && p->heights == heights) {
    s.heightfield = previous->heightfield;
    return;
  }
  if (Status st = check_heightfield_data(rows, columns, cell, heights); !st) {
    r.fail("heightfield collider: " + st.error().message);
    return;
  }
  s.heightfield = build_heightfield(rows, columns, cell, heights);
}

void read_shape(StateReader& r, Shape& s, const Shape* previous) {
  FieldReader io(r);
  visit_shape_fields(io, s);
  if (s.type == ShapeType::Hull && r.ok()) {
    std::vector<Vec3> pts(r.count(12, uint32_t(kMaxHullInputPoints)));
    for (Vec3& p : pts) p = r.vec3();
    if (previous && previous->hull && previous->hull->points == pts) {
      s.hull = previous->hull;  // the same cloud at the same slot: share, do not rebuild
    } else if (r.ok()) {
      auto hull = build_hull(pts);
      if (!hull) r.fail("collider hull: " + hull.error().message);
      else s.hull = *hull;
    }
  }
  if (!r.ok()) return;
  if (s.type == ShapeType::Mesh) read_mesh(r, s, previous);
  if (s.type == ShapeType::Heightfield) read_heightfield(r, s, previous);
}

// A contact is at most 9 bytes, 20 a point, and its sliding flag when it has points.
template <class IO, class C>
void visit_contact(IO& io, C& c) {
  io.u32(c.shape_a);
  io.u32(c.shape_b);
  if constexpr (IO::kReading) {
    c.key = pair_key(c.shape_a, c.shape_b);
    uint8_t n = 0;
    io.u8(n);
    if (n > kMaxManifoldPoints) io.fail("contact point count out of range");
    c.count = n > kMaxManifoldPoints ? 0 : n;
  } else {
    io.u8(uint8_t(c.count));
  }
  for (int i = 0; i < c.count; ++i) {
    auto& p = c.points[i];
    io.u32(p.id);
    io.f32(p.normal_impulse);
    io.vec3(p.friction_impulse);
  }
  if constexpr (IO::kReading) {
    c.sliding = false;
    if (c.count > 0) {
      uint8_t sliding = 0;
      io.u8(sliding);
      if (sliding > 1) io.fail("contact sliding flag out of range");
      c.sliding = sliding == 1;
    }
  } else if (c.count > 0) {
    io.flag(c.sliding);
  }
}

}  // namespace

void write_contact(StateWriter& out, const Contact& c) {
  RecordWriter<10 + 20 * kMaxManifoldPoints> w;
  visit_contact(w, c);
  out.bytes(w.written());
}

namespace {


void read_contact(StateReader& r, Contact& c) {
  FieldReader io(r);
  visit_contact(io, c);
}

void write_contacts(const WorldImpl& world, StateWriter& w) {
  const auto& contacts = world.contacts.items();
  w.u32(uint32_t(contacts.size()));
  for (const Contact& c : contacts) write_contact(w, c);
}

// The solver choice sits in its own tagged section at the end, written only when it is
// not the default: every state of a soft-step world keeps the bytes (and the goldens)
// it had before XPBD existed.
constexpr uint32_t kSolverTag = kSolverStateTag;

bool default_solver(const WorldSettings& s) {
  return s.solver_kind == SolverKind::SoftStep && s.contact_compliance == 0.0f &&
         !std::signbit(s.contact_compliance);
}

void write_solver_section(const WorldImpl& w, StateWriter& out) {
  if (default_solver(w.settings)) return;
  out.u32(kSolverTag);
  out.u8(uint8_t(w.settings.solver_kind));
  out.f32(w.settings.contact_compliance);
}

void read_solver_section(StateReader& in, WorldImpl& w) {
  uint32_t tag = 0;
  if (!in.peek_u32(tag) || tag != kSolverTag) return;
  in.u32();
  const uint8_t kind = in.u8();
  if (kind > uint8_t(SolverKind::Xpbd)) {
    in.fail("solver kind " + std::to_string(kind) + " unknown");
    return;
  }
  w.settings.solver_kind = SolverKind(kind);
  w.settings.contact_compliance = in.f32();
  if (Status st = validate_settings(w.settings); !st) in.fail(st.error().message);
  // A section that says the default is one the writer never makes.
  if (in.ok() && default_solver(w.settings)) in.fail("solver section states the default solver");
}

}  // namespace

void write_free_list(StateWriter& w, const std::vector<uint32_t>& list) {
  w.u32(uint32_t(list.size()));
  for (uint32_t v : list) w.u32(v);
}

namespace {


void read_free_list(StateReader& r, std::vector<uint32_t>& list, size_t slots, const char* what) {
  uint32_t n = r.count(4);
  list.resize(n);
  for (uint32_t& v : list) {
    v = r.u32();
    if (v >= slots) r.fail(std::string(what) + " free list names a slot that does not exist");
  }
}

}  // namespace

void write_state_header(const WorldImpl& world, StateWriter& w) {
  w.bytes(kMagic, sizeof kMagic);
  w.u32(kStateVersion);
  visit_settings(w, world.settings);
  w.u64(world.tick);
  w.u32(world.next_auto_id);  // kStateHeaderBytes in all
}

void write_state_tail(const WorldImpl& world, StateWriter& w) {
  // Which body pairs touched last tick: decides Began versus Stayed on the next.
  w.u32(uint32_t(world.touching_pairs.size()));
  for (uint64_t k : world.touching_pairs) w.u64(k);
  w.u32(uint32_t(world.sensed_pairs.size()));
  for (uint64_t k : world.sensed_pairs) w.u64(k);
  write_joints(world, w);      // absent for a world that never had a joint
  write_characters(world, w);  // absent for a world without characters
  write_solver_section(world, w);  // absent for the default solver
}

void write_state(const WorldImpl& world, StateWriter& w) {
  write_state_header(world, w);
  w.u32(uint32_t(world.bodies.size()));
  for (const Body& b : world.bodies) write_body_slot(w, b);
  write_free_list(w, world.free_bodies);
  w.u32(uint32_t(world.shapes.size()));
  for (const Shape& s : world.shapes) write_shape_slot(w, s);
  write_free_list(w, world.free_shapes);
  write_contacts(world, w);
  write_state_tail(world, w);
}

namespace {

void read_sorted_keys(StateReader& r, std::vector<uint64_t>& keys, const char* what) {
  uint32_t n = r.count(8, kMaxSlots * 4);
  keys.resize(n);
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    keys[i] = r.u64();
    if (i > 0 && keys[i] <= keys[i - 1]) r.fail(std::string(what) + " are not sorted");
  }
}

// Cross-checks that make a forged or damaged state fail cleanly instead of stepping
// with indices that point nowhere.
void check_references(StateReader& r, const WorldImpl& w) {
  for (const Body& b : w.bodies) {
    if (!b.alive) continue;
    for (uint32_t s : b.shapes) {
      if (s >= w.shapes.size() || !w.shapes[s].alive || w.shapes[s].body >= w.bodies.size() ||
          &w.bodies[w.shapes[s].body] != &b) {
        r.fail("body " + std::to_string(b.id) + " names a collider slot that is not its own");
        return;
      }
    }
  }
  uint64_t prev = 0;
  bool first = true;
  for (const Contact& c : w.contacts.items()) {
    if (c.shape_a >= c.shape_b || c.shape_b >= w.shapes.size() || !w.shapes[c.shape_a].alive ||
        !w.shapes[c.shape_b].alive || (!first && c.key <= prev)) {
      r.fail("contact list is not sorted or names a missing collider");
      return;
    }
    prev = c.key;
    first = false;
  }
}

// What the slot arrays of a restored world may take. A dead slot costs a few bytes in the
// state (a dead collider one) but a whole slot in memory (a collider's is about 180
// bytes), so counts bounded by the bytes left would still let a small state claim
// gigabytes. A state whose arrays need more than kSlotMemoryBase + kSlotMemoryPerByte
// times its own size is refused before anything is allocated. A real state needs at most
// a few times its size (every live slot writes most of what it holds), and the base
// leaves room for worlds that once held some 300,000 colliders and removed them.
constexpr size_t kSlotMemoryBase = size_t{64} << 20;
constexpr size_t kSlotMemoryPerByte = 16;

class SlotMemory {
 public:
  explicit SlotMemory(size_t state_bytes) : left_(kSlotMemoryBase + kSlotMemoryPerByte * state_bytes) {}
  // Whether `count` slots of `each` bytes fit; fails the reader when they do not.
  bool take(StateReader& r, uint64_t count, size_t each, const char* what) {
    const uint64_t need = count * each;
    if (need > left_) {
      r.fail(std::string(what) + " would need " + std::to_string(need >> 20) + " MiB, more than a state of this size may (" +
             std::to_string(left_ >> 20) + " MiB left)");
      return false;
    }
    left_ -= need;
    return true;
  }

 private:
  size_t left_;
};

Status read_state(StateReader& r, WorldImpl& w, const WorldImpl& previous) {
  SlotMemory memory(r.left());
  char magic[8] = {};
  r.bytes(magic, sizeof magic);
  if (!r.ok() || std::memcmp(magic, kMagic, sizeof kMagic) != 0) return Error{"not a Keel world state"};
  uint32_t version = r.u32();
  if (version != kStateVersion) {
    return Error{"world state version " + std::to_string(version) + " is not supported (this build reads " +
                 std::to_string(kStateVersion) + ")"};
  }
  FieldReader settings(r);
  visit_settings(settings, w.settings);
  w.tick = r.u64();
  w.next_auto_id = r.u32();
  uint32_t nb = r.count(5, kMaxSlots);
  if (!memory.take(r, nb, sizeof(Body), "body slots")) nb = 0;
  w.bodies.assign(nb, Body{});
  for (Body& b : w.bodies) {
    b.alive = r.u8() != 0;
    b.generation = r.u32();
    if (b.alive && r.ok()) read_body(r, b);
  }
  read_free_list(r, w.free_bodies, w.bodies.size(), "body");
  uint32_t ns = r.count(1, kMaxSlots);
  if (!memory.take(r, ns, sizeof(Shape), "collider slots")) ns = 0;
  w.shapes.assign(ns, Shape{});
  for (size_t i = 0; i < w.shapes.size(); ++i) {
    Shape& s = w.shapes[i];
    s.alive = r.u8() != 0;
    const Shape* prev = i < previous.shapes.size() && previous.shapes[i].alive ? &previous.shapes[i] : nullptr;
    if (s.alive && r.ok()) read_shape(r, s, prev);
    if (s.alive && s.body >= nb) r.fail("collider names a body slot that does not exist");
  }
  read_free_list(r, w.free_shapes, w.shapes.size(), "collider");
  uint32_t nc = r.count(9, kMaxSlots * 4);
  if (!memory.take(r, nc, sizeof(Contact), "contacts")) nc = 0;
  auto& contacts = w.contacts.items();
  contacts.assign(nc, Contact{});
  for (Contact& c : contacts) read_contact(r, c);
  w.contacts.rebuild_keys();
  read_sorted_keys(r, w.touching_pairs, "touching pairs");
  read_sorted_keys(r, w.sensed_pairs, "sensed pairs");
  if (r.ok()) read_joints(r, w);
  if (r.ok()) read_characters(r, w);
  if (r.ok()) read_solver_section(r, w);
  if (r.ok() && !r.at_end()) r.fail("trailing bytes after the state");
  if (r.ok()) check_references(r, w);
  if (!r.ok()) return Error{"world state is damaged: " + r.error()};
  return Status::ok();
}

// The restored world must encode back to the very bytes it came from: such bytes would
// otherwise hash differently from the world they restore to, and a peer that restored
// them would report a desync it does not have. Every field is written as read, so this
// fails only where the input used an encoding the writer never produces (a flag byte
// other than 0 or 1, an alive byte of 2), or where a contact between two bodies that
// cannot move disagrees with their poses (its ids and points are recomputed from them on
// restore, as they were when those bodies fell asleep).
Status check_canonical(const WorldImpl& w, std::span<const uint8_t> bytes) {
  std::vector<uint8_t> again;
  again.reserve(bytes.size());
  StateWriter out(again);
  write_state(w, out);
  out.finish();
  if (again.size() == bytes.size() && std::memcmp(again.data(), bytes.data(), bytes.size()) == 0) {
    return Status::ok();
  }
  size_t at = 0;
  while (at < again.size() && at < bytes.size() && again[at] == bytes[at]) ++at;
  return Error{"world state is damaged: byte " + std::to_string(at) +
               " is not in canonical form (a flag byte other than 0 or 1, or a resting contact that disagrees "
               "with its bodies' poses)"};
}

}  // namespace

std::vector<uint8_t> World::save_state() const {
  std::vector<uint8_t> out;
  append_state(out);
  return out;
}

void World::append_state(std::vector<uint8_t>& out) const {
  StateWriter w(out);
  write_state(*impl_, w);
  w.finish();
}

void WorldImpl::rebuild_caches() {
  id_to_slot.clear();
  for (uint32_t i = 0; i < bodies.size(); ++i) {
    if (bodies[i].alive) id_to_slot[bodies[i].id] = i;
  }
  for (Contact& c : contacts.items()) {
    c.body_a = shapes[c.shape_a].body;
    c.body_b = shapes[c.shape_b].body;
  }
  rebuild_joint_links(*this);
  rebuild_broadphase();
  // Manifold points are not state: they follow from the poses. Contacts that the next
  // step will not recompute (neither body can move) were refreshed from these very poses
  // when they fell asleep, so recomputing them here gives the same points and ids.
  for (Contact& c : contacts.items()) {
    if (!bodies[c.body_a].can_move() && !bodies[c.body_b].can_move()) refresh_contact_from_poses(c, false);
  }
}

Status World::restore_state(std::span<const uint8_t> bytes) {
  // A new WorldImpl: its caches start empty and come from the state bytes alone, never
  // from this world. The step's context that is not state stays the World's own.
  auto fresh = std::make_unique<WorldImpl>();
  fresh->settings.threads = impl_->settings.threads;
  fresh->executor.adopt_pool(impl_->executor);  // the same threads, own or the host's
  fresh->toggles = impl_->toggles;
  StateReader r(bytes);
  if (Status st = read_state(r, *fresh, *impl_); !st) return st;  // this world is left untouched
  if (Status st = check_state(*fresh); !st) return Error{"world state is damaged: " + st.error().message};
  fresh->rebuild_caches();
  // Last, on the world exactly as it would step: a forged held contact (its ids, its
  // point count) does not survive that refresh, and is caught here with the rest.
  if (Status st = check_canonical(*fresh, bytes); !st) return st;
  impl_ = std::move(fresh);
  return Status::ok();
}

}  // namespace keel::sim
