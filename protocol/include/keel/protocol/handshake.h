// The connection handshake: request (carrying the connect token) -> challenge -> response.
//
// Handshake datagrams are a packet header (type ConnectionRequest/Challenge/Response/
// Deny, sequence 0) followed by [u16 length][FlatBuffers Message], zero padded; the
// server's two (Challenge, Deny) carry the message sealed with the token's
// server-to-client key instead, after a random nonce tail, so that only the server the
// token names can make a client answer or give up (docs/protocol.md, "Handshake"). The
// client pads its request to kMinRequestBytes, and every server reply is smaller than
// the request that caused it, so a spoofed source address cannot be used to amplify.
//
// The server answers a valid request with a challenge: the token's keys and identity,
// encrypted under a random key only this server process holds, which the client must
// echo from the same address. That round trip proves the client receives at the address
// it claims before any connection state is created. Each challenge is accepted once:
// a response echoed again (a resend, or a replay after the client left) is refused as
// challenge_reused, so a captured response can never admit a second session.
#pragma once

#include <keel/protocol/drop.h>
#include <keel/protocol/messages.h>
#include <keel/protocol/token.h>

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace keel::protocol {

inline constexpr size_t kMinRequestBytes = 1200;

/// The size of every ConnectionResponse (the client echoes a fixed-size challenge).
size_t connection_response_bytes();

/// The checks on a handshake datagram that cost no cryptography, for a server to run
/// before it spends any rate allowance or decryption on it: the header (protocol id,
/// version, type), a ConnectionRequest of at least kMinRequestBytes or a
/// ConnectionResponse of exactly connection_response_bytes(), the length prefix and the
/// FlatBuffers Verifier. Challenges and denies (server-to-client) are TypeNotAllowed.
DropReason check_handshake_shape(std::span<const uint8_t> datagram);

/// A client the server admitted: who it is and the keys for its Connection.
struct AcceptedClient {
  uint64_t client_id = 0;
  uint64_t match_id = 0;
  uint32_t timeout_seconds = 0;
  std::array<uint8_t, kUserDataBytes> user_data{};
  ClientRole role = ClientRole::Player;
  ConnectionKeys keys;  ///< server side: send = server-to-client
  std::string address;
  /// The challenge this client answered, and the newest challenge the handshake had
  /// issued when the answer was accepted. A later answer for the same token from the same
  /// address whose challenge is newer than `issued_through` answers a request sent after
  /// this one was accepted: the client started over (a restart keeps its token and, with
  /// a fixed port, its address), so the host replaces the session instead of keeping it.
  uint64_t challenge_sequence = 0;
  uint64_t issued_through = 0;
};

/// Server side of the handshake. Time is passed in (unix seconds).
class ServerHandshake {
 public:
  /// `server_address` must appear, byte for byte, in a token's address list. An empty
  /// string accepts no address until accept_address() names one.
  ServerHandshake(const TokenKey& key, std::string server_address);

  /// Also accepts tokens naming `server_address` ("host:port"): a server learns the
  /// address clients reach it at (Agones) after it started. At most kMaxServerAddresses;
  /// returns false (and changes nothing) past that or for an empty string.
  bool accept_address(std::string server_address);
  const std::vector<std::string>& addresses() const { return addresses_; }
  static constexpr size_t kMaxServerAddresses = 8;

  /// Checks a ConnectionRequest from `from`. On None, `reply` holds the challenge.
  /// Rejections: TooSmall (not padded), VerifierFailed/OutOfRange, VersionMismatch,
  /// TokenExpired, TokenInvalid (tampered / other key), TokenWrongAddress, TokenInUse
  /// (already seen from another address).
  DropReason on_request(std::span<const uint8_t> datagram, const std::string& from,
                        uint64_t now_unix, std::vector<uint8_t>& reply);
  /// Checks a ConnectionResponse; on None, `out` describes the admitted client. A
  /// challenge is accepted once; echoed again it is ChallengeReused (with `out` filled
  /// in, so the caller can tell a resend from its own session's address).
  DropReason on_response(std::span<const uint8_t> datagram, const std::string& from,
                         uint64_t now_unix, AcceptedClient& out);
  const DropCounters& drops() const { return drops_; }
  /// Accepted challenges remembered (until their token expires), at most
  /// kMaxAcceptedChallenges.
  size_t accepted_challenges() const { return accepted_.size(); }
  static constexpr size_t kMaxAcceptedChallenges = 65536;

 private:
  struct UsedToken {
    std::array<uint8_t, 16> mac{};
    std::string address;
    uint64_t expire_time = 0;
  };
  DropReason check_request(std::span<const uint8_t> datagram, const std::string& from,
                           uint64_t now_unix, std::vector<uint8_t>& reply);
  DropReason remember_token(std::span<const uint8_t, 16> mac, const std::string& from,
                            uint64_t expire_time, uint64_t now_unix);
  DropReason accept_challenge_once(uint64_t sequence, uint64_t expire_time, uint64_t now_unix);

  TokenKey key_;
  std::vector<std::string> addresses_;  // a token must name one of them
  std::array<uint8_t, 32> challenge_key_{};
  // Starts at 1: FlatBuffers leaves a field at its default (0) out, which would make the
  // first response a different size from every other.
  uint64_t challenge_sequence_ = 1;
  std::vector<UsedToken> used_;  // bounded by kMaxUsedTokens
  // Accepted challenge sequence -> its token's expiry. When full, the lowest sequence is
  // forgotten and every sequence up to it is refused from then on (refuse_through_), so
  // forgetting never lets a challenge in twice.
  std::map<uint64_t, uint64_t> accepted_;
  uint64_t refuse_through_ = 0;
  DropCounters drops_;
};

/// Client side: the padded request for a token.
std::vector<uint8_t> build_connection_request(const ConnectToken& token);
/// Client side: opens a challenge with the token's server-to-client key (`keys.receive`,
/// client_keys()) and builds the response to send back. A challenge not sealed with that
/// key is AuthFailed: nobody but the server the token was minted for can make the client
/// answer.
DropReason answer_challenge(std::span<const uint8_t> datagram, const ConnectionKeys& keys,
                            std::vector<uint8_t>& response);
/// Server side: a ConnectionDeny sealed with the session's server-to-client key (the
/// server's AcceptedClient::keys.send). Small: safe to send in reply to any response.
std::vector<uint8_t> build_deny(fb::DenyReason reason, const std::array<uint8_t, 32>& server_to_client_key);
/// Client side: opens a deny with `keys.receive`; None, with `reason`, only for a deny the
/// server sealed for this token (anything else, e.g. AuthFailed, is to be dropped).
DropReason read_deny(std::span<const uint8_t> datagram, const ConnectionKeys& keys, fb::DenyReason& reason);
/// Opens a server-to-client handshake datagram (ConnectionChallenge or ConnectionDeny),
/// sealed with `key`, and checks its message as read_handshake does.
DropReason open_server_handshake(std::span<const uint8_t> datagram, const std::array<uint8_t, 32>& key,
                                 PacketType& type, const fb::Message*& message,
                                 std::vector<uint8_t>& storage);
/// Reads a client-to-server handshake datagram (ConnectionRequest, ConnectionResponse):
/// header type, length prefix, then check_message(); the server's sealed types are
/// TypeNotAllowed here (open_server_handshake reads them).
/// The message starts at an odd offset in the datagram and FlatBuffers reads its fields
/// in place, so it is first copied into `storage` (whose allocation is suitably aligned);
/// on None, `message` points into `storage`.
DropReason read_handshake(std::span<const uint8_t> datagram, PacketType& type,
                          const fb::Message*& message, std::vector<uint8_t>& storage);

/// The client's keys for its Connection (send = client-to-server).
ConnectionKeys client_keys(const ConnectToken& token);

}  // namespace keel::protocol
