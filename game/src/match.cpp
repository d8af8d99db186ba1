// Match: player slots, the game's declared state and its rules around a World, stepped
// only by Match::step.
#include <keel/game/match.h>

#include <keel/base/byte_io.h>

#include <xxhash.h>

#include <algorithm>
#include <cstring>

namespace keel::game {

namespace {

constexpr char kMatchMagic[8] = {'K', 'E', 'E', 'L', 'M', 'T', 'C', 'H'};
constexpr uint32_t kMatchStateVersion = 2;

// SplitMix64: one add and a fixed mix per draw, so the generator's whole state is the one
// u64 in the state bytes.
uint64_t splitmix_next(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

auto by_player = [](const PlayerSlot& s, uint32_t p) { return s.player < p; };

}  // namespace

Match::Match(sim::SceneDef scene, sim::World world, std::unique_ptr<Rules> rules, GameSpec spec)
    : scene_(std::move(scene)), world_(std::move(world)), rules_(std::move(rules)), spec_(std::move(spec)),
      state_(spec_.state.global) {}
Match::Match(Match&&) noexcept = default;
Match& Match::operator=(Match&&) noexcept = default;
Match::~Match() = default;

Expected<Match> Match::create(const sim::SceneDef& scene, std::unique_ptr<Rules> rules, uint64_t seed) {
  try {
    return create_unguarded(scene, std::move(rules), seed);
  } catch (const std::exception& e) {
    // A game's code (a module's, perhaps) threw from spec() or on_start.
    return Error{std::string("the game's rules failed while the match was made: ") + e.what()};
  } catch (...) {
    return Error{"the game's rules failed while the match was made"};
  }
}

Expected<Match> Match::create_unguarded(const sim::SceneDef& scene, std::unique_ptr<Rules> rules, uint64_t seed) {
  if (!rules) return Error{"a match needs its game's rules"};
  GameSpec spec = rules->spec();
  if (Status st = spec.validate(); !st) return st.error();
  if (spec.pose_history_ticks != 0 && spec.pose_history_ticks < scene.settings.tick_rate) {
    return Error{"game \"" + spec.name + "\" keeps " + std::to_string(spec.pose_history_ticks) +
                 " ticks of pose history, less than one second at the scene's " +
                 std::to_string(scene.settings.tick_rate) + " ticks a second (raise pose_history_ticks)"};
  }
  auto world = sim::World::from_scene(scene);
  if (!world) return world.error();
  Match m(scene, std::move(*world), std::move(rules), std::move(spec));
  uint32_t max_id = 0;
  for (const sim::BodyDef& b : scene.bodies) {
    if (b.id != sim::kAutoBodyId) max_id = std::max(max_id, b.id);
  }
  m.next_body_id_ = max_id + 1;
  m.spec_hash_ = spec_hash(m.spec_);
  // The game's name and the host's seed: seed 0 gives the generator every tool starts
  // with by default; another seed another sequence.
  m.seed_ = seed;
  m.random_ = XXH3_64bits_withSeed(m.spec_.name.data(), m.spec_.name.size(), seed);
  m.rules_->on_start(m);
  m.apply_body_changes();
  m.record_poses();
  return m;
}

uint32_t Match::next_body_id() {
  while (next_body_id_ == sim::kAutoBodyId || world_.find_body(next_body_id_).valid()) ++next_body_id_;
  return next_body_id_++;
}

uint32_t Match::body_kind(uint32_t body_user_id) const {
  return world_.body_state(world_.find_body(body_user_id)).kind;  // 0 for no such body
}

void Match::set_body_kind(uint32_t body_user_id, uint32_t kind) {
  world_.set_body_kind(world_.find_body(body_user_id), kind);
}

const PlayerSlot* Match::find_player(uint32_t player) const {
  auto it = std::lower_bound(players_.begin(), players_.end(), player, by_player);
  return it != players_.end() && it->player == player ? &*it : nullptr;
}

PlayerSlot* Match::find_player_for_rules(uint32_t player) {
  return const_cast<PlayerSlot*>(std::as_const(*this).find_player(player));
}

uint32_t Match::random_u32() { return uint32_t(splitmix_next(random_) >> 32); }

uint32_t Match::random_below(uint32_t bound) {
  if (bound <= 1) return 0;
  // Rejection keeps every value equally likely: draws in the top partial range retry.
  const uint32_t limit = uint32_t(-bound) % bound;  // 2^32 mod bound
  for (;;) {
    uint32_t x = random_u32();
    if (x >= limit) return x % bound;
  }
}

uint64_t Match::next_fire_tick() const {
  // The next pass over the timers is the coming step's, except while a step runs before
  // its world step: that step's pass is over, so the next is the following step's.
  return world_.tick() + (before_world_step_ ? 1 : 0);
}

bool Match::set_timer(uint32_t timer, uint32_t ticks) {
  uint64_t due = next_fire_tick() + std::max<uint32_t>(ticks, 1) - 1;
  auto it = std::lower_bound(timers_.begin(), timers_.end(), timer,
                             [](const Timer& t, uint32_t id) { return t.id < id; });
  if (it != timers_.end() && it->id == timer) {
    it->due = due;
    return true;
  }
  if (timers_.size() >= kMaxTimers) return false;
  timers_.insert(it, Timer{timer, due});
  return true;
}

void Match::cancel_timer(uint32_t timer) {
  std::erase_if(timers_, [&](const Timer& t) { return t.id == timer; });
}

uint64_t Match::timer_remaining(uint32_t timer) const {
  for (const Timer& t : timers_) {
    if (t.id == timer) return t.due >= next_fire_tick() ? t.due - next_fire_tick() + 1 : 1;
  }
  return 0;
}

std::vector<std::pair<uint32_t, uint64_t>> Match::timers() const {
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (const Timer& t : timers_) out.emplace_back(t.id, t.due);
  return out;
}

uint32_t Match::spawn(sim::BodyDef def) {
  if (pending_.size() >= kMaxPendingBodyChanges) return 0;
  def.id = next_body_id();
  uint32_t id = def.id;
  pending_.push_back(BodyChange{true, id, std::move(def)});
  return id;
}

void Match::destroy(uint32_t body_user_id) {
  if (pending_.size() >= kMaxPendingBodyChanges) return;
  pending_.push_back(BodyChange{false, body_user_id, {}});
}

bool Match::emit(uint32_t type, const Values& payload) {
  if (type >= spec_.events.size() || events_.size() >= kMaxEventsPerTick) return false;
  GameEvent e{type, payload};
  spec_.events[type].payload.sanitize(e.payload);
  events_.push_back(e);
  return true;
}

void Match::apply_body_changes() {
  // In the order asked: a spawn then a destroy of the same id leaves nothing.
  std::vector<BodyChange> changes = std::move(pending_);
  pending_.clear();
  for (BodyChange& c : changes) {
    if (c.spawn) {
      // A def the world refuses (a rules bug) adds nothing.
      (void)world_.add_body(c.def);
    } else {
      sim::BodyId body = world_.find_body(c.id);
      if (world_.is_valid(body)) world_.remove_body(body);
    }
  }
}

void Match::join(uint32_t player) {
  auto it = std::lower_bound(players_.begin(), players_.end(), player, by_player);
  if (it != players_.end() && it->player == player) return;  // already here
  if (players_.size() >= kMaxPlayersPerMatch) return;
  PlayerSlot slot;
  slot.player = player;
  slot.spawn_index = scene_.spawn_points.empty() ? 0 : joins_ % uint32_t(scene_.spawn_points.size());
  slot.state = StateValues(spec_.state.player);
  ++joins_;
  it = players_.insert(it, std::move(slot));
  rules_->on_join(*this, *it);
}

void Match::leave(uint32_t player) {
  auto it = std::lower_bound(players_.begin(), players_.end(), player, by_player);
  if (it == players_.end() || it->player != player) return;
  rules_->on_leave(*this, *it);  // hooks cannot add or remove slots, so `it` stays valid
  players_.erase(it);
}

void Match::fire_timers() {
  // Due timers fire in (due tick, id) order; a timer a hook sets again during this pass
  // fires on a later step.
  const uint64_t now = world_.tick();
  for (;;) {
    auto due = timers_.end();
    for (auto it = timers_.begin(); it != timers_.end(); ++it) {
      if (it->due <= now && (due == timers_.end() || it->due < due->due)) due = it;
    }
    if (due == timers_.end()) return;
    uint32_t id = due->id;
    timers_.erase(due);
    rules_->on_timer(*this, id);
  }
}

void Match::step(const TickInputs& in) {
  events_.clear();
  before_world_step_ = true;
  for (const PlayerEvent& e : in.events) {
    if (e.kind == PlayerEvent::Kind::Join) join(e.player);
    else leave(e.player);
  }
  fire_timers();
  rules_->before_step(*this);
  apply_body_changes();
  // Every present player gets a frame: its own this tick, else its last — the one rule
  // for a missing frame, game::missing_input (keel/game/timeline.h), which the server
  // writes out so that it records what it applied.
  const Layout& layout = spec_.input;
  // A player's frame is the first input naming it. The server sends inputs in player
  // order, where that is a binary search (a big match has as many inputs as slots);
  // inputs in any other order are searched in full.
  const bool sorted = std::is_sorted(in.inputs.begin(), in.inputs.end(),
                                     [](const PlayerInput& a, const PlayerInput& b) { return a.player < b.player; });
  for (size_t i = 0; i < players_.size(); ++i) {
    PlayerSlot& slot = players_[i];
    InputFrame frame = slot.last_input;
    ViewStamp view = slot.view;  // a repeated frame repeats its view's lag too
    auto found = sorted ? std::lower_bound(in.inputs.begin(), in.inputs.end(), slot.player,
                                           [](const PlayerInput& a, uint32_t p) { return a.player < p; })
                        : std::find_if(in.inputs.begin(), in.inputs.end(),
                                       [&](const PlayerInput& pi) { return pi.player == slot.player; });
    if (found != in.inputs.end() && found->player == slot.player) {
      frame = found->frame;
      view = found->view;
    }
    layout.sanitize(frame);
    clamp_view(view);
    slot.last_input = frame;
    slot.view = view;
    rules_->apply_input(*this, slot, frame);
  }
  apply_body_changes();
  world_.step();
  before_world_step_ = false;
  rules_->after_step(*this);
  apply_body_changes();
  record_poses();
}

// The match's own state is one field list over the direction (keel/base/byte_io.h: a
// ByteWriter with const fields, or a FieldReader); restore_state checks what it read.
namespace {

template <class IO, class U32, class U64>
void visit_counters(IO& io, U32& next_body_id, U32& joins, U64& random) {
  io.u32(next_body_id);
  io.u32(joins);
  io.u64(random);
}

template <class IO, class Timers>
void visit_timers(IO& io, Timers& timers) {
  io.count(timers, 12, kMaxTimers, "timer");
  for (auto& t : timers) {
    io.u32(t.id);
    io.u64(t.due);
  }
}

// A player's slot before its game state: the last input's codes (as many as the game's
// input has components) and, when the game keeps a pose history, the view.
template <class IO, class Slot>
void visit_slot(IO& io, Slot& s, uint32_t components, bool keeps_history) {
  io.u32(s.player);
  io.u32(s.character);
  io.u32(s.spawn_index);
  for (uint32_t c = 0; c < components; ++c) io.u32(s.last_input.code[c]);
  if (keeps_history) {
    io.u16(s.view.lag);
    io.u8(s.view.fraction);
  }
}

}  // namespace

std::vector<uint8_t> Match::save_state() const {
  std::vector<uint8_t> out;
  write_own_state(out);
  world_.append_state(out);
  return out;
}

void Match::write_own_state(std::vector<uint8_t>& out) const {
  keel::ByteWriter w(out);
  for (char c : kMatchMagic) w.u8(uint8_t(c));
  w.u32(kMatchStateVersion);
  w.u64(spec_hash_);
  visit_counters(w, next_body_id_, joins_, random_);
  visit_timers(w, timers_);
  write_state_values(spec_.state.global, state_, out);
  w.u32(uint32_t(players_.size()));
  const uint32_t components = spec_.input.components();
  for (const PlayerSlot& s : players_) {
    visit_slot(w, s, components, spec_.pose_history_ticks != 0);
    write_state_values(spec_.state.player, s.state, out);
  }
  if (spec_.pose_history_ticks != 0) write_history(out);
}

Status Match::restore_state(std::span<const uint8_t> bytes) {
  keel::ByteReader r(bytes);
  for (char c : kMatchMagic) {
    if (r.u8() != uint8_t(c)) return Error{"not a Keel match state"};
  }
  uint32_t version = r.u32();
  if (version != kMatchStateVersion) {
    return Error{"match state version " + std::to_string(version) + " is not supported"};
  }
  if (uint64_t h = r.u64(); r.ok() && h != spec_hash_) {
    return Error{"the match state was saved by another game or game version than \"" + spec_.name + "\""};
  }
  keel::FieldReader io(r);
  uint32_t next_id = 0, joins = 0;
  uint64_t random = 0;
  visit_counters(io, next_id, joins, random);
  std::vector<Timer> timers;
  visit_timers(io, timers);
  for (size_t i = 1; i < timers.size() && r.ok(); ++i) {
    if (timers[i].id <= timers[i - 1].id) r.fail("timers are not sorted by id");
  }
  if (!r.ok()) return Error{"match state is damaged: " + r.error()};
  size_t at = r.position();
  StateValues state;
  if (!read_state_values(spec_.state.global, bytes, at, state)) return Error{"match state: the game's state is damaged"};
  r = keel::ByteReader(bytes.subspan(at));
  const uint32_t components = spec_.input.components();
  const bool keeps_history = spec_.pose_history_ticks != 0;
  const size_t slot_bytes = 12 + 4 * size_t(components) + (keeps_history ? 3 : 0) + spec_.state.player.state_bytes();
  uint32_t n = r.count(slot_bytes, kMaxPlayersPerMatch, "player");
  at += r.position();
  std::vector<PlayerSlot> players(n);
  for (uint32_t i = 0; i < n; ++i) {
    PlayerSlot& s = players[i];
    r = keel::ByteReader(bytes.subspan(at));
    visit_slot(io, s, components, keeps_history);
    if (r.ok() && i > 0 && s.player <= players[i - 1].player) r.fail("players are not sorted by id");
    if (r.ok() && !spec_.input.valid(s.last_input)) r.fail("player " + std::to_string(s.player) + "'s last input is out of range");
    if (keeps_history) {
      if (r.ok() && (s.view.lag > spec_.pose_history_ticks || (s.view.lag == 0 && s.view.fraction != 0))) {
        r.fail("player " + std::to_string(s.player) + "'s view is outside the pose history");
      }
    }
    if (!r.ok()) return Error{"match state is damaged: " + r.error()};
    at += r.position();
    if (!read_state_values(spec_.state.player, bytes, at, s.state)) {
      return Error{"match state: player " + std::to_string(s.player) + "'s game state is damaged"};
    }
  }
  std::deque<PoseFrame> history;
  if (keeps_history && !read_history(bytes, at, history)) return Error{"match state: the pose history is damaged"};
  sim::World world;
  if (Status st = world.restore_state(bytes.subspan(at)); !st) return st;
  if (keeps_history && (history.empty() || history.back().tick != world.tick())) {
    return Error{"match state: the pose history does not end at the world's tick"};
  }
  for (const PlayerSlot& s : players) {
    if (s.view.lag >= history.size() && s.view.lag != 0) return Error{"match state: a player's view is older than the pose history"};
  }
  world.set_threads(world_.settings().threads);
  world.use_worker_pool(world_.worker_pool());  // a host's shared pool, when it handed one in
  world_ = std::move(world);
  players_ = std::move(players);
  state_ = std::move(state);
  timers_ = std::move(timers);
  random_ = random;
  next_body_id_ = next_id;
  joins_ = joins;
  history_ = std::move(history);
  rebuild_history_bytes();
  pending_.clear();
  events_.clear();
  before_world_step_ = false;
  return Status::ok();
}

uint64_t Match::hash() const {
  // Reused, so a match hashed every tick allocates nothing once it has grown.
  static thread_local std::vector<uint8_t> own;
  own.clear();
  write_own_state(own);
  return world_.hash_after(own);
}

}  // namespace keel::game
