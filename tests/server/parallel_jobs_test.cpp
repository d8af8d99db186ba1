// The pool a match encodes its clients' snapshots with: every job runs once whatever the
// thread count, and clients' snapshots encoded on two threads are byte for byte those
// encoded one after another (each sender reads only the shared snapshot).
#include "parallel_jobs.h"

#include <keel/protocol/interest.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <stdexcept>

namespace keel::server {
namespace {

TEST(ParallelJobs, EveryJobRunsOnceAtAnyThreadCount) {
  for (uint32_t threads : {0u, 1u, 2u, 4u}) {
    ParallelJobs jobs(threads);
    EXPECT_EQ(jobs.threads(), threads == 0 ? 1u : threads);
    std::vector<std::atomic<int>> runs(1000);
    jobs.run(runs.size(), [&](size_t i) { runs[i].fetch_add(1); });
    for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << "job " << i << ", " << threads << " threads";
    jobs.run(0, [&](size_t) { FAIL() << "no job to run"; });
  }
}

TEST(ParallelJobs, AJobsExceptionReachesTheCaller) {
  ParallelJobs jobs(2);
  std::atomic<int> ran{0};
  EXPECT_THROW(jobs.run(64, [&](size_t i) {
                 ran.fetch_add(1);
                 if (i == 17) throw std::runtime_error("job 17");
               }),
               std::runtime_error);
  EXPECT_GE(ran.load(), 1);
  // The pool is still usable after.
  ran = 0;
  jobs.run(8, [&](size_t) { ran.fetch_add(1); });
  EXPECT_EQ(ran.load(), 8);
}

// One sender per client, each with its own viewer and budget, over 60 snapshots of 600
// moving bodies with acknowledgements two snapshots late: the messages of every client
// at every tick are the same encoded serially and on two threads.
std::vector<std::vector<std::vector<uint8_t>>> client_messages(uint32_t threads) {
  protocol::SnapshotConfig config;
  config.bounds_min = {-300, -20, -300};
  config.bounds_max = {300, 100, 300};
  protocol::InterestConfig interest;
  interest.radius = 70;
  const size_t clients = 12;
  std::vector<protocol::InterestSender> senders(clients, protocol::InterestSender(config, interest));
  std::vector<std::vector<std::vector<uint8_t>>> out(clients);
  ParallelJobs jobs(threads);
  std::vector<sim::BodyState> bodies(600);
  for (size_t i = 0; i < bodies.size(); ++i) bodies[i].id = 3 + uint32_t(i);
  for (uint64_t tick = 2; tick <= 120; tick += 2) {
    std::vector<sim::Vec3> positions;
    for (size_t i = 0; i < bodies.size(); ++i) {
      const float a = 0.01f * float(tick) + 0.37f * float(i);
      bodies[i].position = {100.0f * std::cos(a) * float(i % 7 + 1) / 7.0f, 1.0f, 100.0f * std::sin(a)};
      positions.push_back(bodies[i].position);
    }
    protocol::QuantSnapshot quant = protocol::quantize(bodies, tick, config);
    std::vector<std::vector<uint8_t>> messages(clients);
    jobs.run(clients, [&](size_t c) {
      const sim::Vec3 viewer(-60.0f + 10.0f * float(c), 1.0f, 0.0f);
      messages[c] = senders[c].encode({&quant, positions, {}, viewer}, 300.0 + 80.0 * double(c));
    });
    for (size_t c = 0; c < clients; ++c) {
      if (tick > 4) senders[c].on_ack(tick - 4);
      out[c].push_back(std::move(messages[c]));
    }
  }
  return out;
}

TEST(ParallelJobs, SnapshotsEncodedOnTwoThreadsAreThoseEncodedOnOne) {
  const auto serial = client_messages(1);
  const auto shared = client_messages(2);
  ASSERT_EQ(serial.size(), shared.size());
  size_t nonempty = 0;
  for (size_t c = 0; c < serial.size(); ++c) {
    ASSERT_EQ(serial[c].size(), shared[c].size());
    for (size_t t = 0; t < serial[c].size(); ++t) {
      EXPECT_EQ(serial[c][t], shared[c][t]) << "client " << c << ", snapshot " << t;
      nonempty += !serial[c][t].empty();
    }
  }
  EXPECT_GT(nonempty, serial.size() * serial[0].size() / 2);  // the comparison compared messages
}

}  // namespace
}  // namespace keel::server
