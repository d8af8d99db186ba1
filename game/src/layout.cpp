// Layout: field declarations, their checks, sanitising, and code <-> number conversions.
// Conversions a step relies on (code to number) use only +, -, *, / and sqrt in double,
// rounded once to float, so they give the same bits on every machine.
#include <keel/game/layout.h>

#include "names.h"

#include <keel/base/byte_io.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

namespace keel::game {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr uint32_t kMaxCode = (1u << kMaxCodeBits) - 1;

uint32_t steps_between(float lo, float hi, float step) {
  double n = std::floor((double(hi) - double(lo)) / double(step) + 0.5);
  // NaN (a step of 0 over an empty range, before validate refuses it) counts as none.
  return !(n >= 0) ? 0 : n > kMaxCode ? kMaxCode + 1 : uint32_t(n);
}

uint32_t round_code(double x, uint32_t max_code) {
  if (!(x > 0)) return 0;  // NaN too
  double r = std::floor(x + 0.5);
  return r >= double(max_code) ? max_code : uint32_t(r);
}

float to_float(double x) { return static_cast<float>(x); }

std::string number_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

// Octahedral map of a unit vector to (u, v) in [-1, 1]^2 and back.
void octa_encode(sim::Vec3 d, double& u, double& v) {
  double x = d.x, y = d.y, z = d.z;
  double l1 = std::fabs(x) + std::fabs(y) + std::fabs(z);
  if (!(l1 > 0) || !std::isfinite(l1)) {
    u = 0, v = 0;  // (0, 0, 1)
    return;
  }
  x /= l1, y /= l1, z /= l1;
  if (z < 0) {
    double ox = (1 - std::fabs(y)) * (x >= 0 ? 1 : -1);
    double oy = (1 - std::fabs(x)) * (y >= 0 ? 1 : -1);
    x = ox, y = oy;
  }
  u = x, v = y;
}

sim::Vec3 octa_decode(double u, double v) {
  double x = u, y = v, z = 1 - std::fabs(u) - std::fabs(v);
  if (z < 0) {
    double ox = (1 - std::fabs(v)) * (u >= 0 ? 1 : -1);
    double oy = (1 - std::fabs(u)) * (v >= 0 ? 1 : -1);
    x = ox, y = oy;
  }
  double len = std::sqrt(x * x + y * y + z * z);
  return sim::Vec3(to_float(x / len), to_float(y / len), to_float(z / len));
}

const char* kind_name(FieldKind k) {
  switch (k) {
    case FieldKind::Bool: return "bool";
    case FieldKind::Buttons: return "buttons";
    case FieldKind::Int: return "int";
    case FieldKind::Enum: return "enum";
    case FieldKind::Fixed: return "fixed";
    case FieldKind::Stick: return "stick";
    case FieldKind::Angle: return "angle";
    case FieldKind::Direction3: return "direction3";
    case FieldKind::Point3: return "point3";
  }
  return "?";
}

int64_t isqrt(int64_t n) {
  if (n <= 0) return 0;
  int64_t r = int64_t(std::sqrt(double(n)));
  while (r * r > n) --r;
  while ((r + 1) * (r + 1) <= n) ++r;
  return r;
}

// The stick's disc: one step of rounding slack, as a rounded (cos, sin) needs.
bool in_disc(int64_t x, int64_t y, int64_t steps) { return x * x + y * y <= steps * steps + 2 * steps; }

}  // namespace

uint32_t Field::components() const {
  switch (kind) {
    case FieldKind::Stick:
    case FieldKind::Direction3: return 2;
    case FieldKind::Point3: return 3;
    default: return 1;
  }
}

uint32_t Field::max_code(uint32_t c) const {
  switch (kind) {
    case FieldKind::Bool: return 1;
    case FieldKind::Buttons: return labels.size() >= 32 ? kMaxCode : (1u << labels.size()) - 1;
    case FieldKind::Int: return uint32_t(std::min<int64_t>(int64_t(max) - min, kMaxCode + 1));
    case FieldKind::Enum: return labels.empty() ? 0 : uint32_t(labels.size() - 1);
    case FieldKind::Fixed: return steps_between(lo.x, hi.x, step);
    case FieldKind::Stick: return uint32_t(std::min<uint64_t>(2ull * steps, kMaxCode + 1));
    case FieldKind::Angle:
    case FieldKind::Direction3: return bits >= 32 ? kMaxCode + 1 : (1u << bits) - 1;
    case FieldKind::Point3: return steps_between(lo[c % 3], hi[c % 3], step);
  }
  return 0;
}

uint32_t Field::code_bits(uint32_t c) const {
  uint32_t m = max_code(c);
  return m == 0 ? 0 : uint32_t(std::bit_width(m));
}

uint32_t Field::origin(uint32_t c) const {
  switch (kind) {
    case FieldKind::Int: return uint32_t(int64_t(std::clamp(0, min, max)) - min);
    case FieldKind::Fixed:
    case FieldKind::Point3: {
      const float l = kind == FieldKind::Fixed ? lo.x : lo[c % 3];
      return std::min(round_code(-double(l) / double(step), max_code(c)), max_code(c));
    }
    case FieldKind::Stick: return steps;
    default: return 0;
  }
}

Field::Axis Field::axis(uint32_t c) const {
  const int64_t o = origin(c);
  return Axis{-o, int64_t(max_code(c)) - o};
}

// Codes number the steps outward from the origin, alternating sides while both have
// room (0, +1, -1, +2, -2, ...), then the longer side's rest in order: every code in
// [0, max_code] is one step and code 0 is always the origin.
namespace {

int64_t index_on(const Field::Axis& a, uint32_t code) {
  const int64_t m = std::min(-a.lo, a.hi);
  if (int64_t(code) <= 2 * m) return (code & 1u) != 0 ? -int64_t((code + 1) / 2) : int64_t(code / 2);
  const int64_t rest = int64_t(code) - 2 * m;
  return a.hi > m ? m + rest : -m - rest;
}

uint32_t code_on(const Field::Axis& a, int64_t index) {
  const int64_t k = std::clamp(index, a.lo, a.hi);
  const int64_t m = std::min(-a.lo, a.hi);
  if (k >= -m && k <= m) return uint32_t(k > 0 ? 2 * k : -2 * k - (k < 0 ? 1 : 0));
  return uint32_t(2 * m + (k > m ? k - m : -m - k));
}

}  // namespace

int64_t Field::index_of(uint32_t c, uint32_t code) const { return index_on(axis(c), code); }
uint32_t Field::code_of(uint32_t c, int64_t index) const { return code_on(axis(c), index); }

int64_t Layout::index_of(uint32_t component, uint32_t code) const { return index_on(codes_[component].axis, code); }
uint32_t Layout::code_of(uint32_t component, int64_t index) const { return code_on(codes_[component].axis, index); }

uint32_t Layout::add(Field field) {
  first_.push_back(components_);
  components_ += field.components();
  for (uint32_t c = 0; c < field.components(); ++c) {
    codes_.push_back(ComponentCodes{field.max_code(c), field.code_bits(c), field.axis(c)});
  }
  fields_.push_back(std::move(field));
  return uint32_t(fields_.size() - 1);
}

namespace {

Field named(std::string name, FieldKind kind) {
  Field f;
  f.name = std::move(name);
  f.kind = kind;
  return f;
}

}  // namespace

uint32_t Layout::add_bool(std::string name) { return add(named(std::move(name), FieldKind::Bool)); }

uint32_t Layout::add_buttons(std::string name, std::vector<std::string> buttons) {
  Field f = named(std::move(name), FieldKind::Buttons);
  f.labels = std::move(buttons);
  return add(std::move(f));
}

uint32_t Layout::add_int(std::string name, int32_t min, int32_t max) {
  Field f = named(std::move(name), FieldKind::Int);
  f.min = min;
  f.max = max;
  return add(std::move(f));
}

uint32_t Layout::add_enum(std::string name, std::vector<std::string> values) {
  Field f = named(std::move(name), FieldKind::Enum);
  f.labels = std::move(values);
  return add(std::move(f));
}

uint32_t Layout::add_fixed(std::string name, float lo, float hi, float step) {
  Field f = named(std::move(name), FieldKind::Fixed);
  f.lo = sim::Vec3(lo, 0.0f, 0.0f);
  f.hi = sim::Vec3(hi, 0.0f, 0.0f);
  f.step = step;
  return add(std::move(f));
}

uint32_t Layout::add_stick(std::string name, uint32_t steps) {
  Field f = named(std::move(name), FieldKind::Stick);
  f.steps = steps;
  return add(std::move(f));
}

uint32_t Layout::add_angle(std::string name, uint32_t bits) {
  Field f = named(std::move(name), FieldKind::Angle);
  f.bits = bits;
  return add(std::move(f));
}

uint32_t Layout::add_direction3(std::string name, uint32_t bits) {
  Field f = named(std::move(name), FieldKind::Direction3);
  f.bits = bits;
  return add(std::move(f));
}

uint32_t Layout::add_point3(std::string name, sim::Vec3 lo, sim::Vec3 hi, float step) {
  Field f = named(std::move(name), FieldKind::Point3);
  f.lo = lo;
  f.hi = hi;
  f.step = step;
  return add(std::move(f));
}

Status Layout::validate() const {
  if (fields_.size() > kMaxFields) {
    return Error{"the layout has " + std::to_string(fields_.size()) + " fields; at most " +
                 std::to_string(kMaxFields) + " are allowed"};
  }
  if (components_ > kMaxComponents) {
    return Error{"the layout's fields take " + std::to_string(components_) + " components; at most " +
                 std::to_string(kMaxComponents) + " are allowed"};
  }
  std::vector<std::string> seen;
  for (const Field& f : fields_) {
    if (Status st = check_name(f.name, "field"); !st) return st;
    if (std::find(seen.begin(), seen.end(), f.name) != seen.end()) {
      return Error{"field \"" + f.name + "\" is declared twice"};
    }
    seen.push_back(f.name);
    const std::string where = "field \"" + f.name + "\" (" + kind_name(f.kind) + ")";
    auto finite = [](sim::Vec3 v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); };
    switch (f.kind) {
      case FieldKind::Bool: break;
      case FieldKind::Buttons:
      case FieldKind::Enum: {
        uint32_t lo = f.kind == FieldKind::Buttons ? 1 : 2;
        uint32_t hi = f.kind == FieldKind::Buttons ? kMaxButtons : kMaxLabels;
        if (f.labels.size() < lo || f.labels.size() > hi) {
          return Error{where + " has " + std::to_string(f.labels.size()) + " names; it needs " +
                       std::to_string(lo) + " to " + std::to_string(hi)};
        }
        std::vector<std::string> names;
        for (const std::string& l : f.labels) {
          if (Status st = check_name(l, "name in " + where); !st) return st;
          if (std::find(names.begin(), names.end(), l) != names.end()) {
            return Error{where + " names \"" + l + "\" twice"};
          }
          names.push_back(l);
        }
        break;
      }
      case FieldKind::Int:
        if (f.min > f.max || int64_t(f.max) - f.min > kMaxCode) {
          return Error{where + " needs min <= max and at most 2^24 values"};
        }
        break;
      case FieldKind::Fixed:
      case FieldKind::Point3: {
        uint32_t axes = f.kind == FieldKind::Fixed ? 1 : 3;
        if (!finite(f.lo) || !finite(f.hi) || !std::isfinite(f.step) || !(f.step > 0.0f)) {
          return Error{where + " needs finite bounds and a step above 0"};
        }
        for (uint32_t a = 0; a < axes; ++a) {
          if (f.lo[a] > f.hi[a] || steps_between(f.lo[a], f.hi[a], f.step) > kMaxCode) {
            return Error{where + " needs lo <= hi and at most 2^24 steps on each axis"};
          }
        }
        break;
      }
      case FieldKind::Stick:
        if (f.steps < 1 || 2ull * f.steps > kMaxCode) return Error{where + " needs 1 to 8388607 steps per unit"};
        break;
      case FieldKind::Angle:
        if (f.bits < 2 || f.bits > kMaxCodeBits) return Error{where + " needs 2 to 24 bits"};
        break;
      case FieldKind::Direction3:
        if (f.bits < 2 || f.bits > kMaxCodeBits) return Error{where + " needs 2 to 24 bits per axis"};
        break;
      default: return Error{"field \"" + f.name + "\" has an unknown kind " + std::to_string(int(f.kind))};
    }
  }
  return Status::ok();
}

uint32_t Layout::find(std::string_view name) const {
  for (uint32_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].name == name) return i;
  }
  return size();
}

bool Layout::sanitize(Values& v) const {
  const Values before = v;
  for (uint32_t i = 0; i < fields_.size(); ++i) {
    const Field& f = fields_[i];
    uint32_t* c = &v.code[first_[i]];
    switch (f.kind) {
      case FieldKind::Buttons:
      case FieldKind::Angle:
      case FieldKind::Direction3:  // whole bit ranges: masking wraps angles, drops unknown buttons
        for (uint32_t k = 0; k < f.components(); ++k) c[k] &= codes_[first_[i] + k].max_code;
        break;
      case FieldKind::Stick: {
        const int64_t s = f.steps;
        const uint32_t cx = first_[i], cy = first_[i] + 1;
        int64_t x = index_of(cx, std::min(c[0], codes_[cx].max_code));
        int64_t y = index_of(cy, std::min(c[1], codes_[cy].max_code));
        if (!in_disc(x, y, s)) {
          int64_t len = isqrt(x * x + y * y);
          x = x * s / len;
          y = y * s / len;
          while (!in_disc(x, y, s)) {  // a step or two at most
            if (std::abs(x) >= std::abs(y)) x -= x > 0 ? 1 : -1;
            else y -= y > 0 ? 1 : -1;
          }
        }
        c[0] = code_of(cx, x);
        c[1] = code_of(cy, y);
        break;
      }
      default:
        for (uint32_t k = 0; k < f.components(); ++k) c[k] = std::min(c[k], codes_[first_[i] + k].max_code);
    }
  }
  for (uint32_t k = components_; k < kMaxComponents; ++k) v.code[k] = 0;
  return v == before;
}

bool Layout::valid(const Values& v) const {
  Values copy = v;
  return sanitize(copy);
}

bool Layout::boolean(const Values& v, uint32_t field) const { return v.code[first_[field]] != 0; }

bool Layout::button(const Values& v, uint32_t field, uint32_t b) const {
  return b < 32 && ((v.code[first_[field]] >> b) & 1u) != 0;
}

uint32_t Layout::buttons(const Values& v, uint32_t field) const { return v.code[first_[field]]; }

int32_t Layout::integer(const Values& v, uint32_t field) const {
  const Field& f = fields_[field];
  uint32_t c = v.code[first_[field]];
  if (f.kind == FieldKind::Int) return int32_t(int64_t(f.min) + (-codes_[first_[field]].axis.lo) + index_of(first_[field], c));
  return int32_t(c);
}

float Layout::number(const Values& v, uint32_t field) const {
  const Field& f = fields_[field];
  const double steps = double(-codes_[first_[field]].axis.lo + index_of(first_[field], v.code[first_[field]]));
  return to_float(double(f.lo.x) + steps * double(f.step));
}

sim::Vec3 Layout::stick(const Values& v, uint32_t field) const {
  const Field& f = fields_[field];
  const uint32_t* c = &v.code[first_[field]];
  float s = float(f.steps);
  return sim::Vec3(float(index_of(first_[field], c[0])) / s, float(index_of(first_[field] + 1, c[1])) / s, 0.0f);
}

float Layout::angle(const Values& v, uint32_t field) const {
  const Field& f = fields_[field];
  // Code 0 is 0 rad; codes of the upper half are the negative angles.
  const int64_t n = int64_t(1) << f.bits, c = v.code[first_[field]];
  return to_float(double(c >= n / 2 ? c - n : c) * (2 * kPi / double(n)));
}

sim::Vec3 Layout::direction3(const Values& v, uint32_t field) const {
  const uint32_t* c = &v.code[first_[field]];
  double m = double(codes_[first_[field]].max_code);
  return octa_decode(double(c[0]) / m * 2 - 1, double(c[1]) / m * 2 - 1);
}

sim::Vec3 Layout::point3(const Values& v, uint32_t field) const {
  const Field& f = fields_[field];
  const uint32_t* c = &v.code[first_[field]];
  sim::Vec3 p;
  for (uint32_t a = 0; a < 3; ++a) {
    const double steps = double(-codes_[first_[field] + a].axis.lo + index_of(first_[field] + a, c[a]));
    p[int(a)] = to_float(double(f.lo[int(a)]) + steps * double(f.step));
  }
  return p;
}

void Layout::set_code(Values& v, uint32_t component, uint32_t code) const {
  if (component >= components_) return;
  uint32_t field = 0;
  while (field + 1 < fields_.size() && first_[field + 1] <= component) ++field;
  v.code[component] = std::min(code, fields_[field].max_code(component - first_[field]));
}

void Layout::set_bool(Values& v, uint32_t field, bool on) const { v.code[first_[field]] = on ? 1 : 0; }

void Layout::set_button(Values& v, uint32_t field, uint32_t b, bool down) const {
  if (b >= fields_[field].labels.size()) return;
  uint32_t& c = v.code[first_[field]];
  c = down ? (c | (1u << b)) : (c & ~(1u << b));
}

void Layout::set_buttons(Values& v, uint32_t field, uint32_t mask) const {
  v.code[first_[field]] = mask & fields_[field].max_code(0);
}

void Layout::set_integer(Values& v, uint32_t field, int32_t value) const {
  const Field& f = fields_[field];
  if (f.kind == FieldKind::Int) {
    v.code[first_[field]] = f.code_of(0, int64_t(value) - f.min - f.origin(0));
  } else {
    v.code[first_[field]] = uint32_t(std::clamp<int64_t>(value, 0, f.max_code(0)));
  }
}

void Layout::set_number(Values& v, uint32_t field, float value) const {
  const Field& f = fields_[field];
  const uint32_t steps = round_code((double(value) - f.lo.x) / f.step, f.max_code(0));
  v.code[first_[field]] = f.code_of(0, int64_t(steps) - f.origin(0));
}

void Layout::set_stick(Values& v, uint32_t field, float x, float y) const {
  const Field& f = fields_[field];
  double dx = std::isfinite(x) ? x : 0.0, dy = std::isfinite(y) ? y : 0.0;
  double len = std::sqrt(dx * dx + dy * dy);
  if (len > 1.0) dx /= len, dy /= len;
  uint32_t* c = &v.code[first_[field]];
  c[0] = f.code_of(0, int64_t(round_code(dx * f.steps + f.steps, f.max_code(0))) - f.steps);
  c[1] = f.code_of(1, int64_t(round_code(dy * f.steps + f.steps, f.max_code(1))) - f.steps);
  sanitize(v);
}

void Layout::set_angle(Values& v, uint32_t field, float radians) const {
  const Field& f = fields_[field];
  double r = std::isfinite(radians) ? radians : 0.0;
  double turn = r / (2 * kPi);
  turn -= std::floor(turn);  // [0, 1): code 0 is 0 rad
  uint64_t code = uint64_t(std::floor(turn * double(1u << f.bits) + 0.5));
  v.code[first_[field]] = uint32_t(code) & f.max_code(0);
}

void Layout::set_direction3(Values& v, uint32_t field, sim::Vec3 dir) const {
  const Field& f = fields_[field];
  double u, w;
  octa_encode(dir, u, w);
  double m = double(f.max_code(0));
  uint32_t* c = &v.code[first_[field]];
  c[0] = round_code((u + 1) / 2 * m, f.max_code(0));
  c[1] = round_code((w + 1) / 2 * m, f.max_code(1));
}

void Layout::set_point3(Values& v, uint32_t field, sim::Vec3 p) const {
  const Field& f = fields_[field];
  uint32_t* c = &v.code[first_[field]];
  for (uint32_t a = 0; a < 3; ++a) {
    const uint32_t steps = round_code((double(p[int(a)]) - f.lo[int(a)]) / f.step, f.max_code(a));
    c[a] = f.code_of(a, int64_t(steps) - f.origin(a));
  }
}

std::string Layout::format(const Values& v, uint32_t field) const {
  const Field& f = fields_[field];
  switch (f.kind) {
    case FieldKind::Bool: return boolean(v, field) ? "true" : "false";
    case FieldKind::Buttons: {
      std::string out;
      for (uint32_t b = 0; b < f.labels.size(); ++b) {
        if (button(v, field, b)) out += (out.empty() ? "" : "|") + f.labels[b];
      }
      return out.empty() ? "-" : out;
    }
    case FieldKind::Int: return std::to_string(integer(v, field));
    case FieldKind::Enum: {
      uint32_t c = v.code[first_[field]];
      return c < f.labels.size() ? f.labels[c] : std::to_string(c);
    }
    case FieldKind::Fixed: return number_text(number(v, field));
    case FieldKind::Stick: {
      sim::Vec3 s = stick(v, field);
      return "(" + number_text(s.x) + ", " + number_text(s.y) + ")";
    }
    case FieldKind::Angle: return number_text(angle(v, field));
    case FieldKind::Direction3:
    case FieldKind::Point3: {
      sim::Vec3 p = f.kind == FieldKind::Point3 ? point3(v, field) : direction3(v, field);
      return "(" + number_text(p.x) + ", " + number_text(p.y) + ", " + number_text(p.z) + ")";
    }
  }
  return "?";
}

std::string Layout::format(const Values& v) const {
  std::string out;
  for (uint32_t i = 0; i < fields_.size(); ++i) {
    if (i) out += ' ';
    out += fields_[i].name + "=" + format(v, i);
  }
  return out;
}

std::string Layout::describe() const {
  std::string out;
  for (const Field& f : fields_) {
    std::string range;
    switch (f.kind) {
      case FieldKind::Bool: range = "false|true"; break;
      case FieldKind::Buttons:
      case FieldKind::Enum:
        for (const std::string& l : f.labels) range += (range.empty() ? "" : f.kind == FieldKind::Enum ? "|" : " ") + l;
        break;
      case FieldKind::Int: range = std::to_string(f.min) + " .. " + std::to_string(f.max); break;
      case FieldKind::Fixed:
        range = number_text(f.lo.x) + " .. " + number_text(f.hi.x) + " step " + number_text(f.step);
        break;
      case FieldKind::Stick: range = "unit disc, " + std::to_string(f.steps) + " steps per unit"; break;
      case FieldKind::Angle: range = "[-pi, pi) in 2^" + std::to_string(f.bits) + " steps"; break;
      case FieldKind::Direction3: range = "unit vector, " + std::to_string(f.bits) + " bits per axis"; break;
      case FieldKind::Point3:
        range = "(" + number_text(f.lo.x) + ", " + number_text(f.lo.y) + ", " + number_text(f.lo.z) + ") .. (" +
                number_text(f.hi.x) + ", " + number_text(f.hi.y) + ", " + number_text(f.hi.z) + ") step " +
                number_text(f.step);
        break;
    }
    uint32_t bits = 0;
    for (uint32_t c = 0; c < f.components(); ++c) bits += f.code_bits(c);
    out += "  " + f.name + ": " + kind_name(f.kind) + " " + range + " (" + std::to_string(bits) + " bits in full)\n";
  }
  return out;
}

uint32_t Layout::full_bits() const {
  uint32_t bits = 0;
  for (const Field& f : fields_) {
    for (uint32_t c = 0; c < f.components(); ++c) bits += f.code_bits(c);
  }
  return bits;
}

// A layout is one field list over the direction (keel/base/byte_io.h: a ByteWriter with
// a const layout, or a FieldReader); the reader's checks sit under IO::kReading.
namespace {

template <class IO, class F>
void visit_field(IO& io, F& f) {
  io.str(f.name, kMaxNameBytes, "field name");
  uint8_t kind = uint8_t(f.kind);
  io.u8(kind);
  if constexpr (IO::kReading) {
    if (io.ok() && kind > uint8_t(FieldKind::Point3)) io.fail("field kind " + std::to_string(kind) + " is unknown");
    f.kind = FieldKind(kind);
  }
  uint32_t min = uint32_t(f.min), max = uint32_t(f.max);
  io.u32(min);
  io.u32(max);
  if constexpr (IO::kReading) {
    f.min = int32_t(min);
    f.max = int32_t(max);
  }
  io.count(f.labels, 4, kMaxLabels, "field label");
  for (auto& l : f.labels) io.str(l, kMaxNameBytes, "field label");
  for (int a = 0; a < 3; ++a) io.f32(f.lo[a]);
  for (int a = 0; a < 3; ++a) io.f32(f.hi[a]);
  io.f32(f.step);
  io.u32(f.steps);
  io.u32(f.bits);
}

template <class IO, class L>
void visit_layout(IO& io, L& layout) {
  uint32_t n = layout.size();
  if constexpr (IO::kReading) {
    n = io.reader().count(12, kMaxFields, "layout field");
  } else {
    io.u32(n);
  }
  for (uint32_t i = 0; i < n && io.ok(); ++i) {
    if constexpr (IO::kReading) {
      Field f;
      visit_field(io, f);
      layout.add(std::move(f));
    } else {
      visit_field(io, layout.fields()[i]);
    }
  }
}

}  // namespace

void write_layout(const Layout& layout, std::vector<uint8_t>& out) {
  keel::ByteWriter w(out);
  visit_layout(w, layout);
}

Expected<Layout> read_layout(std::span<const uint8_t> bytes, size_t& offset) {
  if (offset > bytes.size()) return Error{"layout: offset past the end"};
  keel::ByteReader r(bytes.subspan(offset));
  keel::FieldReader io(r);
  Layout layout;
  visit_layout(io, layout);
  if (!r.ok()) return Error{"layout is damaged: " + r.error()};
  if (Status st = layout.validate(); !st) return Error{"layout is invalid: " + st.error().message};
  offset += r.position();
  return layout;
}

}  // namespace keel::game
