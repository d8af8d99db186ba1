// keel::game::Layout — the named, typed fields a game declares for its players' input
// and for the payload of each of its events, and Values, one set of those fields.
//
// Every field is quantised: a Values holds one small unsigned code per component, and
// the code is what the client predicts with, the server applies, the wire carries and
// the recording stores, so every program sees exactly the same input. A game reads a
// field through the Layout (boolean(), number(), stick(), ...), which turns codes into
// numbers the same way on every machine. docs/game-rules.md lists the kinds with their
// precision and bit cost.
#pragma once

#include <keel/base/expected.h>
#include <keel/sim/math.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace keel::game {

using keel::Error;
using keel::Expected;
using keel::Status;

/// What a field holds and how it is quantised.
enum class FieldKind : uint8_t {
  Bool = 0,        ///< a switch: code 0 or 1
  Buttons = 1,     ///< up to 16 named buttons: one bit each
  Int = 2,         ///< an integer in [min, max]
  Enum = 3,        ///< one of up to 256 named values; code = the value's index (0: the first)
  Fixed = 4,       ///< a number in [lo, hi] in steps of `step`
  Stick = 5,       ///< an analog stick (x, y) in the unit disc, `steps` codes per unit
  Angle = 6,       ///< a 2-D direction: an angle in [-pi, pi) in 2^bits steps
  Direction3 = 7,  ///< a 3-D unit vector: octahedral map, 2^bits steps per axis
  Point3 = 8,      ///< a point in the box [lo, hi] in steps of `step` on each axis
};

/// The largest layouts: a frame of 32 components is 128 bytes unquantised.
inline constexpr uint32_t kMaxFields = 32;
inline constexpr uint32_t kMaxComponents = 32;
inline constexpr uint32_t kMaxLabels = 256;       ///< Enum values (Buttons: 16)
inline constexpr uint32_t kMaxButtons = 16;
inline constexpr uint32_t kMaxCodeBits = 24;      ///< per component: no code exceeds 2^24 - 1
inline constexpr uint32_t kMaxNameBytes = 32;     ///< field, label, event and state names

/// One declared field.
struct Field {
  std::string name;  ///< [a-z0-9_], 1..32 bytes, unique within its layout
  FieldKind kind = FieldKind::Bool;
  int32_t min = 0, max = 0;          ///< Int
  std::vector<std::string> labels;   ///< Enum values, Buttons names (bit i = labels[i])
  sim::Vec3 lo{0.0f}, hi{0.0f};      ///< Fixed (x only), Point3
  float step = 0.0f;                 ///< Fixed, Point3
  uint32_t steps = 0;                ///< Stick: codes per unit (127 = 8 bits a component)
  uint32_t bits = 0;                 ///< Angle, Direction3: bits per component

  /// Components this field takes in a Values (1, Stick and Direction3 2, Point3 3).
  uint32_t components() const;
  /// The largest valid code of component `c` (0 .. 2^24 - 1).
  uint32_t max_code(uint32_t c) const;
  /// Bits of one component written in full (ceil(log2(max_code + 1))).
  uint32_t code_bits(uint32_t c) const;

  /// The steps of a component as signed indices around its origin (the step nearest the
  /// value 0: Int and Fixed 0 when in range, a stick's centre, else the lowest step).
  /// Code 0 is always the origin, so an all-zero Values is every field at its zero:
  /// false, no buttons, the first enum value, 0, the stick centred, 0 rad.
  struct Axis {
    int64_t lo = 0, hi = 0;  ///< index range, lo <= 0 <= hi
  };
  uint32_t origin(uint32_t c) const;  ///< the origin as steps above the lowest value
  Axis axis(uint32_t c) const;
  int64_t index_of(uint32_t c, uint32_t code) const;  ///< code -> index
  uint32_t code_of(uint32_t c, int64_t index) const;  ///< index -> code (clamped into the axis)
  friend bool operator==(const Field&, const Field&) = default;
};

/// One set of field values: the codes of every component, in field order. Components
/// past the layout's count are always 0 (sanitize clears them), so equal inputs compare
/// equal with ==. A default Values is every field at its zero (Field::Axis).
struct Values {
  std::array<uint32_t, kMaxComponents> code{};
  friend bool operator==(const Values&, const Values&) = default;
};

/// A player's input for one tick.
using InputFrame = Values;

/// An ordered list of fields. Build it with the add_* calls (each returns the field's
/// index, which the game keeps to read the field), then check it with validate().
class Layout {
 public:
  uint32_t add_bool(std::string name);
  uint32_t add_buttons(std::string name, std::vector<std::string> buttons);
  uint32_t add_int(std::string name, int32_t min, int32_t max);
  uint32_t add_enum(std::string name, std::vector<std::string> values);
  uint32_t add_fixed(std::string name, float lo, float hi, float step);
  uint32_t add_stick(std::string name, uint32_t steps);
  uint32_t add_angle(std::string name, uint32_t bits);
  uint32_t add_direction3(std::string name, uint32_t bits);
  uint32_t add_point3(std::string name, sim::Vec3 lo, sim::Vec3 hi, float step);
  /// Appends a field as it is (used when reading a layout back from bytes).
  uint32_t add(Field field);

  /// Checks every bound above: names, ranges, steps, total components. A layout that
  /// fails is refused wherever it is offered (a game module, a recording header).
  Status validate() const;

  const std::vector<Field>& fields() const { return fields_; }
  uint32_t size() const { return uint32_t(fields_.size()); }
  const Field& field(uint32_t i) const { return fields_[i]; }
  /// Index of the component where field `i` starts.
  uint32_t first_component(uint32_t i) const { return first_[i]; }
  uint32_t components() const { return components_; }
  /// The index of a field by name, or size() when there is none.
  uint32_t find(std::string_view name) const;

  /// Clamps every code into its field's range (a stick into the unit disc, unused
  /// components to 0). Returns true when `v` was already valid. A step applies only
  /// sanitised values, so no forged input can make it misbehave.
  bool sanitize(Values& v) const;
  /// True when sanitize would change nothing.
  bool valid(const Values& v) const;

  // Reading (codes to numbers, the same bits on every machine).
  bool boolean(const Values& v, uint32_t field) const;
  /// Buttons: whether button `button` (its index in the declared names) is down.
  bool button(const Values& v, uint32_t field, uint32_t button) const;
  /// Buttons: the bit mask of every button held.
  uint32_t buttons(const Values& v, uint32_t field) const;
  /// Int: the value; Enum: the index of the value.
  int32_t integer(const Values& v, uint32_t field) const;
  /// Fixed: lo + steps * step.
  float number(const Values& v, uint32_t field) const;
  /// Stick: (x, y) = index / steps per component, inside the unit disc.
  sim::Vec3 stick(const Values& v, uint32_t field) const;  ///< (x, y, 0)
  /// Angle: radians in [-pi, pi) (code 0 is 0 rad).
  float angle(const Values& v, uint32_t field) const;
  /// Direction3: a unit vector.
  sim::Vec3 direction3(const Values& v, uint32_t field) const;
  /// Point3: lo + steps * step per axis.
  sim::Vec3 point3(const Values& v, uint32_t field) const;

  // Writing (numbers to codes: rounds to the nearest step and clamps into range). Used
  // by clients and bots; a step never needs them.
  void set_bool(Values& v, uint32_t field, bool on) const;
  void set_button(Values& v, uint32_t field, uint32_t button, bool down) const;
  void set_buttons(Values& v, uint32_t field, uint32_t mask) const;
  void set_integer(Values& v, uint32_t field, int32_t value) const;
  void set_number(Values& v, uint32_t field, float value) const;
  void set_stick(Values& v, uint32_t field, float x, float y) const;
  void set_angle(Values& v, uint32_t field, float radians) const;
  void set_direction3(Values& v, uint32_t field, sim::Vec3 dir) const;
  void set_point3(Values& v, uint32_t field, sim::Vec3 p) const;
  /// Sets the raw code of one component (clamped into range).
  void set_code(Values& v, uint32_t component, uint32_t code) const;

  /// One field's value as text, e.g. "true", "3", "red", "0.25", "(0.5, -1)",
  /// "jump|fire" (what keel-replay dump prints).
  std::string format(const Values& v, uint32_t field) const;
  /// Every field as "name=value" separated by spaces.
  std::string format(const Values& v) const;
  /// One line per field describing its kind and range (keel-replay info).
  std::string describe() const;

  /// Full-frame bits of one Values (the sum of code_bits).
  uint32_t full_bits() const;

  /// A component's codes, by its index in Values (what its field's max_code, code_bits
  /// and axis say, worked out once as the field is added: the wire and sanitize read
  /// them for every player's input every tick).
  struct ComponentCodes {
    uint32_t max_code = 0;
    uint32_t bits = 0;
    Field::Axis axis;
  };
  const ComponentCodes& codes(uint32_t component) const { return codes_[component]; }
  /// Field::index_of and code_of of a component, from its cached axis.
  int64_t index_of(uint32_t component, uint32_t code) const;
  uint32_t code_of(uint32_t component, int64_t index) const;

  friend bool operator==(const Layout& a, const Layout& b) { return a.fields_ == b.fields_; }

 private:
  std::vector<Field> fields_;
  std::vector<uint32_t> first_;
  std::vector<ComponentCodes> codes_;  // per component, derived from fields_
  uint32_t components_ = 0;
};

/// Canonical bytes of a layout (recording headers, module identity) and back; read
/// refuses anything validate() refuses.
void write_layout(const Layout& layout, std::vector<uint8_t>& out);
Expected<Layout> read_layout(std::span<const uint8_t> bytes, size_t& offset);

/// The component index of a field's component `c` inside a layout.
inline uint32_t component_index(const Layout& layout, uint32_t field, uint32_t c = 0) {
  return layout.first_component(field) + c;
}

}  // namespace keel::game
