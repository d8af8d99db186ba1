// The connect token's fields as token.cpp and token_crypto.cpp both read and write them.
#pragma once

#include <keel/protocol/address.h>
#include <keel/protocol/token.h>

#include <keel/base/byte_io.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace keel::protocol::detail {

inline bool valid_addresses(const std::vector<std::string>& addresses) {
  if (addresses.empty() || addresses.size() > kMaxTokenAddresses) return false;
  for (const auto& a : addresses) {
    if (a.empty() || a.size() > kMaxAddressBytes) return false;
    // A server compares the addresses byte for byte with the ones it answers to, which it
    // writes as parse_host_port reads them: a token naming anything else admits no one.
    auto hp = parse_host_port(a);
    if (!hp || hp->port == 0) return false;
  }
  return true;
}

inline void write_addresses(keel::ByteWriter& w, const std::vector<std::string>& addresses) {
  w.u8(static_cast<uint8_t>(addresses.size()));
  for (const auto& a : addresses) {
    w.u8(static_cast<uint8_t>(a.size()));
    w.bytes({reinterpret_cast<const uint8_t*>(a.data()), a.size()});
  }
}

inline bool read_addresses(keel::ByteReader& r, std::vector<std::string>& out) {
  uint8_t n = r.u8();
  if (n == 0 || n > kMaxTokenAddresses) return false;
  for (uint8_t i = 0; i < n && r.ok(); ++i) {
    uint8_t len = r.u8();
    if (len == 0 || len > kMaxAddressBytes) return false;
    auto b = r.bytes(len);
    out.emplace_back(b.begin(), b.end());
  }
  return r.ok();
}

template <size_t N>
inline void read_array(keel::ByteReader& r, std::array<uint8_t, N>& out) {
  auto b = r.bytes(N);
  if (r.ok()) std::copy(b.begin(), b.end(), out.begin());
}

}  // namespace keel::protocol::detail
