// keel-replay dump and export: the re-run state written out for people and plots.
#include <keel/replay/commands.h>
#include <keel/replay/format.h>
#include <keel/replay/reader.h>
#include <keel/replay/replayer.h>

#include "common.h"

#include <algorithm>
#include <fstream>
#include <vector>

namespace keel::replay::cli {

namespace {

sim::Expected<Recording> open_or_report(const std::string& path, Io io) {
  auto rec = Recording::open(path);
  if (!rec) io.err << "error: " << rec.error().message << "\n";
  return rec;
}

void csv_row(std::ostream& out, uint64_t tick, const sim::BodyState& s) {
  using detail::exact;
  out << tick << ',' << s.id << ',' << exact(s.position.x) << ',' << exact(s.position.y) << ',' << exact(s.position.z)
      << ',' << exact(s.rotation.x) << ',' << exact(s.rotation.y) << ',' << exact(s.rotation.z) << ','
      << exact(s.rotation.w) << ',' << exact(s.linear_velocity.x) << ',' << exact(s.linear_velocity.y) << ','
      << exact(s.linear_velocity.z) << ',' << exact(s.angular_velocity.x) << ',' << exact(s.angular_velocity.y) << ','
      << exact(s.angular_velocity.z) << ',' << (s.sleeping ? 1 : 0) << '\n';
}

void csv_tick(std::ostream& out, const game::Match& match) {
  std::vector<sim::BodyState> states;
  for (sim::BodyId id : match.world().bodies()) states.push_back(match.world().body_state(id));
  std::sort(states.begin(), states.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (const sim::BodyState& s : states) csv_row(out, match.tick(), s);
}

}  // namespace

int dump(const DumpArgs& args, Io io) {
  auto rec = open_or_report(args.rec, io);
  if (!rec) return kError;
  auto replay = Replay::start(*rec, args.tick, ReplayOptions{args.threads, io.rules});
  if (!replay) {
    io.err << "error: " << replay.error().message << "\n";
    return kError;
  }
  for (const std::string& w : replay->warnings()) io.err << "warning: " << w << "\n";
  nlohmann::ordered_json doc = detail::match_json(replay->match());
  doc["recorded_hash"] = hex_hash(replay->recorded_hash());
  doc["reached_from_tick"] = replay->base_tick();
  if (replay->match().hash() != replay->recorded_hash()) {
    io.err << "warning: the re-run state at tick " << args.tick << " does not match the recorded hash "
           << "(run keel-replay verify to find the first divergent tick)\n";
  }
  if (args.out.empty()) {
    io.out << doc.dump(1) << "\n";
    return kOk;
  }
  std::ofstream file(args.out, std::ios::trunc);
  file << doc.dump(1) << "\n";
  if (!file) {
    io.err << "error: " << args.out << ": cannot write\n";
    return kError;
  }
  io.out << "wrote tick " << args.tick << " (reached from tick " << replay->base_tick() << ") to " << args.out << "\n";
  return kOk;
}

int export_csv(const ExportArgs& args, Io io) {
  auto rec = open_or_report(args.rec, io);
  if (!rec) return kError;
  const RecordingIndex& idx = rec->index();
  const uint64_t from = args.from.value_or(idx.first_tick);
  const uint64_t to = std::min(args.to.value_or(idx.last_tick), idx.last_tick);
  const uint64_t every = std::max<uint64_t>(1, args.every);
  if (from > to) {
    io.err << "error: nothing to export: ticks " << from << ".." << to << "\n";
    return kError;
  }
  auto replay = Replay::start(*rec, from, ReplayOptions{args.threads, io.rules});
  if (!replay) {
    io.err << "error: " << replay.error().message << "\n";
    return kError;
  }
  std::ofstream out(args.csv, std::ios::trunc);
  out << "tick,body,px,py,pz,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz,sleeping\n";
  detail::Progress progress(io, "export");
  csv_tick(out, replay->match());
  while (replay->tick() < to && replay->step()) {
    if ((replay->tick() - from) % every == 0) csv_tick(out, replay->match());
    progress.update(replay->tick() - from, to - from);
  }
  progress.done();
  if (!out) {
    io.err << "error: " << args.csv << ": cannot write\n";
    return kError;
  }
  io.out << "exported ticks " << from << ".." << replay->tick() << " to " << args.csv << "\n";
  return kOk;
}

}  // namespace keel::replay::cli
