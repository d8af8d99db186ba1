// Building and checking the FlatBuffers messages of protocol/schemas/messages.fbs.
//
// check_message() is the gate every received message passes before any field is read:
// FlatBuffers Verifier (bounded depth and table count), then range checks per message
// type — known enums, bounded counts, finite floats, the protocol version in handshakes.
// The generated API (keel/protocol/messages_generated.h) is used for everything else.
#pragma once

#include <keel/protocol/drop.h>
#include <keel/protocol/messages_generated.h>
#include <keel/protocol/packet.h>
#include <keel/game/match.h>

#include <cstdint>
#include <span>
#include <vector>

namespace keel::protocol {

/// Bounds on what a message may carry; larger ones are dropped as OutOfRange.
struct MessageLimits {
  static constexpr size_t kMaxTokenBytes = 1024;
  static constexpr size_t kMaxChallengeBytes = 512;
  static constexpr uint32_t kMaxInputWindow = 64;       ///< frames in an InputBatch
  static constexpr size_t kMaxInputBatchBytes = 1024;
  /// InputBatch.views: at most 1 + 41 bits a frame (a changed flag, the lag, the fraction).
  static constexpr size_t kMaxViewBytes = 512;
  /// ServerInputFrameRun.views: 1 + 17 bits per input of a run of 64 ticks of 256 players.
  static constexpr size_t kMaxRunViewBytes = 64 * 256 * 3;
  static constexpr size_t kMaxSnapshotBytes = 256 * 1024;
};

/// Verifies and range-checks a message. On None, `out` points into `bytes`. FlatBuffers
/// reads fields in place: `bytes` must start 8-byte aligned (a std::vector's data is);
/// copy a message out of a larger datagram before checking it.
DropReason check_message(std::span<const uint8_t> bytes, const fb::Message*& out);

/// Finishes a builder holding `body` as a Message and returns the bytes.
std::vector<uint8_t> finish_message(flatbuffers::FlatBufferBuilder& fbb, fb::Body type,
                                    flatbuffers::Offset<void> body);

/// The server's input frame for one tick: what the match applied, and the state hash after.
struct InputFrameMessage {
  uint64_t tick = 0;
  uint64_t state_hash = 0;
  game::TickInputs inputs;
};

}  // namespace keel::protocol
