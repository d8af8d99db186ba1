// Snapshots into the interpolation buffer: whole-world and partial (interest
// management) snapshots decoded and dequantised, and each one's tick shown to the clock.
// Part of Client::Impl (client_impl.h, "interpolation").
#include "client_impl.h"

namespace keel::client {

using namespace detail;

void Client::Impl::on_snapshot(std::span<const uint8_t> bytes, double now) {
  const protocol::fb::Message* m = nullptr;
  DropReason r = protocol::check_message(bytes, m);
  if (r == DropReason::None && m->body_type() == protocol::fb::Body::PartialSnapshot && interest_receiver) {
    on_partial_snapshot(*m->body_as_PartialSnapshot(), now);
    return;
  }
  if (r == DropReason::None && (m->body_type() != protocol::fb::Body::Snapshot || !snapshot_receiver)) {
    r = DropReason::TypeNotAllowed;
  }
  if (r == DropReason::None) r = snapshot_receiver->receive(*m->body_as_Snapshot());
  if (r != DropReason::None) {
    drops.add(r);
    return;
  }
  const protocol::QuantSnapshot& q = snapshot_receiver->latest();
  std::vector<sim::BodyState> bodies;
  bodies.reserve(q.bodies.size());
  for (const protocol::QuantBody& b : q.bodies) bodies.push_back(protocol::dequantize(b, snapshot_config));
  buffer.add(q.tick, std::move(bodies), now, tick_rate);
  snapshot_arrived(q.tick, now);
}

// Interest management: the bodies this snapshot updates get a sample each, those that
// left the client's interest are dropped from the buffer (and so from pose()).
void Client::Impl::on_partial_snapshot(const protocol::fb::PartialSnapshot& message, double now) {
  DropReason r = interest_receiver->receive(message);
  if (r != DropReason::None) {
    drops.add(r);
    return;
  }
  const protocol::PartialUpdate& u = interest_receiver->last();
  std::vector<sim::BodyState> bodies;
  bodies.reserve(u.bodies.size());
  for (const protocol::QuantBody& b : u.bodies) bodies.push_back(protocol::dequantize(b, snapshot_config));
  buffer.add_partial(u.tick, bodies, u.left, now, tick_rate);
  stats.interest_left += u.left.size();
  snapshot_arrived(u.tick, now);
}

void Client::Impl::snapshot_arrived(uint64_t tick, double now) {
  ++stats.snapshots_received;
  heard_since_playing = true;
  newest_server_tick = std::max(newest_server_tick, tick);
  clock.observe(tick, now);
}

}  // namespace keel::client
