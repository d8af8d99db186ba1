// The contact set keeps its contacts in pair-key order while pairs come and go, copying
// them in chunks on worker threads, and keeps a key array beside them: checked against a
// plain sorted list, across chunk boundaries, on one and on four threads.
#include "contact/contact.h"
#include "parallel/executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace keel::sim {
namespace {

uint64_t key(uint32_t a, uint32_t b) { return uint64_t(a) << 32 | b; }

// The contacts' keys, checked against the key array the set keeps beside them.
std::vector<uint64_t> keys_of(ContactSet& set) {
  std::vector<uint64_t> out;
  for (const Contact& c : set.items()) out.push_back(c.key);
  EXPECT_EQ(set.keys(), out) << "the kept key array";
  return out;
}

// Each contact carries a mark set when it was first added, so a copy that lands in the
// wrong place (or a contact built afresh instead of moved) shows.
void mark_all(ContactSet& set) {
  for (Contact& c : set.items()) {
    if (c.count == 0) c.count = int(c.key % 97) + 1;
  }
}

void expect_marks_follow_keys(const ContactSet& set) {
  for (const Contact& c : set.items()) {
    ASSERT_EQ(c.count, int(c.key % 97) + 1) << "contact " << (c.key >> 32) << "," << (c.key & 0xffffffffu);
    ASSERT_EQ(c.shape_a, uint32_t(c.key >> 32));
    ASSERT_EQ(c.shape_b, uint32_t(c.key & 0xffffffffu));
  }
}

TEST(ContactSet, InsertAndRemoveKeepKeyOrderAndEveryContactOnAnyThreadCount) {
  for (uint32_t threads : {1u, 4u}) {
    Executor executor(threads);
    ContactSet set;
    std::vector<uint64_t> expected;
    // 5,000 pairs in one go: three copying chunks.
    std::vector<uint64_t> first;
    for (uint32_t i = 0; i < 5000; ++i) first.push_back(key(2 * i, 2 * i + 1));
    set.insert_new(first, executor);
    expected = first;
    ASSERT_EQ(keys_of(set), expected) << threads << " threads";
    mark_all(set);

    // New pairs before the first, at and around the chunk boundaries (old contacts 2047,
    // 2048, 4095, 4096), between neighbours, and after the last; one already known.
    std::vector<uint64_t> fresh = {key(0, 0),         key(2 * 2047, 2 * 2047), key(2 * 2048, 0),
                                   key(2 * 2048, 2 * 2048 + 2), key(2 * 4096, 1), key(2 * 4999, 2 * 4999 + 5),
                                   key(20000, 1),     first[17]};
    std::sort(fresh.begin(), fresh.end());
    set.insert_new(fresh, executor);
    for (uint64_t k : fresh) {
      if (!std::binary_search(expected.begin(), expected.end(), k)) expected.push_back(k);
    }
    std::sort(expected.begin(), expected.end());
    ASSERT_EQ(keys_of(set), expected) << threads << " threads";
    mark_all(set);
    expect_marks_follow_keys(set);

    // Remove every third contact and the last one.
    std::vector<uint8_t> dead(set.items().size(), 0);
    std::vector<uint64_t> survivors;
    for (size_t i = 0; i < dead.size(); ++i) {
      dead[i] = (i % 3 == 0 || i + 1 == dead.size()) ? 1 : 0;
      if (!dead[i]) survivors.push_back(expected[i]);
    }
    set.remove_flagged(dead, executor);
    ASSERT_EQ(keys_of(set), survivors) << threads << " threads";
    expect_marks_follow_keys(set);

    // Bits other than bit 0 do not remove.
    std::vector<uint8_t> other_bits(set.items().size(), 6);
    set.remove_flagged(other_bits, executor);
    ASSERT_EQ(keys_of(set), survivors) << threads << " threads";

    // Nothing flagged: nothing changes.
    set.remove_flagged(std::vector<uint8_t>(set.items().size(), 0), executor);
    ASSERT_EQ(keys_of(set), survivors) << threads << " threads";
  }
}

}  // namespace
}  // namespace keel::sim
