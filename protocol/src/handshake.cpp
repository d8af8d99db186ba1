#include <keel/protocol/handshake.h>

#include "connection/packet_aead.h"
#include "handshake_datagram.h"

#include <keel/base/byte_io.h>

#include <algorithm>

namespace keel::protocol {

std::vector<uint8_t> detail::handshake_datagram(PacketType type, const std::vector<uint8_t>& message,
                                                size_t pad_to) {
  std::vector<uint8_t> d(kPacketHeaderBytes);
  PacketHeader h;
  h.type = type;
  write_header(h, std::span<uint8_t, kPacketHeaderBytes>(d.data(), kPacketHeaderBytes));
  keel::ByteWriter w(d);
  w.u16(static_cast<uint16_t>(message.size()));
  w.bytes(message);
  if (d.size() < pad_to) d.resize(pad_to, 0);
  return d;
}

std::array<uint8_t, 12> detail::sealed_handshake_nonce(PacketType type, const uint8_t* tail) {
  std::array<uint8_t, 12> n{'K', 'H', static_cast<uint8_t>(type), 0};
  std::copy(tail, tail + kSealedNonceTailBytes, n.begin() + 4);
  return n;
}

namespace {

bool is_sealed_type(PacketType t) {
  return t == PacketType::ConnectionChallenge || t == PacketType::ConnectionDeny;
}

// The message a handshake datagram carries, checked: the Verifier passed and its body is
// the one the packet type names.
DropReason check_handshake_message(PacketType type, const fb::Message*& message,
                                   std::vector<uint8_t>& storage) {
  DropReason r = check_message(storage, message);
  if (r != DropReason::None) return r;
  fb::Body expect = type == PacketType::ConnectionRequest     ? fb::Body::ConnectionRequest
                    : type == PacketType::ConnectionChallenge ? fb::Body::ConnectionChallenge
                    : type == PacketType::ConnectionResponse  ? fb::Body::ConnectionResponse
                                                              : fb::Body::ConnectionDeny;
  return message->body_type() == expect ? DropReason::None : DropReason::TypeNotAllowed;
}

}  // namespace

DropReason read_handshake(std::span<const uint8_t> datagram, PacketType& type,
                          const fb::Message*& message, std::vector<uint8_t>& storage) {
  PacketHeader h;
  DropReason r = read_header(datagram, h);
  if (r != DropReason::None) return r;
  if (h.type == PacketType::Connected) return DropReason::TypeNotAllowed;
  // The server's datagrams are sealed: open_server_handshake reads them.
  if (is_sealed_type(h.type)) return DropReason::TypeNotAllowed;
  type = h.type;
  keel::ByteReader br(datagram.subspan(kPacketHeaderBytes));
  uint16_t len = br.u16();
  auto body = br.bytes(len);
  if (!br.ok()) return DropReason::MalformedPayload;
  // Reading the message where it lies (offset 15) would be misaligned loads.
  storage.assign(body.begin(), body.end());
  return check_handshake_message(type, message, storage);
}

DropReason open_server_handshake(std::span<const uint8_t> datagram, const std::array<uint8_t, 32>& key,
                                 PacketType& type, const fb::Message*& message,
                                 std::vector<uint8_t>& storage) {
  PacketHeader h;
  DropReason r = read_header(datagram, h);
  if (r != DropReason::None) return r;
  if (!is_sealed_type(h.type)) return DropReason::TypeNotAllowed;
  type = h.type;
  if (datagram.size() < detail::kSealedPrefixBytes + 2) return DropReason::TooSmall;
  keel::ByteReader br(datagram.subspan(detail::kSealedPrefixBytes));
  uint16_t len = br.u16();
  auto sealed = br.bytes(len);
  if (!br.ok() || len < kAuthTagBytes) return DropReason::MalformedPayload;
  if (!connection::aead::init()) return DropReason::AuthFailed;
  auto nonce = detail::sealed_handshake_nonce(h.type, datagram.data() + kPacketHeaderBytes);
  storage.resize(len - kAuthTagBytes);
  if (!connection::aead::open(storage.data(), sealed.data(), sealed.size(), datagram.data(),
                              detail::kSealedPrefixBytes, nonce.data(), key.data())) {
    return DropReason::AuthFailed;
  }
  return check_handshake_message(type, message, storage);
}

size_t connection_response_bytes() {
  // Built once the way answer_challenge builds one: the sizes of every field are fixed
  // (version and sequence non-zero, the sealed challenge detail::kChallengePlainBytes + tag).
  static const size_t bytes = [] {
    std::vector<uint8_t> echo(detail::kChallengePlainBytes + kAuthTagBytes);
    flatbuffers::FlatBufferBuilder fbb(512);
    auto body = fb::CreateConnectionResponseDirect(fbb, kProtocolVersion, 1, &echo);
    return detail::handshake_datagram(PacketType::ConnectionResponse,
                              finish_message(fbb, fb::Body::ConnectionResponse, body.Union()), 0)
        .size();
  }();
  return bytes;
}

DropReason check_handshake_shape(std::span<const uint8_t> datagram) {
  PacketHeader h;
  DropReason r = read_header(datagram, h);
  if (r != DropReason::None) return r;
  if (h.type == PacketType::ConnectionRequest) {
    if (datagram.size() < kMinRequestBytes) return DropReason::TooSmall;
  } else if (h.type == PacketType::ConnectionResponse) {
    if (datagram.size() < connection_response_bytes()) return DropReason::TooSmall;
    if (datagram.size() > connection_response_bytes()) return DropReason::TooLarge;
  } else {
    return DropReason::TypeNotAllowed;
  }
  PacketType type{};
  const fb::Message* m = nullptr;
  std::vector<uint8_t> storage;
  return read_handshake(datagram, type, m, storage);
}

std::vector<uint8_t> build_connection_request(const ConnectToken& token) {
  flatbuffers::FlatBufferBuilder fbb(1200);
  std::vector<uint8_t> nonce(token.nonce.begin(), token.nonce.end());
  auto body = fb::CreateConnectionRequestDirect(fbb, kProtocolVersion, token.expire_time, &nonce,
                                                &token.private_data);
  return detail::handshake_datagram(PacketType::ConnectionRequest,
                            finish_message(fbb, fb::Body::ConnectionRequest, body.Union()),
                            kMinRequestBytes);
}

DropReason answer_challenge(std::span<const uint8_t> datagram, const ConnectionKeys& keys,
                            std::vector<uint8_t>& response) {
  PacketType type{};
  const fb::Message* m = nullptr;
  std::vector<uint8_t> storage;
  DropReason r = open_server_handshake(datagram, keys.receive, type, m, storage);
  if (r != DropReason::None) return r;
  if (type != PacketType::ConnectionChallenge) return DropReason::TypeNotAllowed;
  const auto* c = m->body_as_ConnectionChallenge();
  std::vector<uint8_t> echo;
  if (c->challenge() != nullptr) echo.assign(c->challenge()->begin(), c->challenge()->end());
  flatbuffers::FlatBufferBuilder fbb(512);
  auto body = fb::CreateConnectionResponseDirect(fbb, kProtocolVersion, c->challenge_sequence(),
                                                 &echo);
  response = detail::handshake_datagram(PacketType::ConnectionResponse,
                                finish_message(fbb, fb::Body::ConnectionResponse, body.Union()), 0);
  return DropReason::None;
}

DropReason read_deny(std::span<const uint8_t> datagram, const ConnectionKeys& keys, fb::DenyReason& reason) {
  PacketType type{};
  const fb::Message* m = nullptr;
  std::vector<uint8_t> storage;
  DropReason r = open_server_handshake(datagram, keys.receive, type, m, storage);
  if (r != DropReason::None) return r;
  if (type != PacketType::ConnectionDeny) return DropReason::TypeNotAllowed;
  reason = m->body_as_ConnectionDeny()->reason();
  return DropReason::None;
}

ConnectionKeys client_keys(const ConnectToken& token) {
  ConnectionKeys k;
  k.send = token.client_to_server_key;
  k.receive = token.server_to_client_key;
  return k;
}

}  // namespace keel::protocol
