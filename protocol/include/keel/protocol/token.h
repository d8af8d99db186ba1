// Connect tokens: how a dedicated server admits only clients a backend vouched for.
//
// A backend holding the 32-byte token key mints a ConnectToken for one client of one
// match. Its private part — client id, match id, the server addresses it is valid for,
// the per-connection keys, user data — is encrypted and authenticated with
// XChaCha20-Poly1305 under the token key, with the protocol id, version and expiry as
// additional data, so the client carries it without being able to read or alter it.
// The public part tells the client where to connect and which keys to use. The server
// (handshake.h) decrypts and checks it. docs/security.md describes the model.
#pragma once

#include <keel/protocol/connection.h>
#include <keel/base/expected.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace keel::protocol {

using TokenKey = std::array<uint8_t, 32>;

inline constexpr size_t kTokenNonceBytes = 24;
/// Size of the encrypted private part (tag included), fixed so its length reveals nothing.
inline constexpr size_t kPrivateTokenBytes = 1024;
inline constexpr size_t kMaxTokenAddresses = 8;
inline constexpr size_t kMaxAddressBytes = 63;
inline constexpr size_t kUserDataBytes = 256;

/// What a token admits its holder as. A player takes a player slot of the match (the game
/// hears it join and leave, its inputs are applied); a spectator is sent the match like any
/// client but has no slot, and anything it sends as input is dropped. Only the backend that
/// mints the token chooses, so a spectator cannot make itself a player.
enum class ClientRole : uint8_t { Player = 0, Spectator = 1 };

/// What the private part holds (the server reads it; the client cannot).
struct PrivateToken {
  uint64_t client_id = 0;
  uint64_t match_id = 0;
  uint32_t timeout_seconds = 10;  ///< connection time-out the server applies
  std::vector<std::string> server_addresses;  ///< "host:port", 1 .. kMaxTokenAddresses
  std::array<uint8_t, 32> client_to_server_key{};
  std::array<uint8_t, 32> server_to_client_key{};
  std::array<uint8_t, kUserDataBytes> user_data{};
  ClientRole role = ClientRole::Player;
};

/// What the backend hands the client.
struct ConnectToken {
  uint32_t protocol_version = kProtocolVersion;
  uint64_t create_time = 0;  ///< unix seconds
  uint64_t expire_time = 0;  ///< unix seconds
  std::array<uint8_t, kTokenNonceBytes> nonce{};
  std::vector<uint8_t> private_data;  ///< kPrivateTokenBytes, encrypted
  uint32_t timeout_seconds = 10;
  std::vector<std::string> server_addresses;
  std::array<uint8_t, 32> client_to_server_key{};
  std::array<uint8_t, 32> server_to_client_key{};
};

struct MintParams {
  uint64_t client_id = 0;
  uint64_t match_id = 0;
  std::vector<std::string> server_addresses;
  uint64_t ttl_seconds = 30;
  uint32_t timeout_seconds = 10;
  std::array<uint8_t, kUserDataBytes> user_data{};
  ClientRole role = ClientRole::Player;
};

/// A fresh random key (libsodium's CSPRNG).
TokenKey generate_token_key();
/// The well-known key of development mode: keel-server without --token-key and keel-bot
/// without --token-key both use it, so the whole token and encryption path runs as in
/// production, but anyone can mint tokens — a server using it binds loopback only.
TokenKey development_token_key();
/// Key files hold the key as 64 hex digits and a newline.
keel::Status save_token_key(const std::string& path, const TokenKey& key);
keel::Expected<TokenKey> load_token_key(const std::string& path);

/// Mints a token valid from `now_unix` for params.ttl_seconds. Fails on a bad address
/// list (none, too many, too long, or one that keel/protocol/address.h does not read as
/// HOST:PORT with a port of 1 to 65535).
keel::Expected<ConnectToken> mint_token(const TokenKey& key, const MintParams& params,
                                       uint64_t now_unix);

/// The token's wire/text form: a fixed binary layout, and that in base64 (URL-safe, no
/// padding) for command lines and HTTP.
std::vector<uint8_t> serialize_token(const ConnectToken& token);
keel::Expected<ConnectToken> parse_token(std::span<const uint8_t> bytes);
std::string token_to_base64(const ConnectToken& token);
keel::Expected<ConnectToken> token_from_base64(const std::string& text);

/// Decrypts and parses a private part. Fails (TokenInvalid) when tampered with, minted
/// under another key or version, or when the expiry given is not the one it was minted with.
DropReason open_private_token(const TokenKey& key, std::span<const uint8_t> private_data,
                              std::span<const uint8_t, kTokenNonceBytes> nonce,
                              uint64_t expire_time, PrivateToken& out);

}  // namespace keel::protocol
