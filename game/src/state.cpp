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

void write_state_values(const StateScope& scope, const StateValues& values, std::vector<uint8_t>& out) {
  keel::ByteWriter w(out);
  const auto& raw = values.raw();
  size_t k = 0;
  for (const StateField& f : scope.fields()) {
    for (uint32_t e = 0; e < f.count; ++e, ++k) {
      uint64_t x = k < raw.size() ? raw[k] : 0;
      switch (type_bytes(f.type)) {
        case 1: w.u8(uint8_t(x)); break;
        case 4: w.u32(uint32_t(x)); break;
        default: w.u64(x);
      }
    }
  }
}

bool read_state_values(const StateScope& scope, std::span<const uint8_t> bytes, size_t& offset,
                       StateValues& out) {
  if (offset > bytes.size()) return false;
  keel::ByteReader r(bytes.subspan(offset));
  out = StateValues(scope);
  auto& raw = out.raw();
  size_t k = 0;
  for (const StateField& f : scope.fields()) {
    for (uint32_t e = 0; e < f.count && r.ok(); ++e, ++k) {
      switch (type_bytes(f.type)) {
        case 1: {
          uint8_t b = r.u8();
          if (b > 1) return false;
          raw[k] = b;
          break;
        }
        case 4: raw[k] = r.u32(); break;
        default: raw[k] = r.u64();
      }
      // A 32-bit element keeps its 32 bits zero-extended, exactly as set_i32 stores it.
    }
  }
  if (!r.ok()) return false;
  offset += r.position();
  return true;
}

namespace {

void write_scope(const StateScope& s, keel::ByteWriter& w) {
  w.u32(uint32_t(s.fields().size()));
  for (const StateField& f : s.fields()) {
    w.str(f.name);
    w.u8(uint8_t(f.type));
    w.u32(f.count);
  }
}

bool read_scope(keel::ByteReader& r, StateScope& s) {
  uint32_t n = r.count(9, kMaxStateFields, "state field");
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    std::string name = r.str(kMaxNameBytes, "state field name");
    uint8_t type = r.u8();
    uint32_t count = r.u32();
    if (r.ok() && (type > uint8_t(StateType::F32) || count == 0 || count > kMaxGlobalStateElements)) {
      r.fail("state field \"" + name + "\" has a bad type or count");
    }
    if (r.ok()) s.add(std::move(name), StateType(type), count);
  }
  return r.ok();
}

}  // namespace

void write_state_layout(const StateLayout& layout, std::vector<uint8_t>& out) {
  keel::ByteWriter w(out);
  write_scope(layout.global, w);
  write_scope(layout.player, w);
}

Expected<StateLayout> read_state_layout(std::span<const uint8_t> bytes, size_t& offset) {
  if (offset > bytes.size()) return Error{"state layout: offset past the end"};
  keel::ByteReader r(bytes.subspan(offset));
  StateLayout layout;
  read_scope(r, layout.global);
  read_scope(r, layout.player);
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
