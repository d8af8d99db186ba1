// A connection in steady traffic allocates nothing: once warm, the packets it builds, the
// packets it opens, the acks, fragments, reassembly, control messages and delivered
// messages all reuse buffers the connection already holds. Counted with a replacement
// global operator new (this test binary's only one), over ticks with snapshots (one of
// them fragmented), inputs, control messages and a lost packet every so often.
#include <keel/protocol/connection.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

namespace {

std::atomic<bool> counting{false};
std::atomic<uint64_t> allocations{0};

}  // namespace

void* operator new(std::size_t n) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace kp = keel::protocol;

namespace {

struct Traffic {
  kp::Connection server, client;
  std::vector<uint8_t> snapshot = std::vector<uint8_t>(300, 7);
  std::vector<uint8_t> big_snapshot = std::vector<uint8_t>(2500, 9);  // three fragments
  std::vector<uint8_t> control = std::vector<uint8_t>(40, 3);
  std::vector<uint8_t> input = std::vector<uint8_t>(20, 5);
  std::vector<uint8_t> taken;
  uint64_t packets = 0;
  uint64_t snapshots = 0, controls = 0, inputs = 0;

  Traffic() {
    kp::ConnectionKeys ks, kc;
    for (int i = 0; i < 32; ++i) {
      ks.send[i] = kc.receive[i] = static_cast<uint8_t>(i);
      ks.receive[i] = kc.send[i] = static_cast<uint8_t>(200 - i);
    }
    server.set_keys(ks);
    client.set_keys(kc);
  }

  void tick(int t, bool send = true) {
    const double now = t / 60.0;
    if (send) {
      server.send(kp::Channel::Snapshot, snapshot);
      if (t % 3 == 0) server.send(kp::Channel::Snapshot, big_snapshot);
      if (t % 5 == 0) server.send(kp::Channel::Control, control);
      client.send(kp::Channel::Input, input);
    }
    for (const auto& p : server.update(now)) {
      if (++packets % 13 != 0) client.receive(p, now);  // every 13th is lost
    }
    for (const auto& p : client.update(now)) server.receive(p, now);
    while (client.take(kp::Channel::Snapshot, taken)) ++snapshots;
    while (client.take(kp::Channel::Control, taken)) ++controls;
    while (server.take(kp::Channel::Input, taken)) ++inputs;
  }
};

TEST(ConnectionSteadyState, AllocatesNothingOnceWarm) {
  Traffic traffic;
  int t = 1;
  for (; t <= 600; ++t) traffic.tick(t);  // warm: every buffer has grown to its size
  const uint64_t snapshots = traffic.snapshots, controls = traffic.controls, inputs = traffic.inputs;
  allocations.store(0);
  counting.store(true);
  for (; t <= 1800; ++t) traffic.tick(t);
  counting.store(false);
  EXPECT_EQ(allocations.load(), 0u);
  // And the traffic did flow: most snapshots (lost packets take theirs, and a big one
  // with any fragment lost), every control message (resent), every input.
  EXPECT_GT(traffic.snapshots - snapshots, 1200u);
  EXPECT_GE(traffic.controls - controls, 230u);
  EXPECT_EQ(traffic.inputs - inputs, 1200u);
}

// The pool behind the reuse is bounded: a burst of large messages leaves at most its
// bound behind (held_bytes() returns to zero once everything is taken).
TEST(ConnectionSteadyState, ABurstOfLargeMessagesIsLetGo) {
  Traffic traffic;
  std::vector<uint8_t> large(200 * 1024, 1);
  for (int i = 0; i < 4; ++i) traffic.server.send(kp::Channel::Snapshot, large);
  int t = 1;
  for (; t <= 120; ++t) traffic.tick(t);
  // Quiet for two reassembly timeouts: partial messages whose fragments were lost expire.
  for (; t <= 240; ++t) traffic.tick(t, false);
  EXPECT_EQ(traffic.client.held_bytes(), 0u);
  EXPECT_EQ(traffic.server.held_bytes(), 0u);
}

}  // namespace
