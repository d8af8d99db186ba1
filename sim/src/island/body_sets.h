// The awake bodies and the sleeping islands, each in a set of its own (derived from the
// state, never saved): the stages that work on moving bodies walk the awake set, and a
// sleeping body costs them nothing, however many there are. The flags in Body (sleeping,
// island) stay the state, and the sets are exactly what those flags say:
//
//   awake:  every live body that is neither static nor asleep, in ascending slot order
//           (the order the whole-array walks it replaces took, so no result changes);
//   asleep: every sleeping body as (island id, slot), sorted, so an island's members are
//           one run and waking it reads only them.
//
// How they are kept. The sleep stage (island/sleep.cpp) is the only code that puts a body
// to sleep and wake_island (same file) the only code that wakes one; both tell the sets
// as they change the flags, and settle() applies those changes in one pass over the sets
// (a wake pass that wakes many islands sorts once, not once an island). Anything else that
// may change who is alive, static or asleep (adding or removing a body, a restore, any
// change through a non-const World) invalidates the sets, and the next step or wake
// rebuilds them from the flags (island/sleep.cpp, current_body_sets). Rebuilding is one
// pass over the bodies, which is what every step paid before the sets.
#pragma once

#include <algorithm>
#include <cassert>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace keel::sim {

class BodySets {
 public:
  /// A sleeping body and its island.
  struct Sleeper {
    uint32_t island = 0;
    uint32_t slot = 0;
    friend auto operator<=>(const Sleeper&, const Sleeper&) = default;  // island, then slot
  };

  bool valid() const { return valid_; }
  /// Something other than the sleep stage or a wake may have changed the flags.
  void invalidate() { valid_ = false; }

  /// A rebuild: reset(), then add each body (in any order), then finish_rebuild().
  void reset() {
    awake_.clear();
    asleep_.clear();
    woken_.clear();
    fallen_.clear();
  }
  void add_awake(uint32_t slot) { awake_.push_back(slot); }
  void add_asleep(uint32_t island, uint32_t slot) { asleep_.push_back({island, slot}); }
  void finish_rebuild() {
    std::sort(awake_.begin(), awake_.end());
    std::sort(asleep_.begin(), asleep_.end());
    valid_ = true;
  }

  /// The awake bodies in ascending slot order (read only when settled).
  std::span<const uint32_t> awake() const {
    assert(settled());
    return awake_;
  }
  /// Whether some body sleeps (when settled).
  bool any_asleep() const {
    assert(settled());
    return !asleep_.empty();
  }
  /// Every sleeper, by island then slot (when settled).
  std::span<const Sleeper> asleep() const {
    assert(settled());
    return asleep_;
  }
  /// The sleepers filed under `island`; members woken since the last settle() are still
  /// among them (the caller reads each one's flag).
  std::span<const Sleeper> island(uint32_t island) const {
    const Sleeper* begin = asleep_.data();
    const Sleeper* end = begin + asleep_.size();
    const Sleeper* first = std::lower_bound(begin, end, Sleeper{island, 0});
    const Sleeper* last = first;
    while (last != end && last->island == island) ++last;
    return {first, size_t(last - first)};
  }

  /// A sleeper was woken (its flag already cleared).
  void woke(uint32_t slot) { woken_.push_back(slot); }
  /// An awake body fell asleep in `island` (its flag already set). Only from a settled
  /// set: a body cannot wake and fall asleep between two settles.
  void fell_asleep(uint32_t island, uint32_t slot) {
    assert(woken_.empty());
    fallen_.push_back({island, slot});
  }
  bool settled() const { return woken_.empty() && fallen_.empty(); }

  /// Moves what woke into the awake set and what fell asleep into the asleep set.
  /// `asleep(slot)` is the body's flag now.
  template <class IsAsleep>
  void settle(const IsAsleep& asleep) {
    if (!woken_.empty()) {
      asleep_.erase(std::remove_if(asleep_.begin(), asleep_.end(), [&](const Sleeper& s) { return !asleep(s.slot); }),
                    asleep_.end());
      merge_into(awake_, woken_);
    }
    if (!fallen_.empty()) {
      awake_.erase(std::remove_if(awake_.begin(), awake_.end(), [&](uint32_t slot) { return asleep(slot); }),
                   awake_.end());
      merge_into(asleep_, fallen_);
    }
  }

 private:
  // Merges the sorted-to-be `added` into the sorted `set` from the back, in place.
  template <class T>
  static void merge_into(std::vector<T>& set, std::vector<T>& added) {
    std::sort(added.begin(), added.end());
    size_t i = set.size(), j = added.size(), k = set.size() + added.size();
    set.resize(k);
    while (j > 0) {
      if (i > 0 && added[j - 1] < set[i - 1]) {
        set[--k] = set[--i];
      } else {
        set[--k] = added[--j];
      }
    }
    added.clear();
  }

  bool valid_ = false;
  std::vector<uint32_t> awake_;
  std::vector<Sleeper> asleep_;
  std::vector<uint32_t> woken_;   // woken since the last settle
  std::vector<Sleeper> fallen_;   // fallen asleep since the last settle
};

}  // namespace keel::sim
