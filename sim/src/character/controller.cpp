// The character controller's tick stage. Per character, in body id order:
//   1. read this tick's contacts: block normals (steep, from bodies it cannot push) and
//      the dynamic bodies it walks into;
//   2. probe the ground with a capsule cast down (a short reach, or step_height to snap
//      down stairs while it was grounded);
//   3. jump, or start a step-up (two probes: clearance at step height, then down for a
//      walkable landing), or steer: deflect the wish off block normals, push what it walks
//      into with a capped force, follow the ground and its velocity, snap down onto it;
//   4. write the body's velocity (and its gravity scale: the ground carries a grounded
//      character, so gravity is off while it stands, walks or climbs).
// It never writes a pose: the solver moves the body and keeps it out of the world.
#include "character/character.h"

#include "collision/geometry.h"
#include "island/sleep.h"
#include "query/world_query.h"
#include "world_impl.h"

#include <algorithm>
#include <cmath>

namespace keel::sim {

namespace {

// A contact point closer than this (m) counts for deflection and pushing; farther
// speculative points are left to the solver, which stops a body exactly at a surface.
constexpr float kTouchDepth = -0.005f;
// Reach of the ground probe when the character was not grounded (m): a little more than
// the solver's speculative distance, so a character resting on a surface finds it.
constexpr float kGroundReach = 0.03f;
// Gaps below this are not snapped (m): resting contact noise.
constexpr float kSnapMinGap = 0.001f;
constexpr float kMaxSnapSpeed = 10.0f;  // m/s
// A climb rises this much above the measured step (m), then settles onto it.
constexpr float kClimbClearance = 0.01f;
constexpr float kClimbSpeed = 4.0f;     // m/s, how fast a climb rises
constexpr float kClimbDeadline = 0.5f;  // s
// A step lower than this (m) is walked over by the capsule's round bottom.
constexpr float kMinStep = 0.005f;
// Probes keep this far (m) from what they hit.
constexpr float kSkin = 0.002f;

const Vec3 kUp(0.0f, 1.0f, 0.0f);

Vec3 horizontal(const Vec3& v) { return Vec3(v.x, 0.0f, v.z); }

using Push = CharacterPush;
using Touches = CharacterTouches;

CharacterInput script_input(const Character& c, uint64_t tick) {
  uint64_t total = 0;
  for (const CharacterScriptStep& s : c.settings.script) total += s.ticks;
  if (total == 0) return c.input;
  uint64_t k = tick % total;
  for (const CharacterScriptStep& s : c.settings.script) {
    if (k < s.ticks) return CharacterInput{s.move, s.jump};
    k -= s.ticks;
  }
  return CharacterInput{};
}

// The collider probes are made with: the first enabled solid capsule, else the first
// enabled solid collider; -1 when there is none.
int32_t probe_shape(const WorldImpl& w, const Body& b) {
  int32_t fallback = -1;
  for (uint32_t s : b.shapes) {
    const Shape& sh = w.shapes[s];
    if (!sh.enabled || sh.is_trigger) continue;
    if (sh.type == ShapeType::Capsule) return int32_t(s);
    if (fallback < 0) fallback = int32_t(s);
  }
  return fallback;
}

QueryFilter probe_filter(const Body& b, uint32_t slot) {
  QueryFilter f;
  f.mask = b.collides_with;
  f.query_layer = b.layer;
  f.exclude = BodyId{slot, b.generation};
  return f;
}

Vec3 point_velocity(const Body& b, const Vec3& p) {
  if (b.motion == MotionType::Static) return Vec3(0.0f);
  return b.linear_velocity + glm::cross(b.angular_velocity, p - b.center);
}

// One pass over the contacts, in key order, sorting what touches each character.
void gather_touches(const WorldImpl& w, const std::vector<int32_t>& char_of_slot, std::vector<Touches>& out) {
  for (const Contact& c : w.contacts.items()) {
    if (c.count == 0 || c.sensor) continue;
    for (int side = 0; side < 2; ++side) {
      const uint32_t self = side == 0 ? c.body_a : c.body_b;
      const uint32_t other = side == 0 ? c.body_b : c.body_a;
      const int32_t ci = char_of_slot[self];
      if (ci < 0) continue;
      int deepest = 0;
      for (int i = 1; i < c.count; ++i) deepest = c.points[i].depth > c.points[deepest].depth ? i : deepest;
      if (c.points[deepest].depth < kTouchDepth) continue;
      const Vec3 acting = side == 0 ? -c.normal : c.normal;  // contacts push A along -n
      const Character& ch = w.characters.items[size_t(ci)];
      if (acting.y >= ch.cos_slope) continue;  // ground: the probe handles it
      const Body& ob = w.bodies[other];
      if (ob.motion == MotionType::Dynamic) {
        out[size_t(ci)].pushes.push_back(Push{other, -acting, c.points[deepest].point});
      } else {
        out[size_t(ci)].blocks.push_back(acting);
      }
    }
  }
}

// Removes the part of `wish` that pushes into any of the block normals (horizontally).
Vec3 deflect(Vec3 wish, const std::vector<Vec3>& blocks) {
  for (const Vec3& n : blocks) {
    const Vec3 nh = np::normalize_or(horizontal(n), Vec3(0.0f));
    const float into = glm::dot(wish, nh);
    if (into < 0.0f) wish -= nh * into;
  }
  return wish;
}

bool pushes_into(const Vec3& wish, const std::vector<Vec3>& blocks) {
  for (const Vec3& n : blocks) {
    const Vec3 nh = np::normalize_or(horizontal(n), Vec3(0.0f));
    if (glm::dot(wish, nh) < -1.0e-3f) return true;
  }
  return false;
}

struct Ground {
  bool found = false;
  float gap = 0.0f;
  Vec3 normal{0.0f, 1.0f, 0.0f};
  Vec3 velocity{0.0f};
  uint32_t body_id = 0;
};

Ground probe_ground(const WorldImpl& w, const query::Core& core, const QueryFilter& f, float reach, float cos_slope) {
  Ground g;
  auto hit = cast_core(w, core, -kUp, reach, f);
  if (!hit || hit->normal.y < cos_slope) return g;
  g.found = true;
  g.gap = hit->distance;
  g.normal = hit->normal;
  g.velocity = point_velocity(w.bodies[hit->body.index], hit->point);
  g.body_id = hit->body_id;
  return g;
}

// The step-up probes. Returns the height of a walkable landing ahead (0 when there is no
// step to mount): clearance above, room ahead for the capsule to stand past the edge,
// and a walkable surface under it no higher than step_height.
float find_step(const WorldImpl& w, const query::Core& core, const QueryFilter& f, const Vec3& dir,
                const Character& c) {
  const float rise_wanted = c.settings.step_height + kClimbClearance;
  auto up = cast_core(w, core, kUp, rise_wanted, f);
  const float rise = up ? up->distance - kSkin : rise_wanted;
  if (rise <= kMinStep) return 0.0f;
  const query::Core raised = query::translated(core, kUp * rise);
  // Far enough that the capsule's centre is past a step's edge when it stands on it.
  const float ahead_wanted = core.radius + 0.05f;
  auto fwd = cast_core(w, raised, dir, ahead_wanted, f);
  if (fwd && fwd->distance < core.radius + 0.02f) return 0.0f;
  const float ahead = fwd ? fwd->distance - kSkin : ahead_wanted;
  const query::Core over = query::translated(raised, dir * ahead);
  auto down = cast_core(w, over, -kUp, rise, f);
  if (!down || down->normal.y < c.cos_slope || down->distance <= 0.0f) return 0.0f;
  const float height = rise - down->distance;
  if (height < kMinStep || height > c.settings.step_height) return 0.0f;
  return height;
}

// Caps what the character pushes into each dynamic body: an impulse of at most
// push_force * dt brings the body towards the wished speed, and the character follows no
// faster than the body now moves, so it leans on a crate rather than ramming it.
Vec3 push_bodies(WorldImpl& w, const Character& c, Vec3 wish, const std::vector<Push>& pushes, float dt) {
  for (const Push& p : pushes) {
    const Vec3 into = np::normalize_or(horizontal(p.into), Vec3(0.0f));
    const float want = glm::dot(wish, into);
    if (want <= 0.0f) continue;
    Body& ob = w.bodies[p.body];
    float speed = glm::dot(ob.linear_velocity, into);
    if (speed < want && ob.inv_mass > 0.0f) {
      const float j = std::min(c.settings.push_force * dt, (want - speed) * ob.mass);
      wake_island_of(w, p.body);
      const Vec3 impulse = into * j;
      ob.linear_velocity += impulse * ob.inv_mass;
      const Mat3 r = glm::mat3_cast(ob.origin.rotation);
      const Mat3 inv_i = r * ob.inv_inertia_local * glm::transpose(r);
      ob.angular_velocity += inv_i * glm::cross(p.point - ob.center, impulse);
      speed += j * ob.inv_mass;
    }
    const float allowed = std::max(0.0f, std::min(want, speed));
    wish -= into * (want - allowed);
  }
  return wish;
}

// Velocity along walkable ground: the horizontal wish tilted into the ground's plane
// (horizontal speed kept), plus the ground's own motion, minus a snap onto it.
Vec3 ground_velocity(const Vec3& wish, const Ground& g, float dt) {
  Vec3 v = wish;
  v.y = -(g.normal.x * wish.x + g.normal.z * wish.z) / g.normal.y;
  v += g.velocity;
  if (g.gap > kSnapMinGap) v.y -= std::min(g.gap / dt, kMaxSnapSpeed);
  return v;
}

Vec3 air_velocity(const Vec3& current, const Vec3& wish, const Character& c, float dt) {
  Vec3 v = current;
  if (wish == Vec3(0.0f) || c.settings.air_acceleration <= 0.0f) return v;
  const Vec3 dv = horizontal(wish) - horizontal(current);
  const float len = std::sqrt(glm::dot(dv, dv));
  const float max_dv = c.settings.air_acceleration * dt;
  return v + (len > max_dv ? dv * (max_dv / len) : dv);
}

// Keeps this tick's motion from carrying the capsule into static or kinematic geometry.
// The solver's speculative contacts only reach kSpeculativeDistance ahead, so a running or
// falling capsule would otherwise end a tick centimetres into a wall before being pushed
// out. The capsule is cast along the tick's motion (gravity included when it acts) and
// the velocity into whatever it meets is cut to what just reaches it; a few rounds let it
// slide into a corner. Dynamic bodies are left to the push and the solver.
Vec3 sweep(const WorldImpl& w, const query::Core& core, QueryFilter f, Vec3 v, const Vec3& gravity_dv, float dt) {
  f.hit_dynamic = false;
  for (int round = 0; round < 3; ++round) {
    const Vec3 motion = (v + gravity_dv) * dt;
    const float len = std::sqrt(glm::dot(motion, motion));
    if (len < 1.0e-6f) break;
    const Vec3 dir = motion / len;
    auto hit = cast_core(w, core, dir, len, f);
    if (!hit) break;
    const float into = -glm::dot(v + gravity_dv, hit->normal);
    const float allowed = hit->distance * -glm::dot(dir, hit->normal) / dt;
    if (into <= allowed) break;
    v += hit->normal * (into - allowed);
  }
  return v;
}

struct Step {
  Vec3 velocity{0.0f};
  bool gravity = true;
};

// A climb in progress: rise to the measured height (moving on only where nothing blocks),
// then carry on at that height until the ground probe finds the step's top under it.
bool continue_climb(Character& c, const Body& b, const Vec3& move, const Vec3& wish, const Ground& g, float dt,
                    Step& out) {
  if (!c.climbing) return false;
  const float dy = c.climb_target_y - b.origin.position.y;
  const bool arrived = dy <= 1.0e-3f;
  if (c.climb_ticks == 0 || glm::dot(move, c.climb_dir) <= 0.0f || (arrived && g.found && g.gap <= kClimbClearance * 2)) {
    c.climbing = false;
    return false;
  }
  --c.climb_ticks;
  out.velocity = wish;
  out.velocity.y = std::clamp(dy / dt, 0.0f, kClimbSpeed);
  out.gravity = false;
  return true;
}

void warn(WorldImpl& w, Character& c, uint8_t bit, const std::string& text) {
  if ((c.warned & bit) != 0) return;
  c.warned |= bit;
  w.characters.warnings.push_back("character " + std::to_string(c.body_id) + ": " + text);
}

// What the probes found this tick, for the decision below.
struct Probe {
  int32_t shape = -1;  // the collider probes are made with (-1: none)
  query::Core core;
  QueryFilter filter;
  Ground ground;
};

// Tries to start a climb; false when there is no step to mount ahead.
bool start_climb(const WorldImpl& w, Character& c, const Body& b, const Probe& p, const Vec3& move,
                 const Vec3& wish, float dt, Step& out) {
  if (p.shape < 0 || w.shapes[size_t(p.shape)].type != ShapeType::Capsule || c.settings.step_height <= 0.0f) {
    return false;
  }
  const Vec3 dir = np::normalize_or(move, Vec3(0.0f));
  const float height = find_step(w, p.core, p.filter, dir, c);
  if (height <= 0.0f) return false;
  c.climbing = true;
  c.climb_target_y = b.origin.position.y + height + kClimbClearance;
  c.climb_ticks = uint32_t(kClimbDeadline / dt);
  c.climb_dir = dir;
  return continue_climb(c, b, move, wish, p.ground, dt, out);
}

// The velocity for this tick: jump, climb, walk on the ground, or fly. Clears
// `ground.found` when the character leaves the ground this tick (no snap next tick).
Step decide(const WorldImpl& w, Character& c, const Body& b, Probe& p, const CharacterInput& in, const Vec3& move,
            const Vec3& wish, const Touches& touches, float dt) {
  Step s;
  Ground& g = p.ground;
  if (in.jump && g.found && !c.climbing) {
    s.velocity = wish + horizontal(g.velocity);
    s.velocity.y = c.settings.jump_speed + std::max(0.0f, g.velocity.y);
    g.found = false;
  } else if (continue_climb(c, b, move, wish, g, dt, s) ||
             (g.found && pushes_into(move, touches.blocks) && start_climb(w, c, b, p, move, wish, dt, s))) {
    g.found = false;
  } else if (g.found) {
    s.velocity = ground_velocity(wish, g, dt);
    s.gravity = false;
  } else {
    s.velocity = air_velocity(b.linear_velocity, wish, c, dt);
  }
  return s;
}

void update_one(WorldImpl& w, Character& c, Touches& touches, float dt) {
  Body& b = w.bodies[c.body_slot];
  check_character_config(w, c);
  const CharacterInput in = c.settings.script.empty() ? c.input : script_input(c, w.tick);
  const Vec3 move = horizontal(in.move);
  if (b.sleeping) {
    if (move == Vec3(0.0f) && !in.jump) return;  // idle sleeper: leave it be
    wake_island_of(w, c.body_slot);
  }
  Probe p;
  p.shape = probe_shape(w, b);
  p.filter = probe_filter(b, c.body_slot);
  if (p.shape >= 0) {
    p.core = query::core_of(placed_geom(w.shapes[size_t(p.shape)], b));
    const float reach = c.grounded ? std::max(c.settings.step_height, kGroundReach) : kGroundReach;
    p.ground = probe_ground(w, p.core, p.filter, reach, c.cos_slope);
  }
  Vec3 wish = deflect(move, touches.blocks);
  wish = push_bodies(w, c, wish, touches.pushes, dt);
  Step s = decide(w, c, b, p, in, move, wish, touches, dt);
  if (p.shape >= 0) {
    const Vec3 gravity_dv = s.gravity ? w.settings.gravity * (c.gravity_scale * dt) : Vec3(0.0f);
    s.velocity = sweep(w, p.core, p.filter, s.velocity, gravity_dv, dt);
  }
  b.linear_velocity = s.velocity;
  b.gravity_scale = s.gravity ? c.gravity_scale : 0.0f;
  const Ground& g = p.ground;
  c.grounded = g.found;
  c.ground_normal = g.found ? g.normal : kUp;
  c.ground_body = g.found ? g.body_id : 0;
}

}  // namespace

void check_character_config(WorldImpl& w, Character& c) {
  const Body& b = w.bodies[c.body_slot];
  const int32_t s = probe_shape(w, b);
  if (s < 0 || w.shapes[size_t(s)].type != ShapeType::Capsule) {
    warn(w, c, kWarnNoCapsule, "no enabled capsule collider; it will not climb steps");
  }
  if (!b.freeze_rotation) warn(w, c, kWarnRotation, "rotation is not frozen; contacts will topple it");
}

void update_characters(WorldImpl& w, float dt, CharacterScratch& scratch) {
  auto& items = w.characters.items;
  if (items.empty()) return;
  std::vector<int32_t>& char_of_slot = scratch.char_of_slot;
  std::vector<Touches>& touches = scratch.touches;
  char_of_slot.assign(w.bodies.size(), -1);
  touches.assign(items.size(), Touches{});
  for (size_t i = 0; i < items.size(); ++i) char_of_slot[items[i].body_slot] = int32_t(i);
  gather_touches(w, char_of_slot, touches);
  for (size_t i = 0; i < items.size(); ++i) update_one(w, items[i], touches[i], dt);
}

}  // namespace keel::sim
