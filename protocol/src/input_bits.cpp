// Field values on the wire: the full form and the change form (input_bits.h).
#include "input_bits.h"

namespace keel::protocol::detail {

using game::Field;
using game::FieldKind;

void write_full(BitWriter& w, const game::Layout& layout, const game::Values& v) {
  for (uint32_t i = 0; i < layout.size(); ++i) {
    const Field& f = layout.field(i);
    const uint32_t first = layout.first_component(i);
    for (uint32_t c = 0; c < f.components(); ++c) {
      if (uint32_t bits = f.code_bits(c)) w.write_bits(v.code[first + c], bits);
    }
  }
}

bool read_full(BitReader& r, const game::Layout& layout, game::Values& v) {
  v = {};
  for (uint32_t i = 0; i < layout.size(); ++i) {
    const Field& f = layout.field(i);
    const uint32_t first = layout.first_component(i);
    for (uint32_t c = 0; c < f.components(); ++c) {
      uint32_t bits = f.code_bits(c);
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
      case FieldKind::Enum: w.write_bits(v.code[first], f.code_bits(0)); break;
      case FieldKind::Angle: {
        // The short way round: the difference modulo 2^bits, as a signed number.
        const uint32_t mask = f.max_code(0);
        uint32_t d = (v.code[first] - p.code[first]) & mask;
        int64_t signed_d = d > (mask >> 1) ? int64_t(d) - int64_t(mask) - 1 : int64_t(d);
        w.write_golomb(signed_d);
        break;
      }
      default:  // differences of the steps (Field::index_of), not of the codes
        for (uint32_t c = 0; c < f.components(); ++c) {
          w.write_golomb(f.index_of(c, v.code[first + c]) - f.index_of(c, p.code[first + c]));
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
      case FieldKind::Enum: v.code[first] = r.read_bits(f.code_bits(0)); break;
      case FieldKind::Angle: {
        const uint32_t mask = f.max_code(0);
        int64_t d = r.read_golomb();
        if (d < -int64_t(mask >> 1) - 1 || d > int64_t(mask >> 1)) return false;
        v.code[first] = uint32_t(int64_t(v.code[first]) + d) & mask;
        break;
      }
      default:
        for (uint32_t c = 0; c < f.components(); ++c) {
          const Field::Axis a = f.axis(c);
          int64_t k = f.index_of(c, std::min(v.code[first + c], f.max_code(c))) + r.read_golomb();
          if (r.ok() && (k < a.lo || k > a.hi)) return false;
          v.code[first + c] = f.code_of(c, k);
        }
    }
  }
  // A stick outside its disc, an enum past its count.
  return r.ok() && layout.valid(v);
}

}  // namespace keel::protocol::detail
