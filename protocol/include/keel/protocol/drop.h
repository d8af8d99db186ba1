// Why a received datagram (or a part of it) was thrown away. Every receive path returns
// one of these and counts it per connection, so an operator can see what is knocking
// (docs/architecture.md, "Conventions": reject early, quietly, and count it). Append new reasons at the end.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace keel::protocol {

enum class DropReason : uint8_t {
  None = 0,              ///< accepted
  TooSmall,              ///< shorter than a header (or a handshake minimum)
  TooLarge,              ///< longer than the largest packet we ever send
  WrongProtocolId,       ///< another protocol or another protocol version
  UnknownPacketType,
  TypeNotAllowed,        ///< a known type the connection's state does not accept
  AuthFailed,            ///< AEAD tag did not verify
  Replayed,              ///< sequence already seen, or older than the replay window
  MalformedPayload,      ///< a chunk's length or fields do not fit the packet
  FragmentInvalid,       ///< index >= count, count out of range, inconsistent sizes
  ReassemblyFull,        ///< too many fragments / bytes held for this connection
  ReceiveQueueFull,      ///< the application is not draining messages
  VerifierFailed,        ///< FlatBuffers Verifier rejected the message
  OutOfRange,            ///< a field failed its range check (non-finite, count, enum, tick)
  VersionMismatch,
  TokenInvalid,          ///< could not be decrypted/authenticated
  TokenExpired,
  TokenWrongAddress,     ///< the token does not list this server
  TokenInUse,            ///< the token was already used from another address
  ChallengeInvalid,
  Duplicate,             ///< already received (fragments, blocks)
  Stale,                 ///< too old to matter (snapshot older than the newest, etc.)
  BlockInvalid,          ///< a large-block fragment that does not fit the block in progress
  BlockRefused,          ///< a large-block fragment from a peer that may not send blocks
  MemoryBudget,          ///< would hold more than the connection's or the server's bound
  ChallengeReused,       ///< a challenge that was already accepted once (replay or resend)
  kCount
};

/// A short stable name for logs and metrics, e.g. "auth_failed".
const char* to_string(DropReason reason);

/// Per-reason counters (index = the enum value).
struct DropCounters {
  std::array<uint64_t, static_cast<size_t>(DropReason::kCount)> counts{};

  void add(DropReason r) {
    if (r != DropReason::None) ++counts[static_cast<size_t>(r)];
  }
  uint64_t operator[](DropReason r) const { return counts[static_cast<size_t>(r)]; }
  uint64_t total() const {
    uint64_t t = 0;
    for (uint64_t c : counts) t += c;
    return t;
  }
};

}  // namespace keel::protocol
