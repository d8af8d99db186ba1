// keel-replay info, verify and recover.
#include <keel/scene/scene.h>
#include <keel/replay/commands.h>
#include <keel/replay/reader.h>
#include <keel/replay/recover.h>
#include <keel/replay/replayer.h>

#include "common.h"

#include <cstdio>
#include <sstream>

namespace keel::replay::cli {

namespace {

std::string seconds(uint64_t ticks, uint32_t rate) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f s", rate == 0 ? 0.0 : double(ticks) / double(rate));
  return buf;
}

void print_scene(const Header& h, const std::string& name, std::ostream& out) {
  auto scene = scene::parse_scene_binary(h.scene, name + " (embedded scene)");
  if (!scene) {
    out << "scene: unreadable: " << scene.error().message << "\n";
    return;
  }
  out << "scene: \"" << scene->name << "\", " << scene->bodies.size() << " bodies, " << scene->spawn_points.size()
      << " spawn points, " << scene->settings.tick_rate << " Hz, " << h.scene.size() << " bytes\n";
}

void print_checkpoints(const RecordingIndex& idx, uint32_t interval, std::ostream& out) {
  out << "checkpoints: " << idx.checkpoints.size() << " (every " << interval << " ticks)";
  size_t shown = 0;
  for (const CheckpointRef& c : idx.checkpoints) {
    if (shown++ == 8) {
      out << " ...";
      break;
    }
    out << (shown == 1 ? ": " : ", ") << c.tick;
  }
  out << "\n";
}

// Says up front when this program cannot re-run the recording, and what can.
std::string game_note(const Header& h, Io io) {
  if ((io.rules != nullptr ? *io.rules : builtin_rules()).knows(h.game)) return "";
  return " (not known to this program: load its module with --game " + (h.game_module.empty() ? std::string("PATH") : h.game_module) +
         ", docs/game-rules.md)";
}

// The game's declaration: what every input, state field and event of the file means.
void print_game(const Header& h, const game::GameSpec& spec, Io io) {
  io.out << "game: " << h.game << " version " << spec.version << game_note(h, io) << "\n";
  if (!h.game_module.empty()) io.out << "game module: " << h.game_module << " build " << h.game_build_id << "\n";
  io.out << "game seed: " << hex_hash(h.game_seed) << "\n";
  io.out << "input layout: " << spec.input.size() << " fields, " << spec.input.full_bits() << " bits in full\n"
         << spec.input.describe();
  auto scope = [&](const char* name, const game::StateScope& s) {
    io.out << name << ": " << s.fields().size() << " fields, " << s.state_bytes() << " bytes\n";
    for (const game::StateField& f : s.fields()) {
      static const char* const kTypes[] = {"bool", "i32", "u32", "i64", "u64", "f32"};
      io.out << "  " << f.name << ": " << kTypes[uint8_t(f.type) % 6];
      if (f.count > 1) io.out << '[' << f.count << ']';
      io.out << "\n";
    }
  };
  scope("match state", spec.state.global);
  scope("player state", spec.state.player);
  io.out << "events: " << spec.events.size() << "\n";
  for (const game::EventType& e : spec.events) {
    io.out << "  " << e.name << ":" << (e.payload.size() == 0 ? " no payload" : "") << "\n";
    std::istringstream lines(e.payload.describe());
    for (std::string line; std::getline(lines, line);) io.out << "  " << line << "\n";
  }
}

// "ticks 0..40, 60..120"
std::string ranges(const std::vector<TickRange>& rs) {
  std::string out;
  for (const TickRange& r : rs) out += (out.empty() ? "" : ", ") + to_string(r);
  return out.empty() ? "none" : out;
}

// What a crash (or a writer still running) leaves unknown, in the words verify and info use.
std::string incomplete_reason(const Header& h, const RecordingIndex& idx) {
  if (idx.writer_finished) return "the file is cut short inside its footer; every tick is there";
  std::string why = "the writer did not finish (killed, crashed, or still recording): the tail after tick " +
                    std::to_string(idx.highest_tick) + " is lost, up to " + std::to_string(idx.tail_lost_up_to) +
                    " ticks (it flushes every " + std::to_string(h.flush_every_ticks) + " ticks";
  if (idx.last_sync) why += " and last flushed at tick " + std::to_string(*idx.last_sync);
  return why + ")";
}

}  // namespace

int info(const std::string& path, Io io) {
  auto rec = Recording::open(path);
  if (!rec) {
    io.err << "error: " << rec.error().message << "\n";
    return kError;
  }
  const Header& h = rec->header();
  const RecordingIndex& idx = rec->index();
  io.out << "recording: " << path << "\n"
         << "format: version " << h.format_version << "\n"
         << "build: keel " << h.keel_version << " (" << h.build_id << "), " << h.compiler << ", " << h.target << "\n"
         << "flags: " << h.compiler_flags << "\n";
  print_game(h, rec->spec(), io);
  print_scene(h, path, io.out);
  uint64_t steps = idx.last_tick - idx.first_tick;
  io.out << "ticks: " << idx.first_tick << ".." << idx.last_tick << " (" << steps << " steps, "
         << seconds(steps, h.tick_rate) << " at " << h.tick_rate << " Hz)\n"
         << "players: " << idx.players_seen << " joined, at most " << idx.max_players << " at once; "
         << idx.player_events << " join/leave events, " << idx.input_frames << " input frames\n";
  print_checkpoints(idx, h.checkpoint_interval, io.out);
  for (const auto& [key, value] : h.metadata) io.out << "metadata: " << key << " = " << value << "\n";
  if (idx.finished && idx.problems.empty() && idx.gaps.empty()) {
    io.out << "complete: yes\n";
  } else {
    io.out << "complete: no (" << (!idx.problems.empty() ? "damaged" : !idx.gaps.empty() ? "ticks are missing" : incomplete_reason(rec->header(), idx))
           << ")\n";
    for (const std::string& p : idx.problems) io.out << "problem: " << p << "\n";
  }
  for (const TickRange& g : idx.gaps) io.out << "missing: ticks " << to_string(g) << "\n";
  for (const TickRange& l : idx.lost_before_recovery) {
    if (l.up_to) io.out << "lost before recovery: the tail, ticks " << to_string(l) << "\n";
  }
  return kOk;
}

int verify(const VerifyArgs& args, Io io) {
  auto rec = Recording::open(args.rec);
  if (!rec) {
    io.err << "error: " << rec.error().message << "\n";
    return kError;
  }
  detail::Progress progress(io, "verify");
  VerifyOptions options;
  options.threads = args.threads;
  options.rules = io.rules;
  options.from = args.from;
  options.to = args.to;
  options.progress = [&](uint64_t done, uint64_t total) { progress.update(done, total); };
  VerifyResult r = replay::verify(*rec, options);
  progress.done();
  for (const std::string& w : r.warnings) io.out << "warning: " << w << "\n";
  if (!r.error.empty()) {
    io.err << "error: " << r.error << "\n";
    return kError;
  }
  if (r.diverged_at) {
    if (r.events_differ) {
      io.out << "diverged at tick " << *r.diverged_at << ": the state hashes agree (" << hex_hash(r.recorded)
             << ") but the game events differ from the recorded ones\n";
    } else {
      io.out << "diverged at tick " << *r.diverged_at << ": recorded " << hex_hash(r.recorded) << " replayed "
             << hex_hash(r.replayed) << "\n";
    }
    return kDiffers;
  }
  // Only a sound, finished file with every tick passes. Damage anywhere is exit 2,
  // whatever the ticks that remain say; a file that lacks ticks but is sound is exit 3.
  const RecordingIndex& idx = rec->index();
  const std::string held = std::to_string(r.verified) + " ticks verified (" + ranges(r.verified_ranges) + ")";
  if (r.damaged) {
    io.out << "damaged: " << held << "; " << (idx.gaps.empty() ? "no tick is lost" : "ticks " + ranges(idx.gaps) + " cannot be re-run")
           << "; first damage: " << (idx.problems.empty() ? r.warnings.front() : idx.problems.front())
           << " (keel-replay recover keeps every tick that can be re-run)\n";
    return kError;
  }
  if (!idx.gaps.empty()) {
    io.out << "incomplete: " << held << "; ticks " << ranges(idx.gaps) << " are missing (lost before this file was recovered)\n";
    return kPartial;
  }
  if (!idx.finished) {
    io.out << "incomplete: " << held << "; " << incomplete_reason(rec->header(), idx) << "\n";
    return kPartial;
  }
  for (const TickRange& l : idx.lost_before_recovery) {
    if (l.up_to) io.out << "note: recovered from a file whose writer did not finish: ticks " << to_string(l) << " were lost\n";
  }
  io.out << "verified " << r.verified << " ticks\n";
  return kOk;
}

int recover(const std::string& in, const std::string& out, Io io) {
  auto r = recover_recording(in, out);
  if (!r) {
    io.err << "error: " << r.error().message << "\n";
    io.out << "recovered nothing\n";
    return kDiffers;
  }
  for (const std::string& p : r->problems) io.out << "problem: " << p << "\n";
  if (r->ticks_kept == 0) {
    io.out << "recovered nothing: no complete tick\n";
    return kDiffers;
  }
  io.out << "kept " << r->ticks_kept << " ticks (" << ranges(r->segments) << ") and " << r->checkpoints_kept
         << " checkpoints in " << out << "\n";
  for (const TickRange& l : r->lost) io.out << "lost: ticks " << to_string(l) << " (damaged, or behind damage up to the next checkpoint)\n";
  if (r->lost_tail) {
    io.out << "lost: the tail after tick " << r->lost_tail->first - 1 << ", up to " << r->lost_tail->count()
           << " ticks (the writer did not finish; it flushes every " << r->flush_every_ticks << " ticks"
           << (r->last_sync ? " and last flushed at tick " + std::to_string(*r->last_sync) : std::string()) << ")\n";
  }
  if (!r->lost_data) io.out << "nothing was lost\n";
  else if (r->lost.empty() && !r->lost_tail) io.out << "no tick was lost; the damaged chunks were left out\n";
  return r->lost_data ? kPartial : kOk;
}

}  // namespace keel::replay::cli
