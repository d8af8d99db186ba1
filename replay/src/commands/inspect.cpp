// keel-replay info, verify and recover.
#include <keel/protocol/scene.h>
#include <keel/replay/commands.h>
#include <keel/replay/reader.h>
#include <keel/replay/recover.h>
#include <keel/replay/replayer.h>

#include "common.h"

#include <cstdio>

namespace keel::replay::cli {

namespace {

std::string seconds(uint64_t ticks, uint32_t rate) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f s", rate == 0 ? 0.0 : double(ticks) / double(rate));
  return buf;
}

void print_scene(const Header& h, const std::string& name, std::ostream& out) {
  auto scene = protocol::parse_scene_binary(h.scene, name + " (embedded scene)");
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
std::string rules_note(const std::string& rules, Io io) {
  if ((io.rules != nullptr ? *io.rules : builtin_rules()).knows(rules)) return "";
  return " (not known to this program: re-run it with a replay tool built with these rules, "
         "docs/replay.md)";
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
         << "flags: " << h.compiler_flags << "\n"
         << "rules: " << h.rules << rules_note(h.rules, io) << "\n";
  print_scene(h, path, io.out);
  uint64_t steps = idx.last_tick - idx.first_tick;
  io.out << "ticks: " << idx.first_tick << ".." << idx.last_tick << " (" << steps << " steps, "
         << seconds(steps, h.tick_rate) << " at " << h.tick_rate << " Hz)\n"
         << "players: " << idx.players_seen << " joined, at most " << idx.max_players << " at once; "
         << idx.player_events << " join/leave events, " << idx.input_frames << " input frames\n";
  print_checkpoints(idx, h.checkpoint_interval, io.out);
  for (const auto& [key, value] : h.metadata) io.out << "metadata: " << key << " = " << value << "\n";
  if (idx.finished && idx.problems.empty()) {
    io.out << "complete: yes\n";
  } else {
    io.out << "complete: no (" << (idx.finished ? "damaged" : "no footer: the writer did not finish") << ")\n";
    for (const std::string& p : idx.problems) io.out << "problem: " << p << "\n";
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
    io.out << "diverged at tick " << *r.diverged_at << ": recorded " << hex_hash(r.recorded) << " replayed "
           << hex_hash(r.replayed) << "\n";
    return kDiffers;
  }
  // Damage (not a crash's partial last chunk) hides the ticks after it: that is no pass.
  const RecordingIndex& idx = rec->index();
  if (idx.stopped_early && !idx.truncated && !args.to) {
    io.out << "damaged after tick " << idx.last_tick << ": ticks " << idx.first_tick << ".." << idx.last_tick
           << " verified, the rest cannot be re-run (keel-replay recover keeps the verified ones)\n";
    return kError;
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
  io.out << "kept " << r->ticks_kept << " ticks (" << r->first_tick << ".." << r->last_tick << ") and "
         << r->checkpoints_kept << " checkpoints in " << out << "\n";
  io.out << (r->lost_data ? "some data after tick " + std::to_string(r->last_tick) + " was lost\n" : "nothing was lost\n");
  return r->lost_data ? kPartial : kOk;
}

}  // namespace keel::replay::cli
