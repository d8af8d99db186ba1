// StateScope / StateValues: a game's declared state and its canonical bytes.
#include <keel/game/state.h>

#include "names.h"

#include <keel/base/byte_io.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace keel::game {

namespace {

uint32_t type_bytes(StateType t) {
  switch (t) {
    case StateType::Bool: return 1;
    case StateType::I32:
    case StateType::U32:
    case StateType::F32: return 4;
    case StateType::I64:
    case StateType::U64: return 8;
  }
  return 8;
}

}  // namespace

StateRef StateScope::add(std::string name, StateType type, uint32_t count) {
  StateRef ref{elements_, count, type};
  offsets_.push_back(elements_);
  elements_ += count;
  fields_.push_back(StateField{std::move(name), type, count});
  return ref;
}

uint32_t StateScope::state_bytes() const {
  uint32_t n = 0;
  for (const StateField& f : fields_) n += type_bytes(f.type) * f.count;
  return n;
}

Status StateScope::validate(uint32_t max_elements) const {
  if (fields_.size() > kMaxStateFields) {
    return Error{"the state declares " + std::to_string(fields_.size()) + " fields; at most " +
                 std::to_string(kMaxStateFields) + " are allowed"};
  }
  std::vector<std::string> seen;
  uint64_t total = 0;
  for (const StateField& f : fields_) {
    if (Status st = check_name(f.name, "state field"); !st) return st;
    if (std::find(seen.begin(), seen.end(), f.name) != seen.end()) {
      return Error{"state field \"" + f.name + "\" is declared twice"};
    }
    seen.push_back(f.name);
    if (uint8_t(f.type) > uint8_t(StateType::F32)) return Error{"state field \"" + f.name + "\" has an unknown type"};
    if (f.count == 0) return Error{"state field \"" + f.name + "\" has no elements"};
    total += f.count;
  }
  if (total > max_elements) {
    return Error{"the state declares " + std::to_string(total) + " elements; at most " +
                 std::to_string(max_elements) + " are allowed"};
  }
  return Status::ok();
}

const StateField& StateScope::field_of(uint32_t index, uint32_t& element) const {
  size_t i = std::upper_bound(offsets_.begin(), offsets_.end(), index) - offsets_.begin();
  i = i == 0 ? 0 : i - 1;
  element = index - offsets_[i];
  return fields_[i];
}

Status StateLayout::validate() const {
  if (Status st = global.validate(kMaxGlobalStateElements); !st) return Error{"match state: " + st.error().message};
  if (Status st = player.validate(kMaxPlayerStateElements); !st) return Error{"player state: " + st.error().message};
  return Status::ok();
}

size_t StateValues::at(StateRef f, uint32_t i) const {
  size_t idx = size_t(f.offset) + std::min(i, f.count == 0 ? 0 : f.count - 1);
  return std::min(idx, v_.size() - 1);
}

float StateValues::get_f32(StateRef f, uint32_t i) const {
  uint32_t bits = uint32_t(v_[at(f, i)]);
  float x;
  std::memcpy(&x, &bits, 4);
  return x;
}

void StateValues::set_f32(StateRef f, float x, uint32_t i) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  v_[at(f, i)] = bits;
}

// Each layout is one field list over the direction (keel/base/byte_io.h: a ByteWriter
// with const values, or a FieldReader); the reader's checks sit under IO::kReading.
namespace {

// Each element as its type's bytes (a flag 1, i32 and f32 4, i64 8), in field order. A
// 32-bit element keeps its 32 bits zero-extended, exactly as set_i32 stores it.
template <class IO, class Raw>
void visit_state_values(IO& io, const StateScope& scope, Raw& raw) {
  size_t k = 0;
  for (const StateField& f : scope.fields()) {
    for (uint32_t e = 0; e < f.count && io.ok(); ++e, ++k) {
      uint64_t x = 0;
      if constexpr (!IO::kReading) x = k < raw.size() ? raw[k] : 0;
      switch (type_bytes(f.type)) {
        case 1: {
          uint8_t b = uint8_t(x);
          io.u8(b);
          if (b > 1) io.fail("a flag element is neither 0 nor 1");
          x = b;
          break;
        }
        case 4: {
          uint32_t v = uint32_t(x);
          io.u32(v);
          x = v;
          break;
        }
        default: io.u64(x);
      }
      if constexpr (IO::kReading) raw[k] = x;
    }
  }
}

template <class IO, class Scope>
void visit_scope(IO& io, Scope& s) {
  uint32_t n = uint32_t(s.fields().size());
  if constexpr (IO::kReading) {
    n = io.reader().count(9, kMaxStateFields, "state field");
  } else {
    io.u32(n);
  }
  for (uint32_t i = 0; i < n && io.ok(); ++i) {
    StateField f;
    if constexpr (!IO::kReading) f = s.fields()[i];
    io.str(f.name, kMaxNameBytes, "state field name");
    uint8_t type = uint8_t(f.type);
    io.u8(type);
    io.u32(f.count);
    if constexpr (IO::kReading) {
      if (io.ok() && (type > uint8_t(StateType::F32) || f.count == 0 || f.count > kMaxGlobalStateElements)) {
        io.fail("state field \"" + f.name + "\" has a bad type or count");
      }
      if (io.ok()) s.add(std::move(f.name), StateType(type), f.count);
    }
  }
}

}  // namespace

void write_state_values(const StateScope& scope, const StateValues& values, std::vector<uint8_t>& out) {
  keel::ByteWriter w(out);
  visit_state_values(w, scope, values.raw());
}

bool read_state_values(const StateScope& scope, std::span<const uint8_t> bytes, size_t& offset,
                       StateValues& out) {
  if (offset > bytes.size()) return false;
  keel::ByteReader r(bytes.subspan(offset));
  keel::FieldReader io(r);
  out = StateValues(scope);
  visit_state_values(io, scope, out.raw());
  if (!r.ok()) return false;
  offset += r.position();
  return true;
}

template <class IO, class Layout>
static void visit_state_layout(IO& io, Layout& layout) {
  visit_scope(io, layout.global);
  visit_scope(io, layout.player);
}

void write_state_layout(const StateLayout& layout, std::vector<uint8_t>& out) {
  keel::ByteWriter w(out);
  visit_state_layout(w, layout);
}

Expected<StateLayout> read_state_layout(std::span<const uint8_t> bytes, size_t& offset) {
  if (offset > bytes.size()) return Error{"state layout: offset past the end"};
  keel::ByteReader r(bytes.subspan(offset));
  keel::FieldReader io(r);
  StateLayout layout;
  visit_state_layout(io, layout);
  if (!r.ok()) return Error{"state layout is damaged: " + r.error()};
  if (Status st = layout.validate(); !st) return Error{"state layout is invalid: " + st.error().message};
  offset += r.position();
  return layout;
}

std::string element_name(const StateScope& scope, uint32_t index) {
  if (index >= scope.elements()) return "element " + std::to_string(index);
  uint32_t element = 0;
  const StateField& f = scope.field_of(index, element);
  return f.count == 1 ? f.name : f.name + "[" + std::to_string(element) + "]";
}

std::string format_element(const StateScope& scope, const StateValues& values, uint32_t index) {
  if (index >= scope.elements() || index >= values.raw().size()) return "?";
  uint32_t element = 0;
  const StateField& f = scope.field_of(index, element);
  uint64_t x = values.raw()[index];
  switch (f.type) {
    case StateType::Bool: return x ? "true" : "false";
    case StateType::I32: return std::to_string(int32_t(uint32_t(x)));
    case StateType::U32: return std::to_string(uint32_t(x));
    case StateType::I64: return std::to_string(int64_t(x));
    case StateType::U64: return std::to_string(x);
    case StateType::F32: {
      uint32_t bits = uint32_t(x);
      float v;
      std::memcpy(&v, &bits, 4);
      char buf[48];
      std::snprintf(buf, sizeof buf, "%.9g", double(v));
      return buf;
    }
  }
  return "?";
}

}  // namespace keel::game
