// keel::game::StateLayout and StateValues — a game's own state, declared field by field.
//
// A game does not keep state in its Rules object: it declares named fields (a score per
// team, a round timer, a charge per player) and the Match stores them. The match writes
// them into its canonical state bytes in declared order, so they are saved, restored,
// hashed every tick, rolled back by a predicting client and compared by name by
// keel-replay diff, with no serialisation code in the game.
#pragma once

#include <keel/game/layout.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace keel::game {

/// The type of a state field; every element is stored in 8 bytes and written at its
/// width (Bool 1, 32-bit types 4, 64-bit types 8) into the state bytes.
enum class StateType : uint8_t { Bool = 0, I32 = 1, U32 = 2, I64 = 3, U64 = 4, F32 = 5 };

inline constexpr uint32_t kMaxStateFields = 64;          ///< per scope
inline constexpr uint32_t kMaxGlobalStateElements = 4096;
inline constexpr uint32_t kMaxPlayerStateElements = 256;

/// One declared field: `count` elements of `type` (count 1 is a scalar).
struct StateField {
  std::string name;  ///< [a-z0-9_], 1..32 bytes, unique within its scope
  StateType type = StateType::I32;
  uint32_t count = 1;
  friend bool operator==(const StateField&, const StateField&) = default;
};

/// A handle a game keeps to reach one field (returned by StateLayout::add).
struct StateRef {
  uint32_t offset = 0;  ///< index of the field's first element
  uint32_t count = 0;
  StateType type = StateType::I32;
};

/// The fields of one scope: the match's (global) or each player's.
class StateScope {
 public:
  StateRef add(std::string name, StateType type, uint32_t count = 1);
  const std::vector<StateField>& fields() const { return fields_; }
  uint32_t elements() const { return elements_; }
  /// Bytes this scope adds to the state bytes.
  uint32_t state_bytes() const;
  Status validate(uint32_t max_elements) const;
  /// The field holding element `index`, and the element's index within the field.
  const StateField& field_of(uint32_t index, uint32_t& element) const;
  friend bool operator==(const StateScope& a, const StateScope& b) { return a.fields_ == b.fields_; }

 private:
  std::vector<StateField> fields_;
  std::vector<uint32_t> offsets_;
  uint32_t elements_ = 0;
};

struct StateLayout {
  StateScope global;  ///< one copy per match
  StateScope player;  ///< one copy per player slot, zero when the player joins
  Status validate() const;
  friend bool operator==(const StateLayout&, const StateLayout&) = default;
};

/// Storage for one scope: every element as 8 bytes (the bit pattern for F32). Values
/// start at zero. One spare element past the declared ones catches a handle from another
/// layout (a game bug) without touching memory outside; it is never in the state bytes.
class StateValues {
 public:
  StateValues() : v_(1, 0) {}
  explicit StateValues(const StateScope& scope) : v_(scope.elements() + 1, 0) {}

  bool get_bool(StateRef f, uint32_t i = 0) const { return v_[at(f, i)] != 0; }
  int32_t get_i32(StateRef f, uint32_t i = 0) const { return int32_t(uint32_t(v_[at(f, i)])); }
  uint32_t get_u32(StateRef f, uint32_t i = 0) const { return uint32_t(v_[at(f, i)]); }
  int64_t get_i64(StateRef f, uint32_t i = 0) const { return int64_t(v_[at(f, i)]); }
  uint64_t get_u64(StateRef f, uint32_t i = 0) const { return v_[at(f, i)]; }
  float get_f32(StateRef f, uint32_t i = 0) const;

  void set_bool(StateRef f, bool x, uint32_t i = 0) { v_[at(f, i)] = x ? 1 : 0; }
  void set_i32(StateRef f, int32_t x, uint32_t i = 0) { v_[at(f, i)] = uint32_t(x); }
  void set_u32(StateRef f, uint32_t x, uint32_t i = 0) { v_[at(f, i)] = x; }
  void set_i64(StateRef f, int64_t x, uint32_t i = 0) { v_[at(f, i)] = uint64_t(x); }
  void set_u64(StateRef f, uint64_t x, uint32_t i = 0) { v_[at(f, i)] = x; }
  void set_f32(StateRef f, float x, uint32_t i = 0);

  /// Raw elements (the state bytes' source).
  const std::vector<uint64_t>& raw() const { return v_; }
  std::vector<uint64_t>& raw() { return v_; }
  friend bool operator==(const StateValues&, const StateValues&) = default;

 private:
  // An index past the field (a game bug) lands on the field's last element; a handle
  // past the storage lands on the spare element.
  size_t at(StateRef f, uint32_t i) const;
  std::vector<uint64_t> v_;
};

/// Writes a scope's values at their widths; reads them back, refusing a Bool other than
/// 0/1 (canonical bytes have one spelling per state).
void write_state_values(const StateScope& scope, const StateValues& values, std::vector<uint8_t>& out);
bool read_state_values(const StateScope& scope, std::span<const uint8_t> bytes, size_t& offset,
                       StateValues& out);

/// Canonical bytes of a state layout and back (recording headers).
void write_state_layout(const StateLayout& layout, std::vector<uint8_t>& out);
Expected<StateLayout> read_state_layout(std::span<const uint8_t> bytes, size_t& offset);

/// "score[1]" for element 1 of field score, "round_ticks" for a scalar.
std::string element_name(const StateScope& scope, uint32_t index);
/// One element's value as text.
std::string format_element(const StateScope& scope, const StateValues& values, uint32_t index);

}  // namespace keel::game
