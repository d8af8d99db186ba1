// The functions the wasm32 client imports (emscripten --js-library): the packet AEAD
// (protocol/src/connection/packet_aead.h) and the block decoder
// (protocol/src/connection/block_codec_web.cpp). They call the libraries the module's
// creator hands it (keel_web_client.mjs): Module.keelSodium, libsodium-wrappers after its
// `ready`, and Module.keelZstd, fzstd. Neither is ever asked to allocate in the module's
// memory; the views of HEAPU8 are taken inside each call, after any memory growth.
mergeInto(LibraryManager.library, {
  keel_web_aead_seal: function (c, m, mlen, ad, adlen, nonce, key) {
    var sodium = Module['keelSodium'];
    var sealed = sodium.crypto_aead_chacha20poly1305_ietf_encrypt(
      HEAPU8.subarray(m, m + mlen), HEAPU8.subarray(ad, ad + adlen), null,
      HEAPU8.subarray(nonce, nonce + 12), HEAPU8.subarray(key, key + 32));
    HEAPU8.set(sealed, c);
    return 0;
  },
  keel_web_aead_open: function (m, c, clen, ad, adlen, nonce, key) {
    var sodium = Module['keelSodium'];
    try {
      var plain = sodium.crypto_aead_chacha20poly1305_ietf_decrypt(
        null, HEAPU8.subarray(c, c + clen), HEAPU8.subarray(ad, ad + adlen),
        HEAPU8.subarray(nonce, nonce + 12), HEAPU8.subarray(key, key + 32));
      if (plain.length !== clen - 16) return 1;
      HEAPU8.set(plain, m);
      return 0;
    } catch (e) {
      return 1;  // not authentic (libsodium-wrappers throws)
    }
  },
  // One zstd frame, whole. Its header is read here first, so that fzstd is never asked to
  // allocate more than the block announced: the frame must declare its content size, equal
  // to content_bytes, and a window of at most 2^window_log.
  keel_web_zstd_decompress: function (src, srcBytes, dst, contentBytes, windowLog) {
    var frame = HEAPU8.subarray(src, src + srcBytes);
    if (srcBytes < 6 || frame[0] !== 0x28 || frame[1] !== 0xb5 || frame[2] !== 0x2f || frame[3] !== 0xfd) return -1;
    var descriptor = frame[4];
    var singleSegment = (descriptor >> 5) & 1;
    var sizeFlag = descriptor >> 6;
    var dictBytes = [0, 1, 2, 4][descriptor & 3];
    if (descriptor & 8) return -1;  // reserved bit
    var sizeBytes = sizeFlag ? (1 << sizeFlag) : singleSegment;
    if (sizeBytes === 0) return -1;  // no content size declared
    var at = 5 + (singleSegment ? 0 : 1) + dictBytes;
    if (srcBytes < at + sizeBytes) return -1;
    var declared = 0;
    for (var i = sizeBytes - 1; i >= 0; --i) declared = declared * 256 + frame[at + i];
    if (sizeBytes === 2) declared += 256;
    if (declared !== contentBytes) return -1;
    if (!singleSegment) {
      var w = frame[5];
      var base = Math.pow(2, 10 + (w >> 3));
      if (base + (base / 8) * (w & 7) > Math.pow(2, windowLog)) return -1;
    }
    try {
      var out = Module['keelZstd'].decompress(frame.slice());
      if (out.length !== contentBytes) return -1;
      HEAPU8.set(out, dst);
      return out.length;
    } catch (e) {
      return -1;
    }
  },
});
