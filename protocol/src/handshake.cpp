#include <keel/protocol/handshake.h>

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

DropReason read_handshake(std::span<const uint8_t> datagram, PacketType& type,
                          const fb::Message*& message, std::vector<uint8_t>& storage) {
  PacketHeader h;
  DropReason r = read_header(datagram, h);
  if (r != DropReason::None) return r;
  if (h.type == PacketType::Connected) return DropReason::TypeNotAllowed;
  type = h.type;
  keel::ByteReader br(datagram.subspan(kPacketHeaderBytes));
  uint16_t len = br.u16();
  auto body = br.bytes(len);
  if (!br.ok()) return DropReason::MalformedPayload;
  // Reading the message where it lies (offset 15) would be misaligned loads.
  storage.assign(body.begin(), body.end());
  r = check_message(storage, message);
  if (r != DropReason::None) return r;
  // The packet type and the message inside must agree.
  fb::Body expect = type == PacketType::ConnectionRequest     ? fb::Body::ConnectionRequest
                    : type == PacketType::ConnectionChallenge ? fb::Body::ConnectionChallenge
                    : type == PacketType::ConnectionResponse  ? fb::Body::ConnectionResponse
                                                              : fb::Body::ConnectionDeny;
  return message->body_type() == expect ? DropReason::None : DropReason::TypeNotAllowed;
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

DropReason answer_challenge(std::span<const uint8_t> datagram, std::vector<uint8_t>& response) {
  PacketType type{};
  const fb::Message* m = nullptr;
  std::vector<uint8_t> storage;
  DropReason r = read_handshake(datagram, type, m, storage);
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

std::vector<uint8_t> build_deny(fb::DenyReason reason) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = fb::CreateConnectionDeny(fbb, kProtocolVersion, reason);
  return detail::handshake_datagram(PacketType::ConnectionDeny,
                            finish_message(fbb, fb::Body::ConnectionDeny, body.Union()), 0);
}

ConnectionKeys client_keys(const ConnectToken& token) {
  ConnectionKeys k;
  k.send = token.client_to_server_key;
  k.receive = token.server_to_client_key;
  return k;
}

}  // namespace keel::protocol
