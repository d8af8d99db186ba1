// The contact set keeps its contacts in pair-key order while pairs come and go, moving
// them in place, and keeps a key array beside them: checked against a plain sorted list,
// with contacts marked so that one moved to the wrong place shows.
#include "contact/contact.h"

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

TEST(ContactSet, InsertAndRemoveKeepKeyOrderAndEveryContact) {
  ContactSet set;
  std::vector<uint64_t> expected;
  // 5,000 pairs into an empty set.
  std::vector<uint64_t> first;
  for (uint32_t i = 0; i < 5000; ++i) first.push_back(key(2 * i, 2 * i + 1));
  set.insert_new(first);
  expected = first;
  ASSERT_EQ(keys_of(set), expected);
  mark_all(set);

  // New pairs before the first, between neighbours, several before the same old contact,
  // and after the last; one already known. A list of indices (as the touching list) moves
  // along with its contacts.
  std::vector<uint64_t> fresh = {key(0, 0),         key(2 * 2047, 2 * 2047), key(2 * 2048, 0),
                                 key(2 * 2048, 1),  key(2 * 2048, 2 * 2048 + 2), key(2 * 4096, 1),
                                 key(2 * 4999, 2 * 4999 + 5), key(20000, 1), first[17]};
  std::sort(fresh.begin(), fresh.end());
  std::vector<uint32_t> indices = {0, 17, 2047, 2048, 4999};
  std::vector<uint64_t> indexed_keys;
  for (uint32_t i : indices) indexed_keys.push_back(expected[i]);
  const std::vector<size_t> at = set.insert_new(fresh, &indices);
  for (uint64_t k : fresh) {
    if (!std::binary_search(expected.begin(), expected.end(), k)) expected.push_back(k);
  }
  std::sort(expected.begin(), expected.end());
  ASSERT_EQ(keys_of(set), expected);
  ASSERT_EQ(at.size(), fresh.size() - 1);  // the known one is not added again
  for (size_t k = 0; k < at.size(); ++k) {
    EXPECT_EQ(set.items()[at[k]].count, 0) << "a new contact, no points";
    if (k > 0) {
      EXPECT_LT(at[k - 1], at[k]);
    }
  }
  for (size_t k = 0; k < indices.size(); ++k) EXPECT_EQ(set.items()[indices[k]].key, indexed_keys[k]);
  mark_all(set);
  expect_marks_follow_keys(set);

  // Remove every third contact and the last one.
  std::vector<uint8_t> dead(set.items().size(), 0);
  std::vector<uint64_t> survivors;
  for (size_t i = 0; i < dead.size(); ++i) {
    dead[i] = (i % 3 == 0 || i + 1 == dead.size()) ? kContactDead : 0;
    if (!dead[i]) survivors.push_back(expected[i]);
  }
  set.remove_flagged(dead);
  ASSERT_EQ(keys_of(set), survivors);
  expect_marks_follow_keys(set);

  // Bits other than the dead flag do not remove.
  std::vector<uint8_t> other_bits(set.items().size(), kContactHeld | kContactTouching);
  set.remove_flagged(other_bits);
  ASSERT_EQ(keys_of(set), survivors);

  // Nothing flagged: nothing changes.
  set.remove_flagged(std::vector<uint8_t>(set.items().size(), 0));
  ASSERT_EQ(keys_of(set), survivors);

  // A run of dead contacts at the front only, then inserting into the emptied space.
  std::vector<uint8_t> front(set.items().size(), 0);
  for (size_t i = 0; i < 100; ++i) front[i] = kContactDead;
  set.remove_flagged(front);
  survivors.erase(survivors.begin(), survivors.begin() + 100);
  ASSERT_EQ(keys_of(set), survivors);
  expect_marks_follow_keys(set);
  set.insert_new({key(0, 5)});
  survivors.insert(survivors.begin(), key(0, 5));
  ASSERT_EQ(keys_of(set), survivors);
}

}  // namespace
}  // namespace keel::sim
