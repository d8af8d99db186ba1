// The seed inputs of fuzz_protocol_input and fuzz_game_values, in the formats their
// headers give (tests/fuzz/), written only when asked:
//   KEEL_WRITE_FUZZ_SEEDS=tests/fuzz/corpus build/bin/keel_protocol_tests --gtest_filter='FuzzSeeds.*'
#include "input_layouts.h"

#include <keel/game/rules.h>
#include <keel/protocol/frame_window.h>
#include <keel/protocol/input_codec.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace kp = keel::protocol;
namespace kg = keel::game;
using namespace keel::protocol::test;

namespace {

using Bytes = std::vector<uint8_t>;

void write_file(const std::filesystem::path& path, const Bytes& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// fuzz_input.h's chunk: len:u16 then the bytes.
Bytes chunk(const Bytes& b) {
  return cat({{uint8_t(b.size()), uint8_t(b.size() >> 8)}, b});
}

std::vector<kg::InputFrame> frames_of(const kg::Layout& l, uint64_t seed, size_t n) {
  Rng rng{seed};
  std::vector<kg::InputFrame> out;
  kg::Values v = random_values(l, rng);
  for (size_t i = 0; i < n; ++i) {
    if (i % 3 != 2) v = random_values(l, rng);  // every third frame repeats the one before
    out.push_back(v);
  }
  return out;
}

Bytes batch_message(const kg::Layout& l, const std::vector<kg::InputFrame>& frames) {
  kp::InputSender s(l);
  for (size_t i = 0; i < frames.size(); ++i) s.add(500 + i, frames[i]);
  return s.build_batch(490, 480);
}

Bytes run_message(const kg::Layout& l, uint64_t seed) {
  std::vector<kp::InputFrameMessage> run(3);
  const std::vector<kg::InputFrame> a = frames_of(l, seed, 3), b = frames_of(l, seed + 1, 3);
  for (size_t t = 0; t < run.size(); ++t) {
    run[t].tick = 900 + t;
    run[t].state_hash = 0x1234 * (t + 1);
    run[t].inputs.inputs = {{2, a[t]}, {5, b[t]}};
  }
  run[1].inputs.events = {{kg::PlayerEvent::Kind::Join, 5}};
  return kp::encode_input_frame_run(l, run);
}

Bytes values_bits(const kg::Layout& l, uint64_t seed) {
  const std::vector<kg::InputFrame> v = frames_of(l, seed, 6);
  kp::BitWriter w;
  kp::write_values(w, l, v[0]);
  for (size_t i = 1; i < v.size(); ++i) kp::write_values_change(w, l, v[i - 1], v[i]);
  return w.finish();
}

kg::GameSpec sandbox_spec() {
  kg::GameSpec spec;
  spec.name = "sandbox";
  spec.input = sandbox_layout();
  spec.state.player.add("fire_cooldown", kg::StateType::U32);
  spec.state.player.add("thrown_count", kg::StateType::U32);
  spec.state.player.add("thrown", kg::StateType::U32, 8);
  spec.max_bodies_per_player = 9;
  return spec;
}

// A spec with global state and two event types, whose second payload is every kind.
kg::GameSpec events_spec() {
  kg::GameSpec spec;
  spec.name = "arena";
  spec.version = 3;
  spec.input = all_kinds_layout();
  spec.state.global.add("round", kg::StateType::I32);
  spec.state.global.add("scores", kg::StateType::I64, 4);
  spec.state.player.add("charge", kg::StateType::F32);
  kg::EventType goal{"goal", {}};
  goal.payload.add_enum("team", {"red", "blue"});
  goal.payload.add_int("minute", 0, 90);
  spec.events = {goal, {"hit", all_kinds_layout()}};
  spec.max_extra_bodies = 16;
  return spec;
}

Bytes spec_bytes(const kg::GameSpec& spec) {
  EXPECT_TRUE(spec.validate());
  Bytes out;
  kg::write_spec(spec, out);
  return out;
}

Bytes layout_bytes(const kg::Layout& l) {
  Bytes out;
  kg::write_layout(l, out);
  return out;
}

}  // namespace

TEST(FuzzSeeds, WrittenOnlyWhenAsked) {
  const char* dir = std::getenv("KEEL_WRITE_FUZZ_SEEDS");
  if (dir == nullptr) GTEST_SKIP() << "set KEEL_WRITE_FUZZ_SEEDS=DIR to write the seeds";
  const std::filesystem::path input = std::filesystem::path(dir) / "protocol_input";
  const std::filesystem::path values = std::filesystem::path(dir) / "game_values";
  const kg::Layout sandbox = sandbox_layout(), kinds = all_kinds_layout(), none;
  // fuzz_protocol_input: [layout] [chunk when 1] then a message, or [count] [bits].
  write_file(input / "batch", cat({{0}, batch_message(sandbox, frames_of(sandbox, 1, 12))}));
  const Bytes bits = kp::encode_inputs(sandbox, frames_of(sandbox, 2, 8));
  write_file(input / "frames", cat({{0, 8}, bits}));
  write_file(input / "frame_run", cat({{0}, run_message(sandbox, 3)}));
  write_file(input / "every_kind_batch", cat({{3}, batch_message(kinds, frames_of(kinds, 4, 10))}));
  write_file(input / "layout_run", cat({{1}, chunk(layout_bytes(kinds)), run_message(kinds, 5)}));
  write_file(input / "no_fields_frames", cat({{2, 5}, kp::encode_inputs(none, std::vector<kg::InputFrame>(5))}));
  // fuzz_game_values: [0] spec; [1] [layout] values; [3] [spec chunk] [pick] values.
  write_file(values / "spec_sandbox", cat({{0}, spec_bytes(sandbox_spec())}));
  write_file(values / "spec_events", cat({{0}, spec_bytes(events_spec())}));
  write_file(values / "values_sandbox", cat({{1, 0}, values_bits(sandbox, 6)}));
  write_file(values / "values_every_kind", cat({{1, 3}, values_bits(kinds, 7)}));
  write_file(values / "values_layout", cat({{1, 1}, chunk(layout_bytes(kinds)), values_bits(kinds, 8)}));
  kg::Layout goal = events_spec().events[0].payload;
  write_file(values / "values_event", cat({{3}, chunk(spec_bytes(events_spec())), {1}, values_bits(goal, 9)}));
}
