// The world description: building it (scene, match), the difference between two, and the
// BodyAdded / BodyRemoved messages that carry it (keel/protocol/world_description.h).
#include <keel/protocol/world_description.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace keel::protocol {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using L = DescriptionLimits;

// Only the fields that say what a collider looks like: what a client draws.
sim::ColliderDef shape_fields(const sim::ColliderDef& c) {
  sim::ColliderDef out;
  out.shape = c.shape;
  out.center = c.center;
  out.rotation = c.rotation;
  out.radius = c.radius;
  out.half_height = c.half_height;
  out.half_extents = c.half_extents;
  out.points = c.points;
  out.indices = c.indices;
  out.rows = c.rows;
  out.columns = c.columns;
  out.cell_size = c.cell_size;
  out.heights = c.heights;
  out.is_trigger = c.is_trigger;
  return out;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool same_bits(const sim::Vec3& a, const sim::Vec3& b) {
  return same_bits(a.x, b.x) && same_bits(a.y, b.y) && same_bits(a.z, b.z);
}
bool same_bits(const sim::Quat& a, const sim::Quat& b) {
  return same_bits(a.x, b.x) && same_bits(a.y, b.y) && same_bits(a.z, b.z) && same_bits(a.w, b.w);
}

bool same_collider(const sim::ColliderDef& a, const sim::ColliderDef& b) {
  if (a.shape != b.shape || !same_bits(a.center, b.center) || !same_bits(a.rotation, b.rotation) ||
      !same_bits(a.radius, b.radius) || !same_bits(a.half_height, b.half_height) ||
      !same_bits(a.half_extents, b.half_extents) || a.indices != b.indices || a.rows != b.rows ||
      a.columns != b.columns || !same_bits(a.cell_size, b.cell_size) || a.is_trigger != b.is_trigger ||
      a.points.size() != b.points.size() || a.heights.size() != b.heights.size()) {
    return false;
  }
  for (size_t i = 0; i < a.points.size(); ++i) {
    if (!same_bits(a.points[i], b.points[i])) return false;
  }
  for (size_t i = 0; i < a.heights.size(); ++i) {
    if (!same_bits(a.heights[i], b.heights[i])) return false;
  }
  return true;
}

BodyDescription describe_def(const sim::BodyDef& def) {
  BodyDescription d;
  d.id = def.id;
  d.motion = def.motion;
  d.kind = def.kind;
  d.position = def.position;
  d.rotation = def.rotation;
  for (const sim::ColliderDef& c : def.colliders) d.colliders.push_back(shape_fields(c));
  return d;
}

// --- encoding ---------------------------------------------------------------------------

Offset<fb::ColliderDescription> write_collider(FlatBufferBuilder& fbb, const sim::ColliderDef& c, bool geometry) {
  Offset<flatbuffers::Vector<float>> points = 0, heights = 0;
  Offset<flatbuffers::Vector<uint32_t>> indices = 0;
  if (geometry && !c.points.empty()) {
    std::vector<float> flat;
    flat.reserve(c.points.size() * 3);
    for (const sim::Vec3& p : c.points) flat.insert(flat.end(), {p.x, p.y, p.z});
    points = fbb.CreateVector(flat);
  }
  if (geometry && !c.indices.empty()) indices = fbb.CreateVector(c.indices);
  if (geometry && !c.heights.empty()) heights = fbb.CreateVector(c.heights);
  const fb::WireVec3 center(c.center.x, c.center.y, c.center.z);
  const fb::WireQuat rotation(c.rotation.x, c.rotation.y, c.rotation.z, c.rotation.w);
  const fb::WireVec3 half(c.half_extents.x, c.half_extents.y, c.half_extents.z);
  // A heightfield's grid is kept without its samples, so the client still knows its extent.
  return fb::CreateColliderDescription(fbb, static_cast<uint8_t>(c.shape), &center, &rotation, c.radius,
                                       c.half_height, &half, points, indices, c.rows, c.columns, c.cell_size,
                                       heights, c.is_trigger);
}

// `colliders` of the body's colliders are written; `geometry` false leaves out the data.
Offset<fb::BodyDescription> write_body(FlatBufferBuilder& fbb, const BodyDescription& b, bool geometry,
                                       size_t colliders) {
  std::vector<Offset<fb::ColliderDescription>> cs;
  for (size_t i = 0; i < colliders; ++i) cs.push_back(write_collider(fbb, b.colliders[i], geometry));
  const bool cut = !b.complete || colliders < b.colliders.size() ||
                   (!geometry && std::any_of(b.colliders.begin(), b.colliders.end(), [](const sim::ColliderDef& c) {
                     return !c.points.empty() || !c.indices.empty() || !c.heights.empty();
                   }));
  const auto collider_vector = fbb.CreateVector(cs);
  const fb::WireVec3 position(b.position.x, b.position.y, b.position.z);
  const fb::WireQuat rotation(b.rotation.x, b.rotation.y, b.rotation.z, b.rotation.w);
  return fb::CreateBodyDescription(fbb, b.id, static_cast<uint8_t>(b.motion), b.kind, collider_vector, cut,
                                   &position, &rotation);
}

struct BodyCut {
  bool geometry = true;
  size_t colliders = 0;
};

std::vector<uint8_t> body_added_message(uint64_t tick, std::span<const BodyDescription> bodies,
                                        std::span<const BodyCut> cuts) {
  FlatBufferBuilder fbb(1024);
  std::vector<Offset<fb::BodyDescription>> out;
  for (size_t i = 0; i < bodies.size(); ++i) out.push_back(write_body(fbb, bodies[i], cuts[i].geometry, cuts[i].colliders));
  auto m = fb::CreateBodyAdded(fbb, tick, fbb.CreateVector(out));
  return finish_message(fbb, fb::Body::BodyAdded, m.Union());
}

// The largest cut of one body that fits alone: all of it, then without geometry data,
// then fewer colliders.
BodyCut fitting_cut(uint64_t tick, const BodyDescription& b, size_t max_bytes) {
  BodyCut cut{true, std::min<size_t>(b.colliders.size(), L::kMaxColliders)};
  auto fits = [&] { return body_added_message(tick, {&b, 1}, {&cut, 1}).size() <= max_bytes; };
  if (fits()) return cut;
  cut.geometry = false;
  while (!fits() && cut.colliders > 0) --cut.colliders;
  return cut;
}

void encode_added(uint64_t tick, const std::vector<BodyDescription>& added, size_t max_bytes,
                  std::vector<std::vector<uint8_t>>& out) {
  // Greedy: each message takes bodies until the next would not fit.
  size_t begin = 0;
  std::vector<BodyCut> cuts;
  std::vector<uint8_t> last;
  for (size_t i = 0; i < added.size(); ++i) {
    BodyCut cut = fitting_cut(tick, added[i], max_bytes);
    cuts.push_back(cut);
    std::span<const BodyDescription> group(added.data() + begin, i + 1 - begin);
    std::vector<uint8_t> trial = body_added_message(tick, group, cuts);
    if ((trial.size() > max_bytes || group.size() > L::kMaxBodiesPerMessage) && group.size() > 1) {
      out.push_back(std::move(last));
      begin = i;
      cuts = {cut};
      trial = body_added_message(tick, {added.data() + i, 1}, cuts);
    }
    last = std::move(trial);
  }
  if (!added.empty()) out.push_back(std::move(last));
}

void encode_removed(uint64_t tick, const std::vector<uint32_t>& removed, std::vector<std::vector<uint8_t>>& out) {
  for (size_t begin = 0; begin < removed.size(); begin += L::kMaxIdsPerMessage) {
    size_t n = std::min<size_t>(L::kMaxIdsPerMessage, removed.size() - begin);
    FlatBufferBuilder fbb(64 + 4 * n);
    auto ids = fbb.CreateVector(removed.data() + begin, n);
    auto m = fb::CreateBodyRemoved(fbb, tick, ids);
    out.push_back(finish_message(fbb, fb::Body::BodyRemoved, m.Union()));
  }
}

// --- decoding ---------------------------------------------------------------------------

bool finite_non_negative(float v) { return std::isfinite(v) && v >= 0.0f; }
bool finite(const fb::WireVec3* v) {
  return v == nullptr || (std::isfinite(v->x()) && std::isfinite(v->y()) && std::isfinite(v->z()));
}
bool valid_id(uint32_t id) { return id != 0 && id != sim::kAutoBodyId; }

// Absent: identity. A rotation that cannot be normalised is refused.
bool read_rotation(const fb::WireQuat* q, sim::Quat& out) {
  if (q == nullptr) return true;
  sim::Quat r(q->w(), q->x(), q->y(), q->z());
  const float n = std::sqrt(r.x * r.x + r.y * r.y + r.z * r.z + r.w * r.w);
  if (!std::isfinite(n) || n < 1e-6f) return false;
  out = r;
  return true;
}

DropReason read_collider(const fb::ColliderDescription& in, sim::ColliderDef& c) {
  if (in.shape() > static_cast<uint8_t>(sim::ShapeType::Heightfield)) return DropReason::OutOfRange;
  c.shape = static_cast<sim::ShapeType>(in.shape());
  if (!finite(in.center()) || !finite(in.half_extents())) return DropReason::OutOfRange;
  if (in.center()) c.center = {in.center()->x(), in.center()->y(), in.center()->z()};
  if (in.half_extents()) c.half_extents = {in.half_extents()->x(), in.half_extents()->y(), in.half_extents()->z()};
  if (!read_rotation(in.rotation(), c.rotation)) return DropReason::OutOfRange;
  if (!finite_non_negative(in.radius()) || !finite_non_negative(in.half_height()) ||
      !finite_non_negative(in.cell_size()) || !finite_non_negative(c.half_extents.x) ||
      !finite_non_negative(c.half_extents.y) || !finite_non_negative(c.half_extents.z)) {
    return DropReason::OutOfRange;
  }
  c.radius = in.radius();
  c.half_height = in.half_height();
  c.cell_size = in.cell_size();
  c.rows = in.rows();
  c.columns = in.columns();
  c.is_trigger = in.is_trigger();
  if (const auto* p = in.points()) {
    if (p->size() % 3 != 0 || p->size() / 3 > sim::kMaxMeshVertices) return DropReason::OutOfRange;
    c.points.reserve(p->size() / 3);
    for (uint32_t i = 0; i < p->size(); i += 3) {
      sim::Vec3 v(p->Get(i), p->Get(i + 1), p->Get(i + 2));
      if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z)) return DropReason::OutOfRange;
      c.points.push_back(v);
    }
  }
  if (const auto* ix = in.indices()) {
    if (ix->size() % 3 != 0 || ix->size() / 3 > sim::kMaxMeshTriangles) return DropReason::OutOfRange;
    for (uint32_t i : *ix) {
      if (i >= c.points.size()) return DropReason::OutOfRange;
    }
    c.indices.assign(ix->begin(), ix->end());
  }
  if (const auto* h = in.heights()) {
    if (uint64_t(c.rows) * c.columns != h->size() || h->size() > sim::kMaxHeightfieldSamples) {
      return DropReason::OutOfRange;
    }
    for (float v : *h) {
      if (!std::isfinite(v)) return DropReason::OutOfRange;
    }
    c.heights.assign(h->begin(), h->end());
  }
  return DropReason::None;
}

DropReason read_body(const fb::BodyDescription& in, BodyDescription& b) {
  if (!valid_id(in.id()) || in.motion() > static_cast<uint8_t>(sim::MotionType::Dynamic)) {
    return DropReason::OutOfRange;
  }
  b.id = in.id();
  b.motion = static_cast<sim::MotionType>(in.motion());
  b.kind = in.kind();
  b.complete = !in.incomplete();
  if (!finite(in.position()) || !read_rotation(in.rotation(), b.rotation)) return DropReason::OutOfRange;
  if (in.position()) b.position = {in.position()->x(), in.position()->y(), in.position()->z()};
  if (const auto* cs = in.colliders()) {
    if (cs->size() > L::kMaxColliders) return DropReason::OutOfRange;
    b.colliders.resize(cs->size());
    for (uint32_t i = 0; i < cs->size(); ++i) {
      if (cs->Get(i) == nullptr) return DropReason::OutOfRange;
      if (DropReason r = read_collider(*cs->Get(i), b.colliders[i]); r != DropReason::None) return r;
    }
  }
  return DropReason::None;
}

}  // namespace

bool same_description(const BodyDescription& a, const BodyDescription& b) {
  if (a.id != b.id || a.motion != b.motion || a.kind != b.kind || a.complete != b.complete ||
      a.colliders.size() != b.colliders.size()) {
    return false;
  }
  for (size_t i = 0; i < a.colliders.size(); ++i) {
    if (!same_collider(a.colliders[i], b.colliders[i])) return false;
  }
  return true;
}

WorldDescription WorldDescription::from_scene(const sim::SceneDef& scene) {
  WorldDescription d;
  d.bodies_.reserve(scene.bodies.size());
  for (const sim::BodyDef& b : scene.bodies) d.bodies_.push_back(describe_def(b));
  std::sort(d.bodies_.begin(), d.bodies_.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  d.version_ = 1;
  return d;
}

WorldDescription WorldDescription::from_match(const game::Match& match) {
  WorldDescription d;
  const sim::World& world = match.world();
  for (sim::BodyId id : world.bodies()) {
    const uint32_t user = world.body_state(id).id;
    d.bodies_.push_back(describe_body(world, id, match.body_kind(user)));
  }
  std::sort(d.bodies_.begin(), d.bodies_.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  d.version_ = 1;
  return d;
}

const BodyDescription* WorldDescription::find(uint32_t id) const {
  auto it = std::lower_bound(bodies_.begin(), bodies_.end(), id, [](const auto& b, uint32_t v) { return b.id < v; });
  return it != bodies_.end() && it->id == id ? &*it : nullptr;
}

void WorldDescription::put(BodyDescription body) {
  source_stamp_ = 0;
  auto it = std::lower_bound(bodies_.begin(), bodies_.end(), body.id,
                             [](const auto& b, uint32_t v) { return b.id < v; });
  if (it != bodies_.end() && it->id == body.id) *it = std::move(body);
  else bodies_.insert(it, std::move(body));
  ++version_;
}

bool WorldDescription::remove(uint32_t id) {
  source_stamp_ = 0;
  auto it = std::lower_bound(bodies_.begin(), bodies_.end(), id, [](const auto& b, uint32_t v) { return b.id < v; });
  if (it == bodies_.end() || it->id != id) return false;
  bodies_.erase(it);
  ++version_;
  return true;
}

void WorldDescription::clear() {
  source_stamp_ = 0;
  bodies_.clear();
  ++version_;
}

BodyDescription describe_body(const sim::World& world, sim::BodyId body, uint32_t kind) {
  BodyDescription d;
  const sim::BodyState state = world.body_state(body);
  d.id = state.id;
  d.motion = state.motion;
  d.kind = kind;
  d.position = state.position;
  d.rotation = state.rotation;
  for (const sim::ColliderDef& c : world.colliders(body)) d.colliders.push_back(shape_fields(c));
  return d;
}

DescriptionChanges update_description(WorldDescription& known, const game::Match& match) {
  const sim::World& world = match.world();
  // Most ticks add and remove nothing: the same stamp means the same bodies.
  if (known.source_stamp_ == world.membership_stamp()) return {};
  std::vector<std::pair<uint32_t, sim::BodyId>> live;
  live.reserve(world.body_count());
  for (sim::BodyId id : world.bodies()) live.emplace_back(world.body_state(id).id, id);
  std::sort(live.begin(), live.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  DescriptionChanges changes;
  // A merge of two ascending id lists.
  const std::vector<BodyDescription>& had = known.bodies();
  size_t i = 0, j = 0;
  while (i < had.size() || j < live.size()) {
    if (j == live.size() || (i < had.size() && had[i].id < live[j].first)) {
      changes.removed.push_back(had[i++].id);
    } else if (i == had.size() || live[j].first < had[i].id) {
      changes.added.push_back(describe_body(world, live[j].second, match.body_kind(live[j].first)));
      ++j;
    } else {
      ++i;
      ++j;
    }
  }
  for (uint32_t id : changes.removed) known.remove(id);
  for (const BodyDescription& b : changes.added) known.put(b);
  known.source_stamp_ = world.membership_stamp();
  return changes;
}

DescriptionChanges description_difference(const WorldDescription& from, const WorldDescription& to) {
  DescriptionChanges changes;
  const auto& a = from.bodies();
  const auto& b = to.bodies();
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].id < b[j].id)) {
      changes.removed.push_back(a[i++].id);
    } else if (i == a.size() || b[j].id < a[i].id) {
      changes.added.push_back(b[j++]);
    } else {
      // The same id described otherwise (never for a match's own bodies): sent again.
      if (!same_description(a[i], b[j])) changes.added.push_back(b[j]);
      ++i;
      ++j;
    }
  }
  return changes;
}

std::vector<std::vector<uint8_t>> encode_description_changes(uint64_t tick, const DescriptionChanges& changes,
                                                             size_t max_bytes) {
  std::vector<std::vector<uint8_t>> out;
  encode_removed(tick, changes.removed, out);
  encode_added(tick, changes.added, max_bytes, out);
  return out;
}

DropReason decode_body_added(const fb::BodyAdded& message, uint64_t& tick, std::vector<BodyDescription>& out) {
  out.clear();
  tick = message.tick();
  const auto* bodies = message.bodies();
  if (bodies == nullptr || bodies->size() == 0 || bodies->size() > L::kMaxBodiesPerMessage) {
    return DropReason::OutOfRange;
  }
  out.resize(bodies->size());
  for (uint32_t i = 0; i < bodies->size(); ++i) {
    if (bodies->Get(i) == nullptr) return DropReason::OutOfRange;
    if (DropReason r = read_body(*bodies->Get(i), out[i]); r != DropReason::None) return r;
    if (i > 0 && out[i].id <= out[i - 1].id) return DropReason::OutOfRange;
  }
  return DropReason::None;
}

DropReason decode_body_removed(const fb::BodyRemoved& message, uint64_t& tick, std::vector<uint32_t>& out) {
  out.clear();
  tick = message.tick();
  const auto* ids = message.ids();
  if (ids == nullptr || ids->size() == 0 || ids->size() > L::kMaxIdsPerMessage) return DropReason::OutOfRange;
  for (uint32_t id : *ids) {
    if (!valid_id(id) || (!out.empty() && id <= out.back())) return DropReason::OutOfRange;
    out.push_back(id);
  }
  return DropReason::None;
}

}  // namespace keel::protocol
