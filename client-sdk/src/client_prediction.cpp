// The predicted mode: a checkpoint makes a Predictor, confirmed frames feed it (held
// while a checkpoint is on its way), each update advances it, reports hashes and asks
// for a resync on a desync or a hole. Part of Client::Impl (client_impl.h, "prediction").
#include "client_impl.h"

namespace keel::client {

using namespace detail;

void Client::Impl::on_checkpoint(const BlockAnnouncement& info, std::span<const uint8_t> block,
                                 double now) {
  if (!scene) {
    drops.add(DropReason::TypeNotAllowed);
    return;
  }
  auto p = Predictor::create(*scene, block, info.tick, player_id, config.prediction);
  if (!p) {
    close(CloseReason::BadSession);
    return;
  }
  if (predictor) accumulate(prediction_base, predictor->stats());
  predictor = std::move(*p);
  stats.checkpoint_tick = info.tick;
  frame_receiver.emplace(info.tick);
  awaiting_checkpoint = false;
  // No clock observation here: a large checkpoint may have been seconds in flight.
  newest_server_tick = std::max(newest_server_tick, info.tick);
  // Inputs already sent for ticks the new checkpoint has not reached are still ours.
  for (auto it = recent_inputs.lower_bound(info.tick); it != recent_inputs.end(); ++it) {
    predictor->set_local_input(it->first, it->second);
  }
  std::deque<std::vector<uint8_t>> early = std::move(early_frames);
  early_frames.clear();
  if (state != State::Playing) enter_playing(info.tick);
  for (auto& f : early) on_frame(f, now);
}

void Client::Impl::on_frame(std::span<const uint8_t> bytes, double now) {
  const protocol::fb::Message* m = nullptr;
  DropReason r = protocol::check_message(bytes, m);
  std::vector<protocol::InputFrameMessage> frames;
  if (r == DropReason::None && config.mode == Mode::Predict &&
      m->body_type() == protocol::fb::Body::ServerInputFrameRun) {
    r = protocol::decode_input_frame_run(layout, *m->body_as_ServerInputFrameRun(), frames);
  } else if (r == DropReason::None) {
    r = DropReason::TypeNotAllowed;
  }
  if (r != DropReason::None) {
    drops.add(r);
    return;
  }
  if (!frame_receiver || !predictor) {
    // The checkpoint is still on its way: keep the newest few to replay after it. They
    // already tell the time: the server may be well past the checkpoint's tick.
    uint64_t tick = frames.back().tick;
    if (tick + 1 > newest_server_tick) {
      newest_server_tick = tick + 1;
      clock.observe(tick + 1, now);
    }
    early_frames.emplace_back(bytes.begin(), bytes.end());
    if (early_frames.size() > kMaxEarlyFrames) early_frames.pop_front();
    return;
  }
  for (protocol::InputFrameMessage& frame : frames) {
    r = frame_receiver->receive(frame);
    if (r == DropReason::Duplicate) continue;  // a run repeats frames until they are acked
    if (r != DropReason::None) {
      drops.add(r);
      continue;
    }
    ++stats.frames_received;
    heard_since_playing = true;
    newest_server_tick = std::max(newest_server_tick, frame.tick + 1);
    clock.observe(frame.tick + 1, now);  // the frame of tick t was sent after stepping t
    if (!predictor->add_confirmed(std::move(frame))) drops.add(DropReason::OutOfRange);
  }
}

void Client::Impl::request_resync(double now) {
  if (awaiting_checkpoint && now - last_resync < kResyncRepeat) return;
  flatbuffers::FlatBufferBuilder fbb(64);
  auto hello = protocol::fb::CreateClientHello(fbb, protocol::fb::ClientMode::Predict, true, config.max_kbps);
  if (!send_control(protocol::finish_message(fbb, protocol::fb::Body::ClientHello, hello.Union()))) return;
  // Frames after this belong to the new checkpoint's chain: hold them until it arrives.
  awaiting_checkpoint = true;
  last_resync = now;
  frame_receiver.reset();
  early_frames.clear();
  ++stats.resyncs;
  event(ClientEvent::Kind::Resync, predictor ? predictor->confirmed_tick() : 0);
}

void Client::Impl::run_prediction(double now) {
  if (!predictor) return;
  if (awaiting_checkpoint && now - last_resync >= kResyncRepeat) request_resync(now);
  std::vector<HashCheck> checks;
  std::vector<GameEventRecord> records;
  uint64_t present = inputs_started ? next_input_tick : predictor->confirmed_tick();
  predictor->advance(present, checks, &records);
  for (GameEventRecord& rec : records) {
    if (!rec.predicted) {
      // A resync's checkpoint is never older than the confirmed tick, but each
      // confirmed tick is reported once even if one were.
      if (rec.tick < last_confirmed_event_tick) continue;
      last_confirmed_event_tick = rec.tick;
    }
    queue_game_event(std::move(rec));
  }
  bool desync = false;
  for (const HashCheck& c : checks) {
    if (c.report) {
      flatbuffers::FlatBufferBuilder fbb(64);
      auto report = protocol::fb::CreateHashReport(fbb, c.tick, c.hash);
      if (send_control(protocol::finish_message(fbb, protocol::fb::Body::HashReport, report.Union()))) {
        ++stats.hash_reports_sent;
      }
    }
    if (c.mismatch) {
      event(ClientEvent::Kind::Desync, c.tick, c.hash, c.expected);
      desync = true;
    }
  }
  if ((desync && config.resync_on_desync) || predictor->needs_resync()) request_resync(now);
}

}  // namespace keel::client
