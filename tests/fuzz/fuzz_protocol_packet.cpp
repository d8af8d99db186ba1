// libFuzzer: one datagram into every first-touch parser of the packet layer — header,
// handshake framing + FlatBuffers checks, and a connection with and without keys.
// Nothing may crash, hang or leak; ASan/UBSan watch. scripts/fuzz.sh runs it.
#include <keel/protocol/connection.h>
#include <keel/protocol/handshake.h>

#include <cstddef>
#include <cstdint>

namespace kp = keel::protocol;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  kp::PacketHeader header;
  kp::read_header(bytes, header);
  kp::PacketType type{};
  const kp::fb::Message* message = nullptr;
  std::vector<uint8_t> storage;
  kp::read_handshake(bytes, type, message, storage);
  if (size > kp::kPacketHeaderBytes) {
    // check_message wants an aligned start, as every receiver gives it (a copy).
    storage.assign(bytes.begin() + kp::kPacketHeaderBytes, bytes.end());
    kp::check_message(storage, message);
  }

  static kp::Connection plain;  // kept across inputs: state built up by earlier inputs too
  plain.receive(bytes, 1.0);
  while (plain.take(kp::Channel::Control)) {
  }
  while (plain.take(kp::Channel::Snapshot)) {
  }
  plain.update(1.0);

  kp::Connection keyed;
  keyed.set_keys({});
  keyed.receive(bytes, 0.0);
  return 0;
}
