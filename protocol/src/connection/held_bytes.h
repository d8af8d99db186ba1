// The bytes one connection holds for its peer (partial and delivered messages, block
// fragments and their decompressed bytes), charged against the connection's own bound
// (max_held_bytes) and, when given, a MemoryBudget shared with other connections.
// Everything is charged before it is kept and released when it is let go.
#pragma once

#include <keel/protocol/connection.h>

#include <cstddef>

namespace keel::protocol::connection {

class HeldBytes {
 public:
  HeldBytes(size_t limit, MemoryBudget* shared) : limit_(limit), shared_(shared) {}
  ~HeldBytes() {
    if (shared_ != nullptr) shared_->release(bytes_);
  }
  HeldBytes(const HeldBytes&) = delete;
  HeldBytes& operator=(const HeldBytes&) = delete;

  /// Charges n bytes; false (nothing charged) when over either bound.
  bool hold(size_t n) {
    if (n > limit_ || bytes_ > limit_ - n) return false;
    if (shared_ != nullptr && !shared_->try_charge(n)) return false;
    bytes_ += n;
    return true;
  }
  void unhold(size_t n) {
    n = n < bytes_ ? n : bytes_;
    bytes_ -= n;
    if (shared_ != nullptr) shared_->release(n);
  }
  size_t bytes() const { return bytes_; }

 private:
  size_t limit_;
  MemoryBudget* shared_;
  size_t bytes_ = 0;
};

}  // namespace keel::protocol::connection
