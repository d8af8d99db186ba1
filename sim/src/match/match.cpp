// Match: player slots and rules around a World, stepped only by Match::step.
#include <keel/sim/match.h>

#include "state/state_io.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace keel::sim {

namespace {

constexpr char kMatchMagic[8] = {'K', 'E', 'E', 'L', 'M', 'T', 'C', 'H'};
constexpr uint32_t kMatchStateVersion = 1;
constexpr float kPi = 3.14159265358979323846f;

float finite_or_zero(float v) { return std::isfinite(v) ? v : 0.0f; }

}  // namespace

bool sanitize(InputFrame& f) {
  InputFrame before = f;
  f.move_x = finite_or_zero(f.move_x);
  f.move_z = finite_or_zero(f.move_z);
  f.look_yaw = finite_or_zero(f.look_yaw);
  float len2 = f.move_x * f.move_x + f.move_z * f.move_z;
  if (len2 > 1.0f) {
    float inv = 1.0f / std::sqrt(len2);
    f.move_x *= inv;
    f.move_z *= inv;
  }
  if (f.look_yaw < -kPi || f.look_yaw >= kPi) {
    // Wrap by whole turns; |yaw| is bounded first so the loop count stays tiny.
    if (std::abs(f.look_yaw) > 1.0e4f) f.look_yaw = 0.0f;
    float turns = std::floor((f.look_yaw + kPi) / (2.0f * kPi));
    f.look_yaw -= turns * 2.0f * kPi;
    if (f.look_yaw < -kPi || f.look_yaw >= kPi) f.look_yaw = -kPi;
  }
  f.buttons &= kKnownButtons;
  return std::memcmp(&before, &f, sizeof f) == 0;
}

Match::Match(SceneDef scene, World world, std::unique_ptr<Rules> rules)
    : scene_(std::move(scene)), world_(std::move(world)), rules_(std::move(rules)) {}
Match::Match(Match&&) noexcept = default;
Match& Match::operator=(Match&&) noexcept = default;
Match::~Match() = default;

Expected<Match> Match::create(const SceneDef& scene, std::unique_ptr<Rules> rules) {
  auto world = World::from_scene(scene);
  if (!world) return world.error();
  if (!rules) rules = std::make_unique<SandboxRules>();
  Match m(scene, std::move(*world), std::move(rules));
  uint32_t max_id = 0;
  for (const BodyDef& b : scene.bodies) {
    if (b.id != kAutoBodyId) max_id = std::max(max_id, b.id);
  }
  m.next_body_id_ = max_id + 1;
  return m;
}

uint32_t Match::next_body_id() {
  while (next_body_id_ == kAutoBodyId || world_.find_body(next_body_id_).valid()) ++next_body_id_;
  return next_body_id_++;
}

const PlayerSlot* Match::find_player(uint32_t player) const {
  auto it = std::lower_bound(players_.begin(), players_.end(), player,
                             [](const PlayerSlot& s, uint32_t p) { return s.player < p; });
  return it != players_.end() && it->player == player ? &*it : nullptr;
}

void Match::join(uint32_t player) {
  auto it = std::lower_bound(players_.begin(), players_.end(), player,
                             [](const PlayerSlot& s, uint32_t p) { return s.player < p; });
  if (it != players_.end() && it->player == player) return;  // already here
  if (players_.size() >= kMaxPlayersPerMatch) return;
  PlayerSlot slot;
  slot.player = player;
  slot.spawn_index = scene_.spawn_points.empty() ? 0 : joins_ % uint32_t(scene_.spawn_points.size());
  ++joins_;
  it = players_.insert(it, slot);
  rules_->on_join(*this, *it);
}

void Match::leave(uint32_t player) {
  auto it = std::lower_bound(players_.begin(), players_.end(), player,
                             [](const PlayerSlot& s, uint32_t p) { return s.player < p; });
  if (it == players_.end() || it->player != player) return;
  rules_->on_leave(*this, *it);
  players_.erase(it);
}

void Match::step(const TickInputs& in) {
  for (const PlayerEvent& e : in.events) {
    if (e.kind == PlayerEvent::Kind::Join) join(e.player);
    else leave(e.player);
  }
  // Every present player gets a frame: its own this tick, else its last (the
  // documented repeat-last rule; the server records what it applied).
  for (PlayerSlot& slot : players_) {
    InputFrame frame = slot.last_input;
    for (const PlayerInput& pi : in.inputs) {
      if (pi.player == slot.player) {
        frame = pi.frame;
        break;
      }
    }
    sanitize(frame);
    slot.last_input = frame;
    rules_->apply_input(*this, slot, frame);
  }
  world_.step();
}

std::vector<uint8_t> Match::save_state() const {
  std::vector<uint8_t> out;
  StateWriter w(out);
  w.bytes(kMatchMagic, sizeof kMatchMagic);
  w.u32(kMatchStateVersion);
  w.u32(next_body_id_);
  w.u32(joins_);
  w.u32(uint32_t(players_.size()));
  for (const PlayerSlot& s : players_) {
    w.u32(s.player);
    w.u32(s.character);
    w.u32(s.spawn_index);
    w.f32(s.last_input.move_x);
    w.f32(s.last_input.move_z);
    w.f32(s.last_input.look_yaw);
    w.u32(s.last_input.buttons);
    w.u32(s.fire_cooldown);
    w.u32(uint32_t(s.thrown.size()));
    for (uint32_t id : s.thrown) w.u32(id);
  }
  world_.append_state(out);
  return out;
}

Status Match::restore_state(std::span<const uint8_t> bytes) {
  StateReader r(bytes);
  char magic[8] = {};
  r.bytes(magic, sizeof magic);
  if (!r.ok() || std::memcmp(magic, kMatchMagic, sizeof magic) != 0) return Error{"not a Keel match state"};
  uint32_t version = r.u32();
  if (version != kMatchStateVersion) {
    return Error{"match state version " + std::to_string(version) + " is not supported"};
  }
  uint32_t next_id = r.u32();
  uint32_t joins = r.u32();
  uint32_t n = r.count(36, kMaxPlayersPerMatch);
  std::vector<PlayerSlot> players(n);
  uint32_t prev = 0;
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    PlayerSlot& s = players[i];
    s.player = r.u32();
    if (i > 0 && s.player <= prev) r.fail("players are not sorted by id");
    prev = s.player;
    s.character = r.u32();
    s.spawn_index = r.u32();
    s.last_input.move_x = r.f32();
    s.last_input.move_z = r.f32();
    s.last_input.look_yaw = r.f32();
    s.last_input.buttons = r.u32();
    s.fire_cooldown = r.u32();
    uint32_t k = r.count(4, 1u << 16);
    s.thrown.resize(k);
    for (uint32_t& id : s.thrown) id = r.u32();
  }
  if (!r.ok()) return Error{"match state is damaged: " + r.error()};
  World world;
  if (Status st = world.restore_state(bytes.subspan(r.position())); !st) return st;
  world.set_threads(world_.settings().threads);
  world_ = std::move(world);
  players_ = std::move(players);
  next_body_id_ = next_id;
  joins_ = joins;
  return Status::ok();
}

uint64_t Match::hash() const {
  std::vector<uint8_t> bytes = save_state();
  return XXH3_64bits(bytes.data(), bytes.size());
}

}  // namespace keel::sim
