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

keel::Expected<Recording> open_or_report(const std::string& path, Io io) {
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

// CSV fields as text: a comma or quote inside (a stick's "(x, y)") is quoted.
std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"") == std::string::npos) return v;
  std::string q = "\"";
  for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

void csv_inputs(std::ostream& out, uint64_t tick, const game::Layout& layout, const game::TickInputs& in) {
  for (const game::PlayerInput& p : in.inputs) {
    out << tick << ',' << p.player;
    for (uint32_t f = 0; f < layout.size(); ++f) out << ',' << csv_field(layout.format(p.frame, f));
    out << '\n';
  }
}

void csv_events(std::ostream& out, uint64_t tick, const game::GameSpec& spec, const std::vector<game::GameEvent>& events) {
  for (const game::GameEvent& e : events) {
    if (e.type >= spec.events.size()) continue;
    out << tick << ',' << spec.events[e.type].name << ',' << csv_field(spec.events[e.type].payload.format(e.payload)) << '\n';
  }
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
  // What the step into this tick was given and what it emitted, by the game's names.
  doc["inputs"] = detail::inputs_json(rec->spec(), replay->inputs());
  doc["events"] = detail::events_json(rec->spec(), replay->recorded_events());
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
  const game::GameSpec& spec = rec->spec();
  std::ofstream out(args.csv, std::ios::trunc);
  out << "tick,body,px,py,pz,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz,sleeping\n";
  std::ofstream inputs, events;
  if (!args.inputs_csv.empty()) {
    inputs.open(args.inputs_csv, std::ios::trunc);
    inputs << "tick,player";
    for (const game::Field& f : spec.input.fields()) inputs << ',' << f.name;
    inputs << '\n';
  }
  if (!args.events_csv.empty()) {
    events.open(args.events_csv, std::ios::trunc);
    events << "tick,event,payload\n";
  }
  detail::Progress progress(io, "export");
  csv_tick(out, replay->match());
  while (replay->tick() < to && replay->step()) {
    // Inputs and events go out for every tick stepped (--every thins the body rows only):
    // they are what a tick's state came from.
    if (inputs.is_open()) csv_inputs(inputs, replay->tick(), spec.input, replay->inputs());
    if (events.is_open()) csv_events(events, replay->tick(), spec, replay->recorded_events());
    if ((replay->tick() - from) % every == 0) csv_tick(out, replay->match());
    progress.update(replay->tick() - from, to - from);
  }
  progress.done();
  for (const auto& [file, path] : {std::pair<std::ofstream*, const std::string*>{&out, &args.csv},
                                   {&inputs, &args.inputs_csv}, {&events, &args.events_csv}}) {
    if (file->is_open() || path == &args.csv) {
      if (!*file) {
        io.err << "error: " << *path << ": cannot write\n";
        return kError;
      }
    }
  }
  io.out << "exported ticks " << from << ".." << replay->tick() << " to " << args.csv << "\n";
  return kOk;
}

}  // namespace keel::replay::cli
