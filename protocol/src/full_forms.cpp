// FullForms: each body's full form written once a snapshot and copied by every client's
// sender that sends the body in full (keel/protocol/interest.h).
#include <keel/protocol/interest.h>

#include "body_bits.h"

namespace keel::protocol {

void FullForms::update(const QuantSnapshot& current, const SnapshotConfig& config) {
  // A new configuration or another set of bodies: every form is written again. Otherwise
  // only a body whose value differs from the one its form was written from (a world at
  // rest rewrites nothing).
  const bool same_bodies = config == config_ && previous_.size() == current.bodies.size() &&
                           std::equal(previous_.begin(), previous_.end(), current.bodies.begin(),
                                      [](const QuantBody& a, const QuantBody& b) { return a.id == b.id; });
  if (!same_bodies) {
    config_ = config;
    bits_ = body_bits::full_bits(config);
    stride_ = (bits_ + 63) / 64;
    previous_.clear();
    previous_.resize(current.bodies.size());
    words_.assign(current.bodies.size() * stride_, 0);
    for (size_t i = 0; i < current.bodies.size(); ++i) write_form(i, current.bodies[i]);
  } else {
    for (size_t i = 0; i < current.bodies.size(); ++i) {
      if (!(previous_[i] == current.bodies[i])) write_form(i, current.bodies[i]);
    }
  }
  tick_ = current.tick;
}

// The form as body_bits::write_full writes it, its bytes packed little-endian into words.
void FullForms::write_form(size_t i, const QuantBody& b) {
  previous_[i] = b;
  BitWriter w;
  w.reserve(stride_ * 8);
  body_bits::write_full(w, b, config_);
  const std::vector<uint8_t> bytes = w.finish();
  uint64_t* words = words_.data() + i * stride_;
  for (size_t k = 0; k < stride_; ++k) words[k] = 0;
  for (size_t k = 0; k < bytes.size(); ++k) words[k / 8] |= uint64_t{bytes[k]} << (8 * (k % 8));
}

}  // namespace keel::protocol
