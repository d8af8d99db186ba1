// keel-netbench --interest: interest management measured with many clients
// (interest_bench.cpp has the method).
#pragma once

#include <keel/protocol/snapshot_codec.h>
#include <keel/sim/world.h>

#include <cstdint>

struct InterestBenchOptions {
  uint32_t clients = 64;
  double kbps = 256;          ///< per-client budget (budget mode)
  float radius = 0;           ///< interest radius, m; 0 = none
  float view_radius = 60;     ///< bodies measured: those within this of the player, m
  bool everything = false;    ///< the whole-world Snapshot stream instead, no budget
  double seconds = 20;
  uint32_t snapshot_rate = 30;
  double rtt_ms = 100;
  double loss = 0.01;
  uint64_t seed = 1;
};

int run_interest(const InterestBenchOptions& o, keel::sim::World& world, const keel::protocol::SnapshotConfig& config);
