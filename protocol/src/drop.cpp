#include <keel/protocol/drop.h>

namespace keel::protocol {

const char* to_string(DropReason reason) {
  switch (reason) {
    case DropReason::None: return "none";
    case DropReason::TooSmall: return "too_small";
    case DropReason::TooLarge: return "too_large";
    case DropReason::WrongProtocolId: return "wrong_protocol_id";
    case DropReason::UnknownPacketType: return "unknown_packet_type";
    case DropReason::TypeNotAllowed: return "type_not_allowed";
    case DropReason::AuthFailed: return "auth_failed";
    case DropReason::Replayed: return "replayed";
    case DropReason::MalformedPayload: return "malformed_payload";
    case DropReason::FragmentInvalid: return "fragment_invalid";
    case DropReason::ReassemblyFull: return "reassembly_full";
    case DropReason::ReceiveQueueFull: return "receive_queue_full";
    case DropReason::VerifierFailed: return "verifier_failed";
    case DropReason::OutOfRange: return "out_of_range";
    case DropReason::VersionMismatch: return "version_mismatch";
    case DropReason::TokenInvalid: return "token_invalid";
    case DropReason::TokenExpired: return "token_expired";
    case DropReason::TokenWrongAddress: return "token_wrong_address";
    case DropReason::TokenInUse: return "token_in_use";
    case DropReason::ChallengeInvalid: return "challenge_invalid";
    case DropReason::Duplicate: return "duplicate";
    case DropReason::Stale: return "stale";
    case DropReason::BlockInvalid: return "block_invalid";
    case DropReason::BlockRefused: return "block_refused";
    case DropReason::MemoryBudget: return "memory_budget";
    case DropReason::ChallengeReused: return "challenge_reused";
    case DropReason::kCount: break;
  }
  return "unknown";
}

}  // namespace keel::protocol
