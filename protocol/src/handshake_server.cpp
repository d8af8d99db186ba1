// The server's half of the handshake (ServerHandshake, keel/protocol/handshake.h): the
// sealed challenge, the used-token and accepted-challenge memories. libsodium seals the
// challenge; a client-only build leaves this file out (handshake_datagram.h).
#include <keel/protocol/handshake.h>

#include "handshake_datagram.h"

#include <keel/base/byte_io.h>

#include <sodium.h>

#include <algorithm>

namespace keel::protocol {
namespace {

using detail::handshake_datagram;
using detail::kChallengePlainBytes;

constexpr size_t kMaxUsedTokens = 65536;
constexpr size_t kMacBytes = 16;
// The address's length byte also carries the token's role in its top bit (an address is
// at most kMaxAddressBytes = 63 long), so the challenge, and the response that echoes it,
// keep their size.
constexpr uint8_t kRoleBit = 0x80;
static_assert(kMaxAddressBytes < kRoleBit);

std::array<uint8_t, crypto_aead_chacha20poly1305_IETF_NPUBBYTES> challenge_nonce(uint64_t seq) {
  std::array<uint8_t, crypto_aead_chacha20poly1305_IETF_NPUBBYTES> n{};
  for (int i = 0; i < 8; ++i) n[i] = static_cast<uint8_t>(seq >> (8 * i));
  return n;
}

// What a challenge carries (sealed under the server's own key), as the server reads it
// back from the client's response.
struct ChallengeFields {
  uint64_t client_id = 0;
  uint64_t match_id = 0;
  uint32_t timeout_seconds = 0;
  std::array<uint8_t, 32> client_to_server_key{};
  std::array<uint8_t, 32> server_to_client_key{};
  std::array<uint8_t, kUserDataBytes> user_data{};
  uint64_t expire = 0;
  bool spectator = false;
  std::string address;
};

// One field list over the direction (keel/base/byte_io.h). The address's length byte
// carries the spectator bit (kRoleBit) above the length, which kMaxAddressBytes keeps
// below it.
template <class IO, class C>
void visit_challenge(IO& io, C& c) {
  io.u64(c.client_id);
  io.u64(c.match_id);
  io.u32(c.timeout_seconds);
  io.bytes(c.client_to_server_key);
  io.bytes(c.server_to_client_key);
  io.bytes(c.user_data);
  io.u64(c.expire);
  uint8_t length_and_role = static_cast<uint8_t>(std::min(c.address.size(), kMaxAddressBytes)) | (c.spectator ? kRoleBit : 0);
  io.u8(length_and_role);
  const size_t length = length_and_role & ~kRoleBit;
  if constexpr (IO::kReading) {
    c.spectator = (length_and_role & kRoleBit) != 0;
    if (io.reader().left() < length) {
      io.fail("challenge address past the end");
      return;
    }
    c.address.resize(length);
  }
  io.bytes(c.address.data(), length);
}

// A sealed server-to-client handshake datagram (handshake_datagram.h): the header, a
// random nonce tail, then the message sealed with the token's server-to-client key.
std::vector<uint8_t> seal_server_handshake(PacketType type, const std::vector<uint8_t>& message,
                                           const std::array<uint8_t, 32>& key) {
  std::vector<uint8_t> d(detail::kSealedPrefixBytes);
  PacketHeader h;
  h.type = type;
  write_header(h, std::span<uint8_t, kPacketHeaderBytes>(d.data(), kPacketHeaderBytes));
  randombytes_buf(d.data() + kPacketHeaderBytes, detail::kSealedNonceTailBytes);
  const size_t sealed_len = message.size() + crypto_aead_chacha20poly1305_IETF_ABYTES;
  keel::ByteWriter w(d);
  w.u16(static_cast<uint16_t>(sealed_len));
  const size_t at = d.size();
  d.resize(at + sealed_len);
  auto nonce = detail::sealed_handshake_nonce(type, d.data() + kPacketHeaderBytes);
  unsigned long long clen = 0;
  crypto_aead_chacha20poly1305_ietf_encrypt(d.data() + at, &clen, message.data(), message.size(),
                                            d.data(), detail::kSealedPrefixBytes, nullptr,
                                            nonce.data(), key.data());
  return d;
}

std::vector<uint8_t> challenge_plaintext(const PrivateToken& t, uint64_t expire,
                                         const std::string& from) {
  const ChallengeFields c{t.client_id, t.match_id, t.timeout_seconds, t.client_to_server_key,
                          t.server_to_client_key, t.user_data, expire, t.role == ClientRole::Spectator, from};
  std::vector<uint8_t> p(kChallengePlainBytes, 0);  // fixed size: zero padding after the fields
  keel::SpanWriter w(p);
  visit_challenge(w, c);
  if (!w.ok()) std::abort();  // the fields are bounded well below kChallengePlainBytes
  return p;
}

}  // namespace

ServerHandshake::ServerHandshake(const TokenKey& key, std::string server_address)
    : key_(key) {
  if (sodium_init() < 0) std::abort();
  crypto_aead_chacha20poly1305_ietf_keygen(challenge_key_.data());
  accept_address(std::move(server_address));
}

bool ServerHandshake::accept_address(std::string server_address) {
  if (server_address.empty() || addresses_.size() >= kMaxServerAddresses) return false;
  if (std::find(addresses_.begin(), addresses_.end(), server_address) == addresses_.end()) {
    addresses_.push_back(std::move(server_address));
  }
  return true;
}

DropReason ServerHandshake::on_request(std::span<const uint8_t> datagram, const std::string& from,
                                       uint64_t now_unix, std::vector<uint8_t>& reply) {
  reply.clear();
  DropReason r = check_request(datagram, from, now_unix, reply);
  drops_.add(r);
  if (r != DropReason::None) reply.clear();
  return r;
}

DropReason ServerHandshake::check_request(std::span<const uint8_t> datagram,
                                          const std::string& from, uint64_t now_unix,
                                          std::vector<uint8_t>& reply) {
  if (datagram.size() < kMinRequestBytes) return DropReason::TooSmall;
  PacketType type{};
  const fb::Message* m = nullptr;
  std::vector<uint8_t> storage;
  DropReason r = read_handshake(datagram, type, m, storage);
  if (r != DropReason::None) return r;
  if (type != PacketType::ConnectionRequest) return DropReason::TypeNotAllowed;
  const auto* req = m->body_as_ConnectionRequest();
  if (req->token_expiry() <= now_unix) return DropReason::TokenExpired;
  if (req->token() == nullptr) return DropReason::TokenInvalid;
  std::span<const uint8_t> priv(req->token()->data(), req->token()->size());
  std::span<const uint8_t, kTokenNonceBytes> nonce(req->token_nonce()->data(), kTokenNonceBytes);
  PrivateToken token;
  r = open_private_token(key_, priv, nonce, req->token_expiry(), token);
  if (r != DropReason::None) return r;
  auto named = [&](const std::string& a) {
    return std::find(token.server_addresses.begin(), token.server_addresses.end(), a) !=
           token.server_addresses.end();
  };
  if (std::none_of(addresses_.begin(), addresses_.end(), named)) {
    return DropReason::TokenWrongAddress;
  }
  r = remember_token(priv.last<kMacBytes>(), from, req->token_expiry(), now_unix);
  if (r != DropReason::None) return r;

  auto plain = challenge_plaintext(token, req->token_expiry(), from);
  std::vector<uint8_t> sealed(plain.size() + crypto_aead_chacha20poly1305_IETF_ABYTES);
  uint64_t seq = challenge_sequence_++;
  auto n = challenge_nonce(seq);
  unsigned long long clen = 0;
  crypto_aead_chacha20poly1305_ietf_encrypt(sealed.data(), &clen, plain.data(), plain.size(),
                                            nullptr, 0, nullptr, n.data(), challenge_key_.data());
  sodium_memzero(plain.data(), plain.size());
  flatbuffers::FlatBufferBuilder fbb(512);
  auto body = fb::CreateConnectionChallengeDirect(fbb, kProtocolVersion, seq, &sealed);
  reply = seal_server_handshake(PacketType::ConnectionChallenge,
                                finish_message(fbb, fb::Body::ConnectionChallenge, body.Union()),
                                token.server_to_client_key);
  return DropReason::None;
}

DropReason ServerHandshake::remember_token(std::span<const uint8_t, 16> mac,
                                           const std::string& from, uint64_t expire_time,
                                           uint64_t now_unix) {
  std::erase_if(used_, [&](const UsedToken& u) { return u.expire_time <= now_unix; });
  for (const auto& u : used_) {
    if (std::equal(u.mac.begin(), u.mac.end(), mac.begin())) {
      // The same token from the same address is a resend (the challenge was lost).
      return u.address == from ? DropReason::None : DropReason::TokenInUse;
    }
  }
  if (used_.size() >= kMaxUsedTokens) {
    // Full of live tokens: forget the one that expires first rather than refuse everyone.
    auto it = std::min_element(used_.begin(), used_.end(), [](const auto& a, const auto& b) {
      return a.expire_time < b.expire_time;
    });
    used_.erase(it);
  }
  UsedToken u;
  std::copy(mac.begin(), mac.end(), u.mac.begin());
  u.address = from;
  u.expire_time = expire_time;
  used_.push_back(std::move(u));
  return DropReason::None;
}

DropReason ServerHandshake::on_response(std::span<const uint8_t> datagram, const std::string& from,
                                        uint64_t now_unix, AcceptedClient& out) {
  PacketType type{};
  const fb::Message* m = nullptr;
  std::vector<uint8_t> storage;
  DropReason r = read_handshake(datagram, type, m, storage);
  if (r == DropReason::None && type != PacketType::ConnectionResponse) r = DropReason::TypeNotAllowed;
  std::vector<uint8_t> plain(kChallengePlainBytes);
  if (r == DropReason::None) {
    const auto* resp = m->body_as_ConnectionResponse();
    auto n = challenge_nonce(resp->challenge_sequence());
    unsigned long long plen = 0;
    const auto* c = resp->challenge();
    if (c == nullptr || c->size() != plain.size() + crypto_aead_chacha20poly1305_IETF_ABYTES ||
        crypto_aead_chacha20poly1305_ietf_decrypt(plain.data(), &plen, nullptr, c->data(),
                                                  c->size(), nullptr, 0, n.data(),
                                                  challenge_key_.data()) != 0) {
      r = DropReason::ChallengeInvalid;
    }
  }
  if (r == DropReason::None) {
    keel::ByteReader br(plain);
    keel::FieldReader io(br);
    ChallengeFields c;
    visit_challenge(io, c);
    out = AcceptedClient{};
    out.client_id = c.client_id;
    out.match_id = c.match_id;
    out.timeout_seconds = c.timeout_seconds;
    out.keys.receive = c.client_to_server_key;
    out.keys.send = c.server_to_client_key;
    out.user_data = c.user_data;
    out.role = c.spectator ? ClientRole::Spectator : ClientRole::Player;
    out.address = std::move(c.address);
    const uint64_t expire = c.expire;
    if (!br.ok() || out.address != from) {
      r = DropReason::ChallengeInvalid;
    } else if (expire <= now_unix) {
      r = DropReason::TokenExpired;
    } else {
      r = accept_challenge_once(m->body_as_ConnectionResponse()->challenge_sequence(), expire, now_unix);
    }
    out.challenge_sequence = m->body_as_ConnectionResponse()->challenge_sequence();
    out.issued_through = challenge_sequence_ - 1;
  }
  sodium_memzero(plain.data(), plain.size());
  drops_.add(r);
  return r;
}

DropReason ServerHandshake::accept_challenge_once(uint64_t sequence, uint64_t expire_time,
                                                  uint64_t now_unix) {
  if (sequence <= refuse_through_ || accepted_.count(sequence) != 0) return DropReason::ChallengeReused;
  if (accepted_.size() >= kMaxAcceptedChallenges) {
    // An expired one can go: its token's expiry, inside the challenge, refuses it anyway.
    std::erase_if(accepted_, [&](const auto& a) { return a.second <= now_unix; });
  }
  while (accepted_.size() >= kMaxAcceptedChallenges) {
    refuse_through_ = std::max(refuse_through_, accepted_.begin()->first);
    accepted_.erase(accepted_.begin());
  }
  accepted_.emplace(sequence, expire_time);
  return DropReason::None;
}

std::vector<uint8_t> build_deny(fb::DenyReason reason, const std::array<uint8_t, 32>& server_to_client_key) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = fb::CreateConnectionDeny(fbb, kProtocolVersion, reason);
  return seal_server_handshake(PacketType::ConnectionDeny,
                               finish_message(fbb, fb::Body::ConnectionDeny, body.Union()),
                               server_to_client_key);
}

}  // namespace keel::protocol
