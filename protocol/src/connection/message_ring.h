// Message buffers that are reused instead of allocated one per message: a small pool of
// spare buffers (last in, first out, so steady traffic keeps coming back to the same few
// warm ones) and a fixed-capacity ring of messages whose slots draw from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace keel::protocol::connection {

/// Spare buffers, bounded in count and in the bytes they keep: a peer that once sent
/// large messages leaves no more than the bound behind.
class BufferPool {
 public:
  BufferPool(size_t max_bytes, size_t max_buffers) : max_bytes_(max_bytes), max_buffers_(max_buffers) {
    spare_.reserve(max_buffers);
  }
  /// An empty buffer, with the memory of one given back when there is one.
  std::vector<uint8_t> take() {
    if (spare_.empty()) return {};
    std::vector<uint8_t> b = std::move(spare_.back());
    spare_.pop_back();
    kept_ -= b.capacity();
    return b;
  }
  /// `buffer` is done with; it is left empty.
  void give(std::vector<uint8_t>& buffer) {
    if (buffer.capacity() != 0 && spare_.size() < max_buffers_ && kept_ + buffer.capacity() <= max_bytes_) {
      buffer.clear();
      kept_ += buffer.capacity();
      spare_.push_back(std::move(buffer));
    }
    std::vector<uint8_t>().swap(buffer);
  }
  size_t kept_bytes() const { return kept_; }

 private:
  size_t max_bytes_, max_buffers_;
  size_t kept_ = 0;
  std::vector<std::vector<uint8_t>> spare_;
};

/// Messages first in, first out, at most `capacity` at once.
class MessageRing {
 public:
  explicit MessageRing(size_t capacity = 1) : slots_(capacity == 0 ? 1 : capacity) {}

  size_t size() const { return count_; }
  bool full() const { return count_ == slots_.size(); }
  bool empty() const { return count_ == 0; }

  /// The slot the next message goes into (an empty buffer from `pool`); push() makes it
  /// part of the ring. Only when not full.
  std::vector<uint8_t>& back_slot(BufferPool& pool) {
    std::vector<uint8_t>& s = slots_[(head_ + count_) % slots_.size()];
    s = pool.take();
    return s;
  }
  void push() { ++count_; }
  /// Appends a message whose buffer it takes over (only when not full).
  void push(std::vector<uint8_t>&& message) {
    slots_[(head_ + count_) % slots_.size()] = std::move(message);
    ++count_;
  }
  std::vector<uint8_t>& front() { return slots_[head_]; }
  /// Drops the front message; its buffer goes back to `pool`.
  void pop(BufferPool& pool) {
    pool.give(slots_[head_]);
    head_ = (head_ + 1) % slots_.size();
    --count_;
  }

 private:
  std::vector<std::vector<uint8_t>> slots_;
  size_t head_ = 0;
  size_t count_ = 0;
};

/// Slots addressed by their distance from a moving base (a window of sequence ids).
template <class T>
class Window {
 public:
  explicit Window(size_t capacity = 1) : slots_(capacity == 0 ? 1 : capacity) {}
  /// The slot `ahead` places past the base (ahead < capacity).
  T& at(size_t ahead) { return slots_[(base_ + ahead) % slots_.size()]; }
  T& base() { return slots_[base_]; }
  /// Moves the base one place on; the old base slot becomes the last.
  void advance() { base_ = (base_ + 1) % slots_.size(); }

 private:
  std::vector<T> slots_;
  size_t base_ = 0;
};

}  // namespace keel::protocol::connection
