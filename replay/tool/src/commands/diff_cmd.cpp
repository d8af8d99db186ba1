// keel-replay diff A B: two recordings, or a recording and a desync dump, or two dumps.
// First the tick whose hashes first differ; then each side's state at that tick (its
// dump, or re-run here from its own nearest checkpoint with its own inputs), compared
// body by body.
#include <keel/replay/commands.h>
#include <keel/replay/desync_dump.h>
#include <keel/replay/format.h>
#include <keel/replay/reader.h>
#include <keel/replay/replayer.h>
#include <keel/replay/state_diff.h>

#include "common.h"

#include <keel/games/sandbox.h>

#include <cstdio>
#include <fstream>

namespace keel::replay::cli {

namespace {

using detail::first_difference;
using detail::FirstDifference;
using detail::recorded_hash_at;

struct Side {
  std::string label;  // "A" or "B"
  std::string path;
  std::optional<Recording> rec;
  std::optional<DesyncDump> dump;
};

bool load_side(Side& s, Io io) {
  std::ifstream probe(s.path, std::ios::binary);
  char magic[8] = {};
  probe.read(magic, sizeof magic);
  if (looks_like_desync_dump({reinterpret_cast<const uint8_t*>(magic), size_t(probe.gcount())})) {
    auto d = read_desync_dump(s.path);
    if (!d) io.err << "error: " << d.error().message << "\n";
    else s.dump = std::move(*d);
    return d.has_value();
  }
  auto r = Recording::open(s.path);
  if (!r) io.err << "error: " << r.error().message << "\n";
  else s.rec.emplace(std::move(*r));
  return r.has_value();
}

// A match to restore a dump into: the other side's scene and game when it is a
// recording (spawn points and rules then match), else an empty match of the game the
// dump names.
keel::Expected<game::Match> blank_match(const Side& dump, const Side& other, const game::RulesRegistry* rules) {
  if (other.rec) return make_match(other.rec->header(), other.path, rules);
  auto made = make_rules(dump.dump->game, rules);
  if (!made) return keel::Error{dump.path + ": " + made.error().message};
  return game::Match::create(sim::SceneDef{}, std::move(*made));
}

// The side's state at `tick`, and a line saying where it came from.
keel::Expected<game::Match> state_at(const Side& s, const Side& other, uint64_t tick, uint32_t threads, Io io) {
  if (s.dump) {
    auto m = blank_match(s, other, io.rules);
    if (!m) return m.error();
    if (keel::Status st = m->restore_state(s.dump->state); !st) return keel::Error{s.path + ": " + st.error().message};
    io.out << s.label << ": " << s.path << ": desync dump at tick " << s.dump->tick << ", hash " << hex_hash(s.dump->hash)
           << (s.dump->note.empty() ? "" : " (" + s.dump->note + ")") << "\n";
    return m;
  }
  auto r = Replay::start(*s.rec, tick, ReplayOptions{threads, io.rules});
  if (!r) return r.error();
  uint64_t here = r->match().hash();
  io.out << s.label << ": " << s.path << ": recorded " << hex_hash(r->recorded_hash()) << "; re-run here from tick "
         << r->base_tick() << ": " << hex_hash(here)
         << (here == r->recorded_hash() ? " (reproduced)" : " (NOT reproduced on this machine)") << "\n";
  return r->release();
}

void print_fields(const StateDiff& d, uint32_t limit, std::ostream& out) {
  out << "fields that differ: " << d.fields.size() << " in " << d.bodies().size() << " bodies (largest first)\n";
  if (d.fields.empty()) return;
  char line[256];
  std::snprintf(line, sizeof line, "  %-8s %-20s %16s %16s %14s %12s\n", "body", "field", "A", "B", "B-A", "ULPs");
  out << line;
  uint32_t shown = 0;
  for (const FieldDiff& f : d.fields) {
    if (shown++ == limit) {
      out << "  ... " << d.fields.size() - limit << " more\n";
      break;
    }
    std::snprintf(line, sizeof line, "  %-8u %-20s %16.9g %16.9g %14.6g %12llu\n", f.body, f.field.c_str(), double(f.a),
                  double(f.b), f.difference(), static_cast<unsigned long long>(f.ulps));
    out << line;
  }
}

void print_diff(const StateDiff& d, uint32_t limit, std::ostream& out) {
  // The game's own fields first: a score or a timer that differs is usually where a
  // desync in the rules shows before any body moves differently.
  for (const std::string& g : d.game_state) out << g << "\n";
  for (uint32_t id : d.only_in_a) out << "body " << id << ": only in A\n";
  for (uint32_t id : d.only_in_b) out << "body " << id << ": only in B\n";
  print_fields(d, limit, out);
  for (const std::string& o : d.other) out << o << "\n";
  if (d.first_byte) out << "canonical states first differ at byte " << *d.first_byte << "\n";
  if (!d.identical() && d.fields.empty() && d.other.empty() && d.game_state.empty() && d.only_in_a.empty() &&
      d.only_in_b.empty()) {
    out << "no body or player field differs: the states differ only in what the public API does not expose "
           "(contact impulses, sleep timers, id free lists)\n";
  }
}

// Two recordings whose re-runs agree here although their recorded hashes differ: one
// machine computed differently. Their own checkpoints show what each machine had.
void compare_next_checkpoint(const Side& a, const Side& b, uint64_t tick, uint32_t limit, Io io) {
  for (const CheckpointRef& ra : a.rec->index().checkpoints) {
    if (ra.tick < tick) continue;
    for (const CheckpointRef& rb : b.rec->index().checkpoints) {
      if (rb.tick != ra.tick) continue;
      auto ca = a.rec->read_checkpoint(ra);
      auto cb = b.rec->read_checkpoint(rb);
      auto ma = make_match(a.rec->header(), a.path, io.rules), mb = make_match(b.rec->header(), b.path, io.rules);
      if (!ca || !cb || !ma || !mb || !ma->restore_state(ca->state) || !mb->restore_state(cb->state)) return;
      io.out << "at the next checkpoint both recordings hold, tick " << ra.tick << ", as each machine saved it:\n";
      print_diff(diff_states(*ma, *mb), limit, io.out);
      return;
    }
  }
  io.out << "no later checkpoint held by both recordings to compare\n";
}

// Finds the tick to compare, or returns an exit code when there is none.
std::optional<int> pick_tick(const Side& a, const Side& b, uint64_t& tick, Io io) {
  if (a.rec && b.rec) {
    FirstDifference d = first_difference(*a.rec, *b.rec);
    if (d.inputs_at) io.out << "inputs first differ at tick " << *d.inputs_at << "\n";
    if (!d.tick) {
      io.out << "no difference: every hash matches through tick " << d.common_last << "\n";
      return kOk;
    }
    io.out << "first differing tick: " << *d.tick << " (A " << hex_hash(d.hash_a) << ", B " << hex_hash(d.hash_b) << ")\n";
    tick = *d.tick;
    return std::nullopt;
  }
  const DesyncDump& dump = a.dump ? *a.dump : *b.dump;
  tick = dump.tick;
  std::optional<uint64_t> other;
  if (a.rec || b.rec) other = recorded_hash_at(a.rec ? *a.rec : *b.rec, tick);
  else if (a.dump->tick == b.dump->tick) other = b.dump->hash;
  if (!other) {
    io.err << "error: the other side holds no tick " << tick << "\n";
    return kError;
  }
  if (*other == dump.hash) {
    io.out << "no difference at tick " << tick << " (both " << hex_hash(dump.hash) << ")\n";
    return kOk;
  }
  io.out << "first differing tick: " << tick << "\n";
  return std::nullopt;
}

}  // namespace

int diff(const DiffArgs& args, Io io) {
  Side a{"A", args.a, {}, {}}, b{"B", args.b, {}, {}};
  if (!load_side(a, io) || !load_side(b, io)) return kError;
  uint64_t tick = 0;
  if (auto code = pick_tick(a, b, tick, io)) return *code;
  auto ma = state_at(a, b, tick, args.threads, io);
  auto mb = state_at(b, a, tick, args.threads, io);
  if (!ma || !mb) {
    io.err << "error: " << (ma ? mb.error().message : ma.error().message) << "\n";
    return kError;
  }
  StateDiff d = diff_states(*ma, *mb);
  print_diff(d, args.limit, io.out);
  if (d.identical() && a.rec && b.rec) {
    io.out << "the two re-runs agree here: the recordings hold the same inputs and earlier state, but one machine "
              "stepped them differently (see docs/replay.md, \"same inputs, different hashes\")\n";
    compare_next_checkpoint(a, b, tick, args.limit, io);
  }
  return kDiffers;
}

}  // namespace keel::replay::cli
