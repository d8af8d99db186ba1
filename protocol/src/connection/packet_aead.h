// The AEAD that seals every connected packet (ChaCha20-Poly1305 IETF: 32-byte key, 12-byte
// nonce, 16-byte tag), behind the one seam packet_crypto.cpp calls:
//  - natively, libsodium, called inline (the same calls as before the seam existed);
//  - in the wasm32 client (client-sdk/web/), two functions the JavaScript around the
//    module provides (client-sdk/web/keel_web_imports.js: libsodium-wrappers'
//    crypto_aead_chacha20poly1305_ietf_encrypt and _decrypt), since Debian ships no
//    wasm32 libsodium.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__EMSCRIPTEN__)
extern "C" {
/// Writes mlen + 16 bytes to c; 0 on success.
int keel_web_aead_seal(uint8_t* c, const uint8_t* m, size_t mlen, const uint8_t* ad, size_t adlen,
                       const uint8_t* nonce, const uint8_t* key);
/// Writes clen - 16 bytes to m; 0 when authentic, else nonzero (m's contents undefined).
int keel_web_aead_open(uint8_t* m, const uint8_t* c, size_t clen, const uint8_t* ad, size_t adlen,
                       const uint8_t* nonce, const uint8_t* key);
}
#else
#include <sodium.h>
#endif

namespace keel::protocol::connection::aead {

inline constexpr size_t kNonceBytes = 12;

#if defined(__EMSCRIPTEN__)
inline bool init() { return true; }  // the page awaits libsodium-wrappers' `ready` before loading the module
inline void seal(uint8_t* c, const uint8_t* m, size_t mlen, const uint8_t* ad, size_t adlen, const uint8_t* nonce,
                 const uint8_t* key) {
  keel_web_aead_seal(c, m, mlen, ad, adlen, nonce, key);
}
inline bool open(uint8_t* m, const uint8_t* c, size_t clen, const uint8_t* ad, size_t adlen, const uint8_t* nonce,
                 const uint8_t* key) {
  return keel_web_aead_open(m, c, clen, ad, adlen, nonce, key) == 0;
}
#else
static_assert(kNonceBytes == crypto_aead_chacha20poly1305_IETF_NPUBBYTES);
inline bool init() { return sodium_init() >= 0; }
inline void seal(uint8_t* c, const uint8_t* m, size_t mlen, const uint8_t* ad, size_t adlen, const uint8_t* nonce,
                 const uint8_t* key) {
  unsigned long long clen = 0;
  crypto_aead_chacha20poly1305_ietf_encrypt(c, &clen, m, mlen, ad, adlen, nullptr, nonce, key);
}
inline bool open(uint8_t* m, const uint8_t* c, size_t clen, const uint8_t* ad, size_t adlen, const uint8_t* nonce,
                 const uint8_t* key) {
  unsigned long long mlen = 0;
  return crypto_aead_chacha20poly1305_ietf_decrypt(m, &mlen, nullptr, c, clen, ad, adlen, nonce, key) == 0;
}
#endif

}  // namespace keel::protocol::connection::aead
