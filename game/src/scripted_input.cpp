// Scripted input frames (keel/game/scripted_input.h).
#include <keel/game/scripted_input.h>

namespace keel::game {

uint32_t mix32(uint32_t a, uint32_t b) {
  uint32_t h = a * 0x9e3779b9u ^ (b + 1u) * 0x85ebca6bu;
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  h *= 0x846ca68bu;
  h ^= h >> 16;
  return h;
}

namespace {

// One of five levels of an axis: the ends, halfway to each and the origin.
int64_t level(const Field::Axis& a, uint32_t pick) {
  switch (pick % 5) {
    case 0: return a.lo;
    case 1: return a.lo / 2;
    case 2: return 0;
    case 3: return a.hi / 2;
    default: return a.hi;
  }
}

}  // namespace

Values scripted_values(const Layout& layout, uint32_t player, uint32_t n) {
  Values v;
  for (uint32_t i = 0; i < layout.size(); ++i) {
    const Field& f = layout.field(i);
    const uint32_t first = layout.first_component(i);
    for (uint32_t c = 0; c < f.components(); ++c) {
      const uint32_t h = mix32(player * 977u + i * 31u + c, n);
      switch (f.kind) {
        case FieldKind::Bool: v.code[first + c] = (h % 4 == 0) ? 1 : 0; break;
        case FieldKind::Buttons: {
          uint32_t mask = 0;
          for (uint32_t b = 0; b < f.labels.size(); ++b) {
            if (mix32(h, b) % 3 == 0) mask |= 1u << b;
          }
          v.code[first + c] = mask;
          break;
        }
        case FieldKind::Enum:
        case FieldKind::Angle:
        case FieldKind::Direction3: v.code[first + c] = h % (f.max_code(c) + 1); break;
        case FieldKind::Int: v.code[first + c] = h % (f.max_code(c) + 1); break;
        default: v.code[first + c] = f.code_of(c, level(f.axis(c), h)); break;
      }
    }
  }
  layout.sanitize(v);
  return v;
}

Values forged_values() {
  Values v;
  for (uint32_t& c : v.code) c = 0xffffffffu;
  return v;
}

}  // namespace keel::game
