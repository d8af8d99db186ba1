// The connect token's cryptography, with libsodium: token keys (made, saved, loaded), minting
// and opening the private part (XChaCha20-Poly1305), and the base64 text form. A
// client-only build (the wasm32 client, client-sdk/web/) leaves this file out.
#include <keel/protocol/token.h>

#include "token_fields.h"

#include <keel/base/byte_io.h>

#include <sodium.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace keel::protocol {

using namespace detail;

namespace {

constexpr size_t kTagBytes = crypto_aead_xchacha20poly1305_ietf_ABYTES;
constexpr size_t kPlainBytes = kPrivateTokenBytes - kTagBytes;

void ensure_sodium() {
  if (sodium_init() < 0) std::abort();  // no usable CSPRNG: nothing secure can follow
}

// Additional data: binds the ciphertext to this protocol, version and expiry, so the
// clear-text expiry beside it cannot be extended.
std::array<uint8_t, 16> additional_data(uint64_t expire_time) {
  std::vector<uint8_t> ad;
  keel::ByteWriter w(ad);
  w.u32(kProtocolId);
  w.u32(kProtocolVersion);
  w.u64(expire_time);
  std::array<uint8_t, 16> out{};
  std::copy(ad.begin(), ad.end(), out.begin());
  return out;
}

std::vector<uint8_t> private_plaintext(const PrivateToken& t) {
  std::vector<uint8_t> plain;
  keel::ByteWriter w(plain);
  visit_private_token(w, t);
  plain.resize(kPlainBytes, 0);  // fixed size: the length reveals nothing
  return plain;
}

}  // namespace

TokenKey generate_token_key() {
  ensure_sodium();
  TokenKey key;
  crypto_aead_xchacha20poly1305_ietf_keygen(key.data());
  return key;
}

keel::Status save_token_key(const std::string& path, const TokenKey& key) {
  std::array<char, 65> hex{};
  sodium_bin2hex(hex.data(), hex.size(), key.data(), key.size());
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return keel::Error{path + ": cannot open for writing"};
  f << hex.data() << "\n";
  f.close();
  if (!f) return keel::Error{path + ": write failed"};
  return {};
}

keel::Expected<TokenKey> load_token_key(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return keel::Error{path + ": cannot open key file"};
  std::string text;
  std::getline(f, text);
  TokenKey key{};
  size_t len = 0;
  const char* end = nullptr;
  if (text.size() != 64 ||
      sodium_hex2bin(key.data(), key.size(), text.data(), text.size(), nullptr, &len, &end) != 0 ||
      len != key.size()) {
    return keel::Error{path + ": not a key file (expected 64 hex digits; make one with "
                             "`keel-token keygen " + path + "`)"};
  }
  return key;
}

keel::Expected<ConnectToken> mint_token(const TokenKey& key, const MintParams& p,
                                       uint64_t now_unix) {
  ensure_sodium();
  if (!valid_addresses(p.server_addresses)) {
    return keel::Error{"a token needs 1 to 8 server addresses, each HOST:PORT or [IPV6]:PORT (port 1-65535) of at most 63 bytes"};
  }
  PrivateToken priv;
  priv.client_id = p.client_id;
  priv.match_id = p.match_id;
  priv.timeout_seconds = p.timeout_seconds;
  priv.server_addresses = p.server_addresses;
  crypto_aead_chacha20poly1305_ietf_keygen(priv.client_to_server_key.data());
  crypto_aead_chacha20poly1305_ietf_keygen(priv.server_to_client_key.data());
  priv.user_data = p.user_data;
  priv.role = p.role;

  ConnectToken t;
  t.create_time = now_unix;
  t.expire_time = now_unix + p.ttl_seconds;
  randombytes_buf(t.nonce.data(), t.nonce.size());
  auto plain = private_plaintext(priv);
  auto ad = additional_data(t.expire_time);
  t.private_data.resize(kPrivateTokenBytes);
  unsigned long long clen = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(t.private_data.data(), &clen, plain.data(),
                                             plain.size(), ad.data(), ad.size(), nullptr,
                                             t.nonce.data(), key.data());
  t.timeout_seconds = p.timeout_seconds;
  t.server_addresses = p.server_addresses;
  t.client_to_server_key = priv.client_to_server_key;
  t.server_to_client_key = priv.server_to_client_key;
  sodium_memzero(plain.data(), plain.size());
  return t;
}

DropReason open_private_token(const TokenKey& key, std::span<const uint8_t> private_data,
                              std::span<const uint8_t, kTokenNonceBytes> nonce,
                              uint64_t expire_time, PrivateToken& out) {
  ensure_sodium();
  if (private_data.size() != kPrivateTokenBytes) return DropReason::TokenInvalid;
  std::vector<uint8_t> plain(kPlainBytes);
  auto ad = additional_data(expire_time);
  unsigned long long plen = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(plain.data(), &plen, nullptr, private_data.data(),
                                                 private_data.size(), ad.data(), ad.size(),
                                                 nonce.data(), key.data()) != 0) {
    return DropReason::TokenInvalid;
  }
  // Authentic, so minted by a key holder; still parsed with the bounded reader.
  keel::ByteReader r(plain);
  keel::FieldReader io(r);
  out = PrivateToken{};
  const bool ok = visit_private_token(io, out);
  sodium_memzero(plain.data(), plain.size());
  if (!ok) return DropReason::TokenInvalid;
  return DropReason::None;
}

std::string token_to_base64(const ConnectToken& token) {
  ensure_sodium();
  auto bytes = serialize_token(token);
  constexpr int kVariant = sodium_base64_VARIANT_URLSAFE_NO_PADDING;
  std::string out(sodium_base64_encoded_len(bytes.size(), kVariant), '\0');
  sodium_bin2base64(out.data(), out.size(), bytes.data(), bytes.size(), kVariant);
  out.resize(out.size() - 1);  // the terminating NUL
  return out;
}

keel::Expected<ConnectToken> token_from_base64(const std::string& text) {
  ensure_sodium();
  if (text.size() > 4096) return keel::Error{"connect token: too long"};
  // Also keeps a null buffer (an empty vector's data()) away from libsodium's nonnull argument.
  if (text.empty()) return keel::Error{"connect token: empty"};
  std::vector<uint8_t> bytes(text.size());
  size_t len = 0;
  if (sodium_base642bin(bytes.data(), bytes.size(), text.data(), text.size(), " \n\r\t", &len,
                        nullptr, sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0) {
    return keel::Error{"connect token: not base64 (URL-safe, no padding)"};
  }
  bytes.resize(len);
  return parse_token(bytes);
}

}  // namespace keel::protocol
