// Field values on the wire: the full form and the change form (input_bits.h).
#include "input_bits.h"

namespace keel::protocol::detail {

using game::Field;
using game::FieldKind;
using game::Layout;

void write_full(BitWriter& w, const game::Layout& layout, const game::Values& v) {
  for (uint32_t i = 0; i < layout.size(); ++i) {
    const Field& f = layout.field(i);
    const uint32_t first = layout.first_component(i);
    for (uint32_t c = 0; c < f.components(); ++c) {
      if (uint32_t bits = layout.codes(first + c).bits) w.write_bits(v.code[first + c], bits);
    }
  }
}

bool read_full(BitReader& r, const game::Layout& layout, game::Values& v) {
  v = {};
  for (uint32_t i = 0; i < layout.size(); ++i) {
    const Field& f = layout.field(i);
    const uint32_t first = layout.first_component(i);
    for (uint32_t c = 0; c < f.components(); ++c) {
      uint32_t bits = layout.codes(first + c).bits;
      v.code[first + c] = bits ? r.read_bits(bits) : 0;
    }
  }
  return r.ok() && layout.valid(v);
}

void write_change(BitWriter& w, const game::Layout& layout, const game::Values& p, const game::Values& v) {
  w.write_bool(v == p);
  if (v == p) return;
  for (uint32_t i = 0; i < layout.size(); ++i) {
    const Field& f = layout.field(i);
    const uint32_t first = layout.first_component(i);
    bool changed = false;
    for (uint32_t c = 0; c < f.components(); ++c) changed = changed || v.code[first + c] != p.code[first + c];
    w.write_bool(changed);
    if (!changed) continue;
    switch (f.kind) {
      case FieldKind::Bool: break;
      case FieldKind::Buttons:
      case FieldKind::Enum: w.write_bits(v.code[first], layout.codes(first).bits); break;
      case FieldKind::Angle: {
        // The short way round: the difference modulo 2^bits, as a signed number.
        const uint32_t mask = layout.codes(first).max_code;
        uint32_t d = (v.code[first] - p.code[first]) & mask;
        int64_t signed_d = d > (mask >> 1) ? int64_t(d) - int64_t(mask) - 1 : int64_t(d);
        w.write_golomb(signed_d);
        break;
      }
      default:  // differences of the steps (Field::index_of), not of the codes
        for (uint32_t c = 0; c < f.components(); ++c) {
          w.write_golomb(layout.index_of(first + c, v.code[first + c]) - layout.index_of(first + c, p.code[first + c]));
        }
    }
  }
}

bool read_change(BitReader& r, const game::Layout& layout, const game::Values& before, game::Values& v) {
  v = before;
  if (r.read_bool()) return r.ok();
  for (uint32_t i = 0; i < layout.size() && r.ok(); ++i) {
    const Field& f = layout.field(i);
    const uint32_t first = layout.first_component(i);
    if (!r.read_bool()) continue;
    switch (f.kind) {
      case FieldKind::Bool: v.code[first] ^= 1u; break;
      case FieldKind::Buttons:
      case FieldKind::Enum: v.code[first] = r.read_bits(layout.codes(first).bits); break;
      case FieldKind::Angle: {
        const uint32_t mask = layout.codes(first).max_code;
        int64_t d = r.read_golomb();
        if (d < -int64_t(mask >> 1) - 1 || d > int64_t(mask >> 1)) return false;
        v.code[first] = uint32_t(int64_t(v.code[first]) + d) & mask;
        break;
      }
      default:
        for (uint32_t c = 0; c < f.components(); ++c) {
          const Layout::ComponentCodes& codes = layout.codes(first + c);
          int64_t k = layout.index_of(first + c, std::min(v.code[first + c], codes.max_code)) + r.read_golomb();
          if (r.ok() && (k < codes.axis.lo || k > codes.axis.hi)) return false;
          v.code[first + c] = layout.code_of(first + c, k);
        }
    }
  }
  // A stick outside its disc, an enum past its count.
  return r.ok() && layout.valid(v);
}

}  // namespace keel::protocol::detail
