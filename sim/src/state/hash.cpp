// The state hash (keel/sim/state_hash.h) computed from canonical bytes alone: what a
// recording, a desync dump or a test checks bytes with. It walks the bytes the way
// state/state.cpp wrote them, cuts them into the sections of state/hash_sections.h and
// combines their digests; state/world_hash.cpp computes the same value from a world.
//
// The bytes are untrusted: every count is checked against the bytes left, nothing is
// allocated beyond what the bytes could hold, and bytes that are not a state still hash
// (XXH3-64 of them all).
#include <keel/sim/state_hash.h>

#include <keel/sim/defs.h>

#include "state/hash_sections.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace keel::sim {

namespace {

using namespace hash_sections;

// A bounds-checked walk over the bytes: a sticky ok flag, no read past the end.
class Cursor {
 public:
  Cursor(std::span<const uint8_t> in, size_t at) : in_(in), at_(at) {}
  bool ok() const { return ok_; }
  size_t at() const { return at_; }
  size_t left() const { return in_.size() - at_; }
  bool skip(uint64_t n) {
    if (!ok_ || n > left()) return ok_ = false;
    at_ += size_t(n);
    return true;
  }
  uint32_t u32() {
    if (!ok_ || left() < 4) {
      ok_ = false;
      return 0;
    }
    const uint8_t* p = in_.data() + at_;
    at_ += 4;
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
  }
  uint8_t u8() {
    if (!ok_ || left() < 1) {
      ok_ = false;
      return 0;
    }
    return in_[at_++];
  }
  // The bytes from `from` to here.
  std::span<const uint8_t> since(size_t from) const { return in_.subspan(from, at_ - from); }

 private:
  std::span<const uint8_t> in_;
  size_t at_;
  bool ok_ = true;
};

// A count of items of at least `each` bytes that must fit in the bytes left.
bool fitting_count(Cursor& c, size_t each, uint32_t& n) {
  n = c.u32();
  return c.ok() && uint64_t(n) * each <= c.left();
}

// The digest of a slot from its bytes: moving ranges apart when it is live.
template <size_t MovingBytes>
uint64_t slot_from_bytes(std::span<const uint8_t> slot, bool alive, std::span<const Range> moving) {
  if (!alive) return little_endian(XXH3_64bits(slot.data(), slot.size()));
  uint8_t gathered[MovingBytes];
  gather_moving(slot, moving, gathered);
  return little_endian(slot_digest(fixed_digest(slot, moving), {gathered, MovingBytes}));
}

bool body_slots(Cursor& c, uint64_t& digest) {
  uint32_t n = 0;
  if (!fitting_count(c, 5, n)) return false;
  std::vector<uint64_t> digests;
  digests.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const size_t from = c.at();
    const bool alive = c.u8() != 0;
    c.skip(4);
    if (alive) {
      c.skip(kBodySlotFixedBytes - 5);
      uint32_t shapes = 0;
      if (fitting_count(c, 4, shapes)) c.skip(uint64_t(shapes) * 4);
    }
    if (!c.ok()) return false;
    digests.push_back(slot_from_bytes<kBodyMovingBytes>(c.since(from), alive, kBodyMoving));
  }
  digest = little_endian(list_digest(digests));
  return true;
}

// A collider's geometry data after its fields, by its type (state/state.cpp).
void skip_geometry(Cursor& c, uint8_t type) {
  uint32_t n = 0;
  if (type == uint8_t(ShapeType::Hull) && fitting_count(c, 12, n)) c.skip(uint64_t(n) * 12);
  if (type == uint8_t(ShapeType::Mesh)) {
    if (fitting_count(c, 12, n)) c.skip(uint64_t(n) * 12);
    if (fitting_count(c, 4, n)) c.skip(uint64_t(n) * 4);
  }
  if (type == uint8_t(ShapeType::Heightfield)) {
    const uint64_t rows = c.u32(), columns = c.u32();
    c.skip(4);
    const uint64_t samples = rows * columns;  // below 2^64; times 4 might not be
    if (samples > c.left() / 4) c.skip(c.left() + 1);  // more than the bytes hold: fails
    else c.skip(samples * 4);
  }
}

bool shape_slots(Cursor& c, std::span<const uint8_t> bytes, uint64_t& digest) {
  uint32_t n = 0;
  if (!fitting_count(c, 1, n)) return false;
  std::vector<uint64_t> digests;
  digests.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const size_t from = c.at();
    const bool alive = c.u8() != 0;
    if (alive && c.skip(kShapeSlotFixedBytes - 1)) skip_geometry(c, bytes[from + 5]);
    if (!c.ok()) return false;
    digests.push_back(slot_from_bytes<kShapeMovingBytes>(c.since(from), alive, kShapeMoving));
  }
  digest = little_endian(list_digest(digests));
  return true;
}

bool free_list(Cursor& c, uint64_t& digest) {
  const size_t from = c.at();
  uint32_t n = 0;
  if (!fitting_count(c, 4, n) || !c.skip(uint64_t(n) * 4)) return false;
  const auto list = c.since(from);
  digest = little_endian(XXH3_64bits(list.data(), list.size()));
  return true;
}

bool contacts(Cursor& c, uint64_t& pairs_digest, uint64_t& points_digest) {
  uint32_t n = 0;
  if (!fitting_count(c, 9, n)) return false;
  std::vector<uint64_t> pairs;
  pairs.reserve(n);
  std::vector<uint8_t> points;
  for (uint32_t i = 0; i < n; ++i) {
    const size_t from = c.at();
    const uint64_t a = c.u32(), b = c.u32();
    const uint8_t count = c.u8();
    if (count > 0) c.skip(uint64_t(count) * 20 + 1);  // the points and the sliding flag
    if (!c.ok()) return false;
    pairs.push_back(little_endian(a << 32 | b));
    if (count > 0) {
      const auto record = c.since(from);
      points.insert(points.end(), record.begin(), record.end());
    }
  }
  pairs_digest = little_endian(list_digest(pairs));
  points_digest = little_endian(XXH3_64bits(points.data(), points.size()));
  return true;
}

// The sections of a world whose bytes start at `world` (after its magic); false when the
// bytes from there do not walk as a state.
bool world_sections(std::span<const uint8_t> bytes, size_t world, uint64_t (&s)[kSectionCount]) {
  if (bytes.size() - world < kStateHeaderBytes) return false;
  Cursor c(bytes, world + kStateHeaderBytes);
  s[kHead] = little_endian(XXH3_64bits(bytes.data(), world + kStateHeaderBytes));
  if (!body_slots(c, s[kBodies]) || !free_list(c, s[kBodyFree])) return false;
  if (!shape_slots(c, bytes, s[kShapes]) || !free_list(c, s[kShapeFree])) return false;
  if (!contacts(c, s[kPairs], s[kPoints])) return false;
  s[kTail] = little_endian(XXH3_64bits(bytes.data() + c.at(), c.left()));
  return true;
}

}  // namespace

uint64_t state_hash(std::span<const uint8_t> bytes) {
  // The world begins at the first magic from which the bytes walk as a state: at 0 for a
  // world's bytes, after the match's own for a match's.
  const uint8_t* begin = bytes.data();
  const uint8_t* end = begin + bytes.size();
  for (const uint8_t* at = begin; bytes.size() >= sizeof kMagic; ++at) {
    at = std::search(at, end, std::begin(kMagic), std::end(kMagic));
    if (at == end) break;
    uint64_t sections[kSectionCount];
    if (world_sections(bytes, size_t(at - begin), sections)) return combine(sections);
  }
  return XXH3_64bits(bytes.data(), bytes.size());
}

}  // namespace keel::sim
