// Bit layout (BitWriter order), docs/protocol.md "Snapshot payload" has the same:
//   full:  count:16, then per body: id (first: 32 bits; then gap-1 as a tiered code),
//          body_full
//   delta: has_older:1 [older_gap:16], removed:count(base n) + indices,
//          added:16 + (id:32, body_full) each, changed:count(kept n), mode:1,
//          mode 0: bitmask over kept bodies; mode 1: index gaps as tiered codes;
//          then per changed body: body_delta
//   body_full:  at_rest:1, pos[3] (axis bits), largest:2, rot[3] (rotation_bits),
//               [lin[3], ang[3] (velocity bits)]
//          then over the changed bodies two more sets: at rest, largest component changed
//          then per changed body: body_delta
//   body_delta: pos residual[3] (vs the prediction), then rot residual[3] (same largest
//               component) or largest:2 + rot[3], [lin delta[3], ang delta[3]];
//               every residual/delta an exp-Golomb code of its zigzag value
#include <keel/protocol/snapshot_codec.h>

#include <keel/protocol/bitstream.h>

#include "body_bits.h"

#include <algorithm>
#include <cmath>

namespace keel::protocol {
namespace {

constexpr float kInvSqrt2 = 0.70710678118654752f;

uint32_t axis_steps(const SnapshotConfig& c, int axis) {
  double span = static_cast<double>(c.bounds_max[axis]) - c.bounds_min[axis];
  return static_cast<uint32_t>(std::ceil(span * c.position_resolution));
}

// An even number of steps, so that 0 is a grid point: a component hovering around 0
// (a body at rest, upright) must not flip between two values from noise alone.
uint32_t rotation_steps(uint32_t bits) { return (1u << bits) - 2; }

uint32_t velocity_steps(const SnapshotConfig& c) {
  return static_cast<uint32_t>(std::ceil(2.0 * c.max_speed * c.velocity_resolution));
}

uint32_t quantize_unit(double v, double lo, double hi, uint32_t steps) {
  double t = std::round((std::clamp(v, lo, hi) - lo) / (hi - lo) * steps);
  return static_cast<uint32_t>(std::clamp(t, 0.0, static_cast<double>(steps)));
}


using body_bits::read_tiered;
using body_bits::write_tiered;

size_t tiered_bits(uint32_t v) { return v < 4 ? 3 : v < 20 ? 6 : v < 276 ? 11 : 35; }

// Signed differences as exp-Golomb codes (BitWriter::write_golomb). Measured on the
// cubes scene this beats a bit width shared by the three axes by a quarter, because one
// axis (often y) rarely moves with the others.
void write_triple(BitWriter& w, const int64_t d[3]) {
  for (int i = 0; i < 3; ++i) w.write_golomb(d[i]);
}

void read_triple(BitReader& r, int64_t d[3]) {
  for (int i = 0; i < 3; ++i) d[i] = r.read_golomb();
}

// Applies differences to a base, refusing results outside [0, max].
void apply_triple(BitReader& r, const uint32_t base[3], const int64_t d[3], uint32_t max,
                  uint32_t out[3]) {
  for (int i = 0; i < 3; ++i) {
    int64_t v = static_cast<int64_t>(base[i]) + d[i];
    if (v < 0 || v > max) {
      r.fail();
      v = 0;
    }
    out[i] = static_cast<uint32_t>(v);
  }
}

struct Prediction {
  uint32_t pos[3];
  uint32_t rot[3];
};

struct Codec {
  const SnapshotConfig& c;
  uint32_t pos_steps[3];
  uint32_t pos_bits[3];
  uint32_t rot_max;
  uint32_t vel_steps;
  uint32_t vel_bits;

  explicit Codec(const SnapshotConfig& config) : c(config) {
    for (int a = 0; a < 3; ++a) {
      pos_steps[a] = axis_steps(c, a);
      pos_bits[a] = bits_required(pos_steps[a]);
    }
    rot_max = rotation_steps(c.rotation_bits);
    vel_steps = velocity_steps(c);
    vel_bits = bits_required(vel_steps);
  }

  void write_full(BitWriter& w, const QuantBody& b) const {
    w.write_bool(b.at_rest);
    for (int a = 0; a < 3; ++a) w.write_bits(b.pos[a], pos_bits[a]);
    w.write_bits(b.largest, 2);
    for (uint32_t v : b.rot) w.write_bits(v, c.rotation_bits);
    if (!c.velocities) return;
    for (uint32_t v : b.lin) w.write_bits(v, vel_bits);
    for (uint32_t v : b.ang) w.write_bits(v, vel_bits);
  }

  void read_full(BitReader& r, QuantBody& b) const {
    b.at_rest = r.read_bool();
    for (int a = 0; a < 3; ++a) b.pos[a] = static_cast<uint32_t>(r.read_int(0, pos_steps[a]));
    b.largest = static_cast<uint8_t>(r.read_bits(2));
    for (auto& v : b.rot) v = r.read_bits(c.rotation_bits);
    if (!c.velocities) return;
    for (auto& v : b.lin) v = static_cast<uint32_t>(r.read_int(0, vel_steps));
    for (auto& v : b.ang) v = static_cast<uint32_t>(r.read_int(0, vel_steps));
  }

  void write_delta(BitWriter& w, const QuantBody& cur, const QuantBody& base,
                   const Prediction& pred) const {
    int64_t d[3];
    for (int a = 0; a < 3; ++a) d[a] = int64_t{cur.pos[a]} - pred.pos[a];
    write_triple(w, d);
    if (cur.largest == base.largest) {
      for (int i = 0; i < 3; ++i) d[i] = int64_t{cur.rot[i]} - pred.rot[i];
      write_triple(w, d);
    } else {
      w.write_bits(cur.largest, 2);
      for (uint32_t v : cur.rot) w.write_bits(v, c.rotation_bits);
    }
    if (!c.velocities) return;
    for (int i = 0; i < 3; ++i) d[i] = int64_t{cur.lin[i]} - base.lin[i];
    write_triple(w, d);
    for (int i = 0; i < 3; ++i) d[i] = int64_t{cur.ang[i]} - base.ang[i];
    write_triple(w, d);
  }

  // `out.at_rest` and whether the largest component is unchanged come from the flag
  // lists that precede the bodies.
  void read_delta(BitReader& r, const QuantBody& base, const Prediction& pred, bool same,
                  QuantBody& out) const {
    out.id = base.id;
    int64_t d[3];
    read_triple(r, d);
    for (int a = 0; a < 3; ++a) {
      int64_t v = int64_t{pred.pos[a]} + d[a];
      if (v < 0 || v > pos_steps[a]) r.fail();
      out.pos[a] = static_cast<uint32_t>(std::clamp<int64_t>(v, 0, pos_steps[a]));
    }
    if (same) {
      out.largest = base.largest;
      read_triple(r, d);
      apply_triple(r, pred.rot, d, rot_max, out.rot);
    } else {
      out.largest = static_cast<uint8_t>(r.read_bits(2));
      for (auto& v : out.rot) v = r.read_bits(c.rotation_bits);
    }
    if (!c.velocities) return;
    read_triple(r, d);
    apply_triple(r, base.lin, d, vel_steps, out.lin);
    read_triple(r, d);
    apply_triple(r, base.ang, d, vel_steps, out.ang);
  }

  // Linear extrapolation from (older, base) to tick `t`, in integers so both ends
  // agree. Rotations are extrapolated component-wise only when both baselines dropped
  // the same largest component (otherwise the components are not comparable).
  Prediction predict(const QuantBody& base, const QuantBody* older, uint64_t t, uint64_t tb,
                     uint64_t to) const {
    Prediction p;
    bool usable = older != nullptr && tb > to && t > tb;
    bool rot_usable = usable && older->largest == base.largest;
    for (int a = 0; a < 3; ++a) {
      p.pos[a] = usable ? extrapolate(base.pos[a], older->pos[a], t - tb, tb - to, pos_steps[a])
                        : base.pos[a];
      p.rot[a] = rot_usable ? extrapolate(base.rot[a], older->rot[a], t - tb, tb - to, rot_max)
                            : base.rot[a];
    }
    return p;
  }

  static uint32_t extrapolate(uint32_t base, uint32_t older, uint64_t ahead, uint64_t span,
                              uint32_t max) {
    int64_t num = (int64_t{base} - older) * static_cast<int64_t>(ahead);
    auto den = static_cast<int64_t>(span);
    int64_t q = (num >= 0 ? num + den / 2 : num - den / 2) / den;  // rounded, symmetric
    return static_cast<uint32_t>(std::clamp<int64_t>(base + q, 0, max));
  }
};

// The smallest-three form of a unit quaternion (components in file order x, y, z, w).
void quantize_rotation(const sim::Quat& q_in, uint32_t bits, QuantBody& out) {
  float c[4] = {q_in.x, q_in.y, q_in.z, q_in.w};
  float len = std::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2] + c[3] * c[3]);
  if (!(len > 1e-6f) || !std::isfinite(len)) {
    c[0] = c[1] = c[2] = 0.0f;
    c[3] = len = 1.0f;
  }
  int largest = 0;
  for (int i = 1; i < 4; ++i) {
    if (std::fabs(c[i]) > std::fabs(c[largest])) largest = i;
  }
  float sign = c[largest] < 0 ? -1.0f : 1.0f;  // q and -q are the same rotation
  uint32_t steps = rotation_steps(bits);
  out.largest = static_cast<uint8_t>(largest);
  for (int i = 0, k = 0; i < 4; ++i) {
    if (i == largest) continue;
    double v = sign * c[i] / len;
    out.rot[k++] = quantize_unit(v, -kInvSqrt2, kInvSqrt2, steps);
  }
}

sim::Quat dequantize_rotation(const QuantBody& b, uint32_t bits) {
  float steps = static_cast<float>(rotation_steps(bits));
  float c[4];
  float sum = 0.0f;
  for (int i = 0, k = 0; i < 4; ++i) {
    if (i == b.largest) continue;
    c[i] = (static_cast<float>(b.rot[k++]) / steps * 2.0f - 1.0f) * kInvSqrt2;
    sum += c[i] * c[i];
  }
  c[b.largest] = std::sqrt(std::max(0.0f, 1.0f - sum));
  return sim::make_quat(c[0], c[1], c[2], c[3]);
}

// Full smallest-three values satisfy sum of squares <= 3/4; more is a forged body.
bool plausible_rotation(const QuantBody& b, uint32_t bits) {
  float steps = static_cast<float>(rotation_steps(bits));
  float sum = 0.0f;
  for (uint32_t v : b.rot) {
    if (v > rotation_steps(bits)) return false;
    float x = (static_cast<float>(v) / steps * 2.0f - 1.0f) * kInvSqrt2;
    sum += x * x;
  }
  return sum <= 0.76f;
}

// Encodes which kept bodies changed: a bitmask or a list of index gaps, whichever is
// shorter (a flag says which).
void write_changed_set(BitWriter& w, const std::vector<uint32_t>& changed, size_t kept) {
  w.write_int(static_cast<int64_t>(changed.size()), 0, static_cast<int64_t>(kept));
  if (changed.empty()) return;
  size_t gap_bits = 0;
  for (size_t i = 0, prev = 0; i < changed.size(); prev = changed[i] + 1, ++i) {
    gap_bits += tiered_bits(static_cast<uint32_t>(changed[i] - prev));
  }
  bool gaps = gap_bits < kept;
  w.write_bool(gaps);
  if (gaps) {
    for (size_t i = 0, prev = 0; i < changed.size(); prev = changed[i] + 1, ++i) {
      write_tiered(w, static_cast<uint32_t>(changed[i] - prev));
    }
    return;
  }
  size_t next = 0;
  for (size_t i = 0; i < kept; ++i) {
    bool is = next < changed.size() && changed[next] == i;
    w.write_bool(is);
    if (is) ++next;
  }
}

void read_changed_set(BitReader& r, size_t kept, std::vector<uint32_t>& changed) {
  auto count = static_cast<size_t>(r.read_int(0, static_cast<int64_t>(kept)));
  if (count == 0 || !r.ok()) return;
  if (r.read_bool()) {
    uint64_t index = 0;
    for (size_t i = 0; i < count && r.ok(); ++i) {
      index += read_tiered(r);
      if (index >= kept) r.fail();
      changed.push_back(static_cast<uint32_t>(index));
      ++index;
    }
    return;
  }
  for (size_t i = 0; i < kept && r.ok(); ++i) {
    if (r.read_bool()) changed.push_back(static_cast<uint32_t>(i));
  }
  if (changed.size() != count) r.fail();
}

}  // namespace

SnapshotConfig SnapshotConfig::for_scene(const sim::SceneDef& scene, float margin) {
  SnapshotConfig c;
  if (scene.bodies.empty()) return c;
  sim::Vec3 lo(1e30f), hi(-1e30f);
  for (const auto& b : scene.bodies) {
    lo = glm::min(lo, b.position);
    hi = glm::max(hi, b.position);
  }
  // Whole metres, so the grid is the same wherever the file's decimals land.
  c.bounds_min = glm::floor(lo - sim::Vec3(margin));
  c.bounds_max = glm::ceil(hi + sim::Vec3(margin));
  return c;
}

bool SnapshotConfig::valid() const {
  if (rotation_bits < 9 || rotation_bits > 15 || position_resolution == 0) return false;
  for (int a = 0; a < 3; ++a) {
    double span = static_cast<double>(bounds_max[a]) - bounds_min[a];
    if (!(span > 0) || span * position_resolution > double(1u << 24)) return false;
  }
  return !velocities || (max_speed > 0 && velocity_resolution > 0 &&
                         2.0 * max_speed * velocity_resolution <= double(1u << 24));
}

QuantSnapshot quantize(std::span<const sim::BodyState> bodies, uint64_t tick,
                       const SnapshotConfig& config) {
  QuantSnapshot s;
  s.tick = tick;
  s.bodies.reserve(bodies.size());
  uint32_t vs = velocity_steps(config);
  for (const auto& b : bodies) {
    QuantBody q;
    q.id = b.id;
    for (int a = 0; a < 3; ++a) {
      q.pos[a] = quantize_unit(b.position[a], config.bounds_min[a], config.bounds_max[a],
                               axis_steps(config, a));
    }
    quantize_rotation(b.rotation, config.rotation_bits, q);
    float v2 = glm::dot(b.linear_velocity, b.linear_velocity);
    float w2 = glm::dot(b.angular_velocity, b.angular_velocity);
    float rest2 = config.at_rest_speed * config.at_rest_speed;
    q.at_rest = b.sleeping || (v2 < rest2 && w2 < rest2);
    if (config.velocities) {
      for (int a = 0; a < 3; ++a) {
        q.lin[a] = quantize_unit(b.linear_velocity[a], -config.max_speed, config.max_speed, vs);
        q.ang[a] = quantize_unit(b.angular_velocity[a], -config.max_speed, config.max_speed, vs);
      }
    }
    s.bodies.push_back(q);
  }
  std::stable_sort(s.bodies.begin(), s.bodies.end(),
                   [](const QuantBody& a, const QuantBody& b) { return a.id < b.id; });
  return s;
}

sim::BodyState dequantize(const QuantBody& body, const SnapshotConfig& config) {
  sim::BodyState s;
  s.id = body.id;
  for (int a = 0; a < 3; ++a) {
    s.position[a] = static_cast<float>(config.bounds_min[a] +
                                       static_cast<double>(body.pos[a]) / config.position_resolution);
  }
  s.rotation = dequantize_rotation(body, config.rotation_bits);
  s.sleeping = body.at_rest;
  if (config.velocities) {
    double res = config.velocity_resolution;
    for (int a = 0; a < 3; ++a) {
      s.linear_velocity[a] = static_cast<float>(body.lin[a] / res - config.max_speed);
      s.angular_velocity[a] = static_cast<float>(body.ang[a] / res - config.max_speed);
    }
  }
  return s;
}

std::vector<sim::BodyState> snapshot_bodies(const sim::World& world) {
  std::vector<sim::BodyState> out;
  for (sim::BodyId id : world.bodies()) {
    sim::BodyState s = world.body_state(id);
    if (s.motion != sim::MotionType::Static) out.push_back(s);
  }
  return out;
}

namespace {

const QuantBody* find_body(const QuantSnapshot* s, uint32_t id) {
  if (s == nullptr) return nullptr;
  auto it = std::lower_bound(s->bodies.begin(), s->bodies.end(), id,
                             [](const QuantBody& b, uint32_t v) { return b.id < v; });
  return it != s->bodies.end() && it->id == id ? &*it : nullptr;
}

// Bodies that moved between the older baseline and the base ("hot") are likely to have
// moved again; the changed set is coded separately over hot and cold bodies, so the hot
// part is a dense bitmask and the cold part a short gap list. Both ends compute the
// split from baselines they share. Without an older baseline everything is cold.
std::vector<uint8_t> hot_flags(const std::vector<const QuantBody*>& kept,
                               const QuantSnapshot* older) {
  std::vector<uint8_t> hot(kept.size(), 0);
  if (older == nullptr) return hot;
  // Both are sorted by id: one merge walk instead of a search per body.
  size_t j = 0;
  for (size_t i = 0; i < kept.size(); ++i) {
    while (j < older->bodies.size() && older->bodies[j].id < kept[i]->id) ++j;
    bool found = j < older->bodies.size() && older->bodies[j].id == kept[i]->id;
    hot[i] = !found || !(older->bodies[j] == *kept[i]);
  }
  return hot;
}

void write_changed(BitWriter& w, const std::vector<uint32_t>& changed,
                   const std::vector<uint8_t>& hot) {
  std::vector<uint32_t> part[2];
  uint32_t index[2] = {0, 0};
  size_t next = 0;
  for (size_t i = 0; i < hot.size(); ++i) {
    bool is = next < changed.size() && changed[next] == i;
    if (is) {
      part[hot[i]].push_back(index[hot[i]]);
      ++next;
    }
    ++index[hot[i]];
  }
  write_changed_set(w, part[1], index[1]);
  write_changed_set(w, part[0], index[0]);
}

void read_changed(BitReader& r, const std::vector<uint8_t>& hot, std::vector<uint32_t>& changed) {
  size_t n_hot = static_cast<size_t>(std::count(hot.begin(), hot.end(), 1));
  std::vector<uint32_t> part[2];
  read_changed_set(r, n_hot, part[1]);
  read_changed_set(r, hot.size() - n_hot, part[0]);
  if (!r.ok()) return;
  size_t next[2] = {0, 0};
  uint32_t index[2] = {0, 0};
  for (size_t i = 0; i < hot.size(); ++i) {
    int h = hot[i];
    if (next[h] < part[h].size() && part[h][next[h]] == index[h]) {
      changed.push_back(static_cast<uint32_t>(i));
      ++next[h];
    }
    ++index[h];
  }
}

std::vector<const QuantBody*> kept_base(
    const std::vector<std::pair<const QuantBody*, const QuantBody*>>& kept) {
  std::vector<const QuantBody*> out;
  out.reserve(kept.size());
  for (const auto& k : kept) out.push_back(k.second);
  return out;
}

void encode_full(BitWriter& w, const Codec& k, const QuantSnapshot& cur) {
  w.write_bits(static_cast<uint32_t>(cur.bodies.size()), 16);
  for (size_t i = 0; i < cur.bodies.size(); ++i) {
    if (i == 0) w.write_bits(cur.bodies[0].id, 32);
    else write_tiered(w, cur.bodies[i].id - cur.bodies[i - 1].id - 1);
    k.write_full(w, cur.bodies[i]);
  }
}

DropReason decode_full(BitReader& r, const Codec& k, QuantSnapshot& out) {
  uint32_t n = r.read_bits(16);
  out.bodies.resize(r.ok() ? n : 0);
  uint64_t id = 0;
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    id = i == 0 ? r.read_bits(32) : id + 1 + read_tiered(r);
    if (id > 0xffffffffull) r.fail();
    out.bodies[i].id = static_cast<uint32_t>(id);
    k.read_full(r, out.bodies[i]);
    if (!plausible_rotation(out.bodies[i], k.c.rotation_bits)) r.fail();
  }
  return r.ok() ? DropReason::None : DropReason::OutOfRange;
}

// The older baseline, when it is usable for prediction: strictly older than the base and
// within 65535 ticks of it (the gap travels in 16 bits).
const QuantSnapshot* usable_older(const Baselines& b) {
  if (b.older == nullptr || b.older->tick >= b.base->tick) return nullptr;
  return b.base->tick - b.older->tick <= 65535 ? b.older : nullptr;
}

// How the current snapshot differs from the base in which bodies it has.
struct BodyDiff {
  std::vector<uint32_t> removed;  // indices into the base
  std::vector<const QuantBody*> added;
  std::vector<std::pair<const QuantBody*, const QuantBody*>> kept;  // (current, base)
  std::vector<uint32_t> changed;  // indices into kept
};

BodyDiff diff_bodies(const QuantSnapshot& cur, const QuantSnapshot& base) {
  BodyDiff d;
  size_t i = 0, j = 0;
  while (i < cur.bodies.size() || j < base.bodies.size()) {
    if (j == base.bodies.size() ||
        (i < cur.bodies.size() && cur.bodies[i].id < base.bodies[j].id)) {
      d.added.push_back(&cur.bodies[i++]);
    } else if (i == cur.bodies.size() || base.bodies[j].id < cur.bodies[i].id) {
      d.removed.push_back(static_cast<uint32_t>(j++));
    } else {
      if (!(cur.bodies[i] == base.bodies[j])) d.changed.push_back(uint32_t(d.kept.size()));
      d.kept.emplace_back(&cur.bodies[i++], &base.bodies[j++]);
    }
  }
  return d;
}

void encode_delta(BitWriter& w, const Codec& k, const QuantSnapshot& cur, const Baselines& bl) {
  const QuantSnapshot& base = *bl.base;
  const QuantSnapshot* older = usable_older(bl);
  w.write_bool(older != nullptr);
  if (older != nullptr) w.write_bits(static_cast<uint32_t>(base.tick - older->tick), 16);
  BodyDiff d = diff_bodies(cur, base);
  auto base_n = static_cast<int64_t>(base.bodies.size());
  w.write_int(static_cast<int64_t>(d.removed.size()), 0, base_n);
  for (uint32_t idx : d.removed) w.write_int(idx, 0, base_n - 1);
  w.write_bits(static_cast<uint32_t>(d.added.size()), 16);
  for (const QuantBody* b : d.added) {
    w.write_bits(b->id, 32);
    k.write_full(w, *b);
  }
  write_changed(w, d.changed, hot_flags(kept_base(d.kept), older));
  // Two rare flags of the changed bodies, as sparse lists rather than a bit each: which
  // are at rest, and which changed their largest rotation component.
  std::vector<uint32_t> resting, flipped;
  for (uint32_t n = 0; n < d.changed.size(); ++n) {
    const auto& [now, was] = d.kept[d.changed[n]];
    if (now->at_rest) resting.push_back(n);
    if (now->largest != was->largest) flipped.push_back(n);
  }
  write_changed_set(w, resting, d.changed.size());
  write_changed_set(w, flipped, d.changed.size());
  for (uint32_t c : d.changed) {
    const auto& [now, was] = d.kept[c];
    Prediction pred = k.predict(*was, find_body(older, was->id), cur.tick, base.tick,
                                older ? older->tick : 0);
    k.write_delta(w, *now, *was, pred);
  }
}

// The baseline bodies a delta keeps: all but the removed ones (strictly increasing
// indices into the baseline).
std::vector<const QuantBody*> read_kept(BitReader& r, const QuantSnapshot& base) {
  auto base_n = static_cast<int64_t>(base.bodies.size());
  auto n_removed = static_cast<size_t>(r.read_int(0, base_n));
  std::vector<uint8_t> gone(base.bodies.size(), 0);
  for (size_t i = 0, last = 0; i < n_removed && r.ok(); ++i) {
    auto idx = static_cast<size_t>(r.read_int(0, base_n - 1));
    if (i > 0 && idx <= last) r.fail();  // strictly increasing: no repeats
    gone[idx] = 1;
    last = idx;
  }
  std::vector<const QuantBody*> kept;
  for (size_t j = 0; j < base.bodies.size(); ++j) {
    if (!gone[j]) kept.push_back(&base.bodies[j]);
  }
  return kept;
}

void read_added(BitReader& r, const Codec& k, size_t kept, std::vector<QuantBody>& out) {
  uint32_t n_added = r.read_bits(16);
  if (kept + n_added > kMaxSnapshotBodies) r.fail();
  out.reserve(r.ok() ? kept + n_added : 0);
  for (uint32_t i = 0; i < n_added && r.ok(); ++i) {
    QuantBody b;
    b.id = r.read_bits(32);
    k.read_full(r, b);
    if (!plausible_rotation(b, k.c.rotation_bits)) r.fail();
    out.push_back(b);
  }
}

// Appends every kept body: the changed ones decoded against their prediction, the rest
// copied from the baseline.
void read_kept_bodies(BitReader& r, const Codec& k, const std::vector<const QuantBody*>& kept,
                      const QuantSnapshot* older, uint64_t base_tick, QuantSnapshot& out) {
  std::vector<uint32_t> changed, resting, flipped;
  read_changed(r, hot_flags(kept, older), changed);
  read_changed_set(r, changed.size(), resting);
  read_changed_set(r, changed.size(), flipped);
  size_t next = 0, next_rest = 0, next_flip = 0;
  for (size_t c = 0; c < kept.size() && r.ok(); ++c) {
    if (next == changed.size() || changed[next] != c) {
      out.bodies.push_back(*kept[c]);
      continue;
    }
    bool at_rest = next_rest < resting.size() && resting[next_rest] == next;
    bool same = !(next_flip < flipped.size() && flipped[next_flip] == next);
    next_rest += at_rest;
    next_flip += !same;
    Prediction pred = k.predict(*kept[c], find_body(older, kept[c]->id), out.tick, base_tick,
                                older ? older->tick : 0);
    QuantBody b;
    b.at_rest = at_rest;
    k.read_delta(r, *kept[c], pred, same, b);
    if (!plausible_rotation(b, k.c.rotation_bits)) r.fail();
    out.bodies.push_back(b);
    ++next;
  }
}

DropReason decode_delta(BitReader& r, const Codec& k, const Baselines& bl, QuantSnapshot& out) {
  const QuantSnapshot& base = *bl.base;
  const QuantSnapshot* older = nullptr;
  if (r.read_bool()) {
    uint32_t gap = r.read_bits(16);
    older = usable_older(bl);
    // The caller must hand over the older baseline the server used.
    if (older == nullptr || base.tick - older->tick != gap) return DropReason::Stale;
  }
  std::vector<const QuantBody*> kept = read_kept(r, base);
  out.bodies.clear();
  read_added(r, k, kept.size(), out.bodies);
  read_kept_bodies(r, k, kept, older, base.tick, out);
  if (!r.ok()) return DropReason::OutOfRange;
  // Added bodies came first: restore id order, and refuse an added id that repeats.
  std::stable_sort(out.bodies.begin(), out.bodies.end(),
                   [](const QuantBody& a, const QuantBody& b) { return a.id < b.id; });
  for (size_t i = 1; i < out.bodies.size(); ++i) {
    if (out.bodies[i].id == out.bodies[i - 1].id) return DropReason::OutOfRange;
  }
  return DropReason::None;
}

}  // namespace

std::vector<uint8_t> encode_snapshot(const QuantSnapshot& current, const Baselines& baselines,
                                     const SnapshotConfig& config) {
  Codec k(config);
  BitWriter w;
  if (baselines.base == nullptr) encode_full(w, k, current);
  else encode_delta(w, k, current, baselines);
  return w.finish();
}

DropReason decode_snapshot(std::span<const uint8_t> payload, uint64_t tick,
                           const Baselines& baselines, const SnapshotConfig& config,
                           QuantSnapshot& out) {
  if (!config.valid()) return DropReason::OutOfRange;
  if (baselines.base != nullptr && baselines.base->tick >= tick) return DropReason::Stale;
  Codec k(config);
  BitReader r(payload);
  out.tick = tick;
  DropReason d = baselines.base == nullptr ? decode_full(r, k, out)
                                           : decode_delta(r, k, baselines, out);
  if (d == DropReason::None && !r.at_end()) d = DropReason::MalformedPayload;
  return d;
}

/// The older-baseline tick a delta payload names (for the caller to look it up), or 0.
uint64_t snapshot_older_tick(std::span<const uint8_t> payload, uint64_t base_tick) {
  BitReader r(payload);
  if (!r.read_bool()) return 0;
  uint32_t gap = r.read_bits(16);
  return r.ok() && gap > 0 && gap < base_tick ? base_tick - gap : 0;
}

}  // namespace keel::protocol

namespace keel::protocol::body_bits {

void write_tiered(BitWriter& w, uint32_t v) {
  if (v < 4) {
    w.write_bits(0, 1);
    w.write_bits(v, 2);
  } else if (v < 20) {
    w.write_bits(1, 2);
    w.write_bits(v - 4, 4);
  } else if (v < 276) {
    w.write_bits(3, 3);
    w.write_bits(v - 20, 8);
  } else {
    w.write_bits(7, 3);
    w.write_bits(v, 32);
  }
}

uint32_t read_tiered(BitReader& r) {
  if (!r.read_bool()) return r.read_bits(2);
  if (!r.read_bool()) return 4 + r.read_bits(4);
  if (!r.read_bool()) return 20 + r.read_bits(8);
  return r.read_bits(32);
}


void write_full(BitWriter& w, const QuantBody& b, const SnapshotConfig& c) { Codec(c).write_full(w, b); }

bool read_full(BitReader& r, QuantBody& b, const SnapshotConfig& c) {
  Codec(c).read_full(r, b);
  return r.ok() && plausible_rotation(b, c.rotation_bits);
}

void write_delta(BitWriter& w, const QuantBody& cur, const QuantBody& base, const SnapshotConfig& c) {
  w.write_bool(cur.at_rest);
  w.write_bool(cur.largest == base.largest);
  Prediction same{{base.pos[0], base.pos[1], base.pos[2]}, {base.rot[0], base.rot[1], base.rot[2]}};
  Codec(c).write_delta(w, cur, base, same);
}

bool read_delta(BitReader& r, const QuantBody& base, QuantBody& out, const SnapshotConfig& c) {
  out.at_rest = r.read_bool();
  bool same_largest = r.read_bool();
  Prediction same{{base.pos[0], base.pos[1], base.pos[2]}, {base.rot[0], base.rot[1], base.rot[2]}};
  Codec(c).read_delta(r, base, same, same_largest, out);
  return r.ok() && plausible_rotation(out, c.rotation_bits);
}

namespace {
// BitWriter::write_golomb's length: the zigzag value plus one, its bits twice less one.
size_t golomb_bits(int64_t d) {
  const uint64_t v = (d < 0 ? uint64_t(-d) * 2 - 1 : uint64_t(d) * 2) + 1;
  return 2 * size_t(bits_required(v)) - 1;
}

size_t triple_bits(const uint32_t cur[3], const uint32_t base[3]) {
  size_t n = 0;
  for (int i = 0; i < 3; ++i) n += golomb_bits(int64_t{cur[i]} - base[i]);
  return n;
}

uint32_t velocity_bits(const SnapshotConfig& c) { return bits_required(velocity_steps(c)); }
}  // namespace

size_t full_bits(const SnapshotConfig& c) {
  size_t n = 1 + 2 + 3 * size_t(c.rotation_bits);
  for (int a = 0; a < 3; ++a) n += bits_required(axis_steps(c, a));
  if (c.velocities) n += 6 * size_t(velocity_bits(c));
  return n;
}

size_t delta_bits(const QuantBody& cur, const QuantBody& base, const SnapshotConfig& c) {
  size_t n = 2 + triple_bits(cur.pos, base.pos);
  n += cur.largest == base.largest ? triple_bits(cur.rot, base.rot) : 2 + 3 * size_t(c.rotation_bits);
  if (c.velocities) n += triple_bits(cur.lin, base.lin) + triple_bits(cur.ang, base.ang);
  return n;
}

size_t min_delta_bits(const SnapshotConfig& c) {
  // Flags, three zero position residuals, the rotation's cheaper form, zero velocities.
  return 2 + 3 + std::min<size_t>(3, 2 + 3 * size_t(c.rotation_bits)) + (c.velocities ? 6 : 0);
}

}  // namespace keel::protocol::body_bits
