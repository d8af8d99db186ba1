// One input per server tick, timed by the clock: which tick the server will step next
// plus the lead, catching up or skipping ahead after a stall, and the input batch with
// its acknowledgements. Part of Client::Impl (client_impl.h, "clock").
#include "client_impl.h"

namespace keel::client {

using namespace detail;

void Client::Impl::produce_inputs(double now) {
  if (!heard_since_playing) return;
  // The server has stepped at least to the newest tick it showed us, so an input must
  // be for that tick plus the lead even while the estimate is still catching up (at the
  // start of a session the clock has seen no frame or snapshot yet).
  uint64_t known = newest_server_tick + static_cast<uint64_t>(std::ceil(clock.lead_ticks()));
  uint64_t target = std::max(clock.input_tick(now), known);
  // The first tick the server may still be waiting for: past the newest contiguous
  // confirmed frame (predicting) or the newest snapshot (interpolating).
  uint64_t floor_tick = newest_server_tick;
  if (config.mode == Mode::Predict) floor_tick = frame_receiver ? frame_receiver->ack_tick() + 1 : 0;
  if (!inputs_started || target > next_input_tick + kMaxCatchUpTicks) {
    // Start, or skip ahead after a stall: the skipped ticks get the server's repeat rule.
    if (inputs_started) stats.inputs_skipped += target - next_input_tick;
    input_sender = protocol::InputSender{layout};
    next_input_tick = std::max(target, floor_tick);
    if (!inputs_started) stats.first_input_tick = next_input_tick;
    inputs_started = true;
  } else if (next_input_tick < floor_tick) {
    // Behind the server (the clock estimate lagged): those ticks are stepped already.
    stats.inputs_skipped += floor_tick - next_input_tick;
    input_sender.on_ack(floor_tick - 1);
    next_input_tick = floor_tick;
  }
  uint64_t produced = 0;
  while (next_input_tick <= target && produced < kMaxTicksPerUpdate) {
    uint64_t tick = next_input_tick++;
    // A spectator plays no one: its batches carry only acknowledgements, with neutral frames.
    game::InputFrame frame = spectator ? game::InputFrame{} : config.input_source ? config.input_source(tick) : current_input;
    game::InputFrame q = frame;
    layout.sanitize(q);  // what the server will apply: the prediction uses the same codes
    // An interpolating client shows the world where render_tick puts it: that is
    // what the player aimed at, so it goes with the frame for the server's lag
    // compensation. A predicting client shows its prediction of this very tick.
    protocol::WireView view;
    if (config.mode == Mode::Interpolate) {
      view = protocol::view_at(tick, render_tick(now));
    }
    input_sender.add(tick, q, view);
    if (predictor && !spectator) predictor->set_local_input(tick, q);
    recent_inputs[tick] = q;
    if (recent_inputs.size() > kRecentInputs) recent_inputs.erase(recent_inputs.begin());
    ++stats.inputs_sent;
    ++produced;
  }
  if (produced > 0) send_batch();
}

void Client::Impl::send_batch() {
  // A server sends one kind of snapshot; the newest decoded of either is acknowledged.
  uint64_t snapshot_ack = std::max(snapshot_receiver ? snapshot_receiver->ack_tick() : 0,
                                   interest_receiver ? interest_receiver->ack_tick() : 0);
  uint64_t frame_ack = frame_receiver ? frame_receiver->ack_tick() : 0;
  // The server treats a tick as held once a confirmed frame (predicting) or a snapshot
  // (interpolating) shows it stepped; inputs at or before it need not be resent.
  input_sender.on_ack(config.mode == Mode::Predict ? frame_ack : snapshot_ack);
  std::vector<uint8_t> batch = input_sender.build_batch(snapshot_ack, frame_ack);
  if (batch.empty() || !connection) return;
  if (connection->send(Channel::Input, batch)) ++stats.batches_sent;
}

}  // namespace keel::client
