// keel-replay view, part 2: the collected run written as one self-contained HTML page.
// Poses are sampled (every K-th tick, K chosen so the page fits its size budget) and
// quaternions quantised for drawing; hashes are kept for every tick, exactly. The byte
// layout of each blob is docs/replay.md, "The viewer page".
#include <keel/replay/view.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

namespace keel::replay::view {

namespace assets {
extern const std::string_view kPage;    // replay/tool/viewer/page.html
extern const std::string_view kScript;  // replay/tool/viewer/viewer.js
extern const std::string_view kThree;   // replay/tool/viewer/vendor/three-bundle.min.js
}  // namespace assets

namespace {

using Bytes = std::vector<uint8_t>;

void put_u16(Bytes& b, uint16_t v) {
  b.push_back(uint8_t(v));
  b.push_back(uint8_t(v >> 8));
}
void put_u32(Bytes& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
}
void put_u64(Bytes& b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(uint8_t(v >> (8 * i)));
}
void put_f32(Bytes& b, float f) {
  uint32_t v;
  std::memcpy(&v, &f, 4);
  put_u32(b, v);
}
void put_vec(Bytes& b, const sim::Vec3& v) {
  put_f32(b, v.x);
  put_f32(b, v.y);
  put_f32(b, v.z);
}
int16_t quat_component(float c) {
  if (!std::isfinite(c)) return 0;
  return int16_t(std::lround(std::clamp(c, -1.0f, 1.0f) * kQuatScale));
}
void put_quat(Bytes& b, const sim::Quat& q) {
  for (float c : {q.x, q.y, q.z, q.w}) put_u16(b, uint16_t(quat_component(c)));
}
// A velocity component for display: the float's upper 16 bits, rounded to nearest even
// (bfloat16: the float's range, about three significant digits).
uint16_t bfloat16(float f) {
  uint32_t v;
  std::memcpy(&v, &f, 4);
  if ((v & 0x7f800000u) == 0x7f800000u) return uint16_t(v >> 16 | ((v & 0xffffu) != 0 ? 0x40u : 0u));
  return uint16_t((v + 0x7fffu + ((v >> 16) & 1u)) >> 16);
}
void put_bf16(Bytes& b, const sim::Vec3& v) {
  for (float c : {v.x, v.y, v.z}) put_u16(b, bfloat16(c));
}
int8_t normal_component(float c) {
  if (!std::isfinite(c)) return 0;
  return int8_t(std::lround(std::clamp(c, -1.0f, 1.0f) * 127.0f));
}

std::string base64(const Bytes& in) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = uint32_t(in[i]) << 16 | uint32_t(in[i + 1]) << 8 | in[i + 2];
    for (int s : {18, 12, 6, 0}) out.push_back(kAlphabet[(v >> s) & 63]);
  }
  if (i < in.size()) {
    uint32_t v = uint32_t(in[i]) << 16 | (i + 1 < in.size() ? uint32_t(in[i + 1]) << 8 : 0u);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

size_t base64_size(size_t n) { return (n + 2) / 3 * 4; }

// The ticks drawn: every `every`-th from the first, the last, and the first differing one.
std::vector<size_t> sample_frames(const Data& d, uint64_t every) {
  std::vector<size_t> out;
  const size_t n = d.frames.size();
  std::optional<size_t> forced;
  if (d.against && d.against->first_tick && *d.against->first_tick >= d.first_tick) {
    forced = size_t(*d.against->first_tick - d.first_tick);
  }
  for (size_t i = 0; i < n; ++i) {
    if (i % every == 0 || i + 1 == n || (forced && i == *forced)) out.push_back(i);
  }
  return out;
}

// One record per body whose stored state changed since its last record (static and
// sleeping bodies cost nothing), and one "removed" record when a body disappears.
Bytes encode_poses(const Data& d, const std::vector<size_t>& samples) {
  Bytes out;
  std::vector<Bytes> last(d.bodies.size());
  std::vector<bool> alive(d.bodies.size(), false), seen;
  Bytes rec;
  for (size_t s : samples) {
    const Frame& f = d.frames[s];
    Bytes records;
    uint32_t count = 0;
    seen.assign(d.bodies.size(), false);
    for (const Pose& p : f.poses) {
      seen[p.body] = true;
      rec.clear();
      put_quat(rec, p.rotation);
      put_vec(rec, p.position);
      put_bf16(rec, p.linear_velocity);
      put_bf16(rec, p.angular_velocity);
      rec.push_back(p.sleeping ? 1 : 0);
      if (alive[p.body] && rec == last[p.body]) continue;
      alive[p.body] = true;
      last[p.body] = rec;
      put_u16(records, uint16_t(p.body));
      records.push_back(p.sleeping ? 1 : 0);
      put_vec(records, p.position);
      put_quat(records, p.rotation);
      put_bf16(records, p.linear_velocity);
      put_bf16(records, p.angular_velocity);
      ++count;
    }
    for (size_t b = 0; b < alive.size(); ++b) {
      if (!alive[b] || seen[b]) continue;
      alive[b] = false;
      put_u16(records, uint16_t(b));
      records.push_back(2);
      ++count;
    }
    put_u32(out, count);
    out.insert(out.end(), records.begin(), records.end());
  }
  return out;
}

Bytes encode_against(const Data& d, const std::vector<size_t>& samples) {
  Bytes out;
  if (!d.against || !d.against->first_tick) return out;
  const uint64_t first = *d.against->first_tick;
  for (size_t s : samples) {
    const uint64_t tick = d.frames[s].tick;
    const std::vector<Pose>* poses = nullptr;
    if (tick >= first && tick - first < d.against->poses.size()) poses = &d.against->poses[size_t(tick - first)];
    put_u32(out, poses ? uint32_t(poses->size()) : 0u);
    if (!poses) continue;
    for (const Pose& p : *poses) {
      put_u16(out, uint16_t(p.body));
      out.push_back(p.absent ? 1 : 0);
      put_vec(out, p.position);
      put_quat(out, p.rotation);
      put_vec(out, p.linear_velocity);  // exact: a desync may start as a velocity difference
      put_vec(out, p.angular_velocity);
    }
  }
  return out;
}

Bytes encode_contacts(const Data& d, const std::vector<size_t>& samples, uint64_t every_nth_sample) {
  Bytes out;
  for (size_t k = 0; k < samples.size(); k += every_nth_sample) {
    const Frame& f = d.frames[samples[k]];
    put_u32(out, uint32_t(f.contacts.size()));
    for (const ContactPoint& c : f.contacts) {
      put_vec(out, c.point);
      for (float n : {c.normal.x, c.normal.y, c.normal.z}) out.push_back(uint8_t(normal_component(n)));
    }
  }
  return out;
}

nlohmann::ordered_json vec(const sim::Vec3& v) { return nlohmann::ordered_json::array({v.x, v.y, v.z}); }
nlohmann::ordered_json quat(const sim::Quat& q) { return nlohmann::ordered_json::array({q.x, q.y, q.z, q.w}); }

// Bodies refer to a table of distinct shapes (a match throws many identical balls).
void bodies_json(const Data& d, nlohmann::ordered_json& meta) {
  nlohmann::ordered_json shapes = nlohmann::ordered_json::array();
  std::map<std::string, size_t> shape_index;
  nlohmann::ordered_json bodies = nlohmann::ordered_json::array();
  for (const Body& b : d.bodies) {
    nlohmann::ordered_json refs = nlohmann::ordered_json::array();
    for (const Shape& s : b.shapes) {
      nlohmann::ordered_json j = {{"type", s.type}, {"center", vec(s.center)}, {"rotation", quat(s.rotation)},
                                  {"radius", s.radius}, {"half_height", s.half_height}, {"half_extents", vec(s.half_extents)},
                                  {"bounds", vec(s.bounds)}, {"trigger", s.trigger}};
      if (!s.indices.empty()) {
        j["vertices"] = s.vertices;
        j["indices"] = s.indices;
      }
      if (s.rows > 0) {
        j["rows"] = s.rows;
        j["columns"] = s.columns;
        j["cell_size"] = s.cell_size;
        j["heights"] = s.heights;
        j["origin"] = {s.origin[0], s.origin[1]};
      }
      auto [it, added] = shape_index.try_emplace(j.dump(), shapes.size());
      if (added) shapes.push_back(std::move(j));
      refs.push_back(it->second);
    }
    bodies.push_back({{"id", b.id}, {"motion", sim::to_string(b.motion)}, {"role", b.role}, {"kind", b.kind},
                      {"shapes", std::move(refs)}});
  }
  meta["shapes"] = std::move(shapes);
  meta["bodies"] = std::move(bodies);
}

nlohmann::ordered_json against_json(const Data& d) {
  if (!d.against) return nullptr;
  const Against& g = *d.against;
  nlohmann::ordered_json j = {{"path", g.path}, {"kind", g.kind}, {"note", g.note}};
  j["first_tick"] = g.first_tick ? nlohmann::ordered_json(*g.first_tick) : nlohmann::ordered_json(nullptr);
  j["hash_a"] = hex_hash(g.hash_a);
  j["hash_b"] = hex_hash(g.hash_b);
  j["inputs_at"] = g.inputs_at ? nlohmann::ordered_json(*g.inputs_at) : nlohmann::ordered_json(nullptr);
  j["common_last"] = g.common_last;
  j["diff_bodies"] = g.diff_bodies;
  j["reruns_agree"] = g.reruns_agree;
  j["ticks_with_other_state"] = g.poses.size();
  return j;
}

// Ticks whose re-run hash differs from the recorded one (the page marks them).
nlohmann::ordered_json not_reproduced(const Data& d) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t i = 0; i < d.frames.size() && i < d.recorded_hashes.size(); ++i) {
    if (d.frames[i].hash != d.recorded_hashes[i]) out.push_back(d.frames[i].tick);
    if (out.size() >= 1000) break;
  }
  return out;
}

// JSON and base64 inside <script> elements: '<' never appears raw, so no "</script>"
// or "<!--" in a path or a scene name can end the element early.
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') out += "\\u003c";
    else out.push_back(c);
  }
  return out;
}

std::string data_block(const std::string& id, const std::string& type, const std::string& body) {
  return "<script type=\"" + type + "\" id=\"" + id + "\">" + body + "</script>\n";
}

// The template with each marker replaced. Markers are found in the template alone, before
// anything is inserted, so inserted text can never be mistaken for one.
keel::Expected<std::string> fill(std::string_view tpl, const std::vector<std::pair<std::string_view, std::string_view>>& parts) {
  std::vector<std::pair<size_t, size_t>> at;  // (template offset, part index)
  for (size_t i = 0; i < parts.size(); ++i) {
    size_t pos = tpl.find(parts[i].first);
    if (pos == std::string_view::npos) return keel::Error{"the viewer page template lacks " + std::string(parts[i].first) + " (a build problem)"};
    at.emplace_back(pos, i);
  }
  std::sort(at.begin(), at.end());
  std::string out;
  size_t from = 0;
  for (auto [pos, i] : at) {
    out.append(tpl.substr(from, pos - from));
    out.append(parts[i].second);
    from = pos + parts[i].first.size();
  }
  out.append(tpl.substr(from));
  return out;
}

struct Blobs {
  Bytes ticks, hashes, poses, against, contacts;
  uint64_t every = 1, contact_every = 0;
  size_t encoded_size() const {
    return base64_size(ticks.size()) + base64_size(hashes.size()) + base64_size(poses.size()) +
           base64_size(against.size()) + base64_size(contacts.size());
  }
};

Blobs encode(const Data& d, uint64_t every) {
  Blobs b;
  b.every = every;
  std::vector<size_t> samples = sample_frames(d, every);
  for (size_t s : samples) put_u32(b.ticks, uint32_t(d.frames[s].tick - d.first_tick));
  for (uint64_t h : d.recorded_hashes) put_u64(b.hashes, h);
  b.poses = encode_poses(d, samples);
  b.against = encode_against(d, samples);
  return b;
}

// The smallest stride whose poses fit most of the budget, then the densest contact
// sampling that fits what is left (none if nothing does).
Blobs choose(const Data& d, const PageOptions& o, size_t fixed) {
  const uint64_t n = std::max<uint64_t>(1, d.frames.size());
  Blobs b;
  if (o.every > 0) {
    b = encode(d, o.every);
  } else {
    const uint64_t pose_budget = o.max_bytes > fixed ? (o.max_bytes - fixed) * 85 / 100 : 0;
    for (uint64_t every : {1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 30, 60, 120, 300, 600}) {
      b = encode(d, every);
      if (b.encoded_size() <= pose_budget || every >= n) break;
    }
  }
  std::vector<size_t> samples = sample_frames(d, b.every);
  const size_t left = o.max_bytes > fixed + b.encoded_size() ? o.max_bytes - fixed - b.encoded_size() : 0;
  for (uint64_t nth : {1, 2, 3, 4, 5, 6, 10, 15, 30, 60, 120, 600}) {
    Bytes c = encode_contacts(d, samples, nth);
    if (base64_size(c.size()) <= left) {
      b.contacts = std::move(c);
      b.contact_every = nth * b.every;
      break;
    }
  }
  return b;
}

// The game events for the timeline marks and the status panel.
nlohmann::ordered_json events_json(const Data& d) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const EventMark& e : d.events) out.push_back({{"tick", e.tick}, {"name", e.name}, {"payload", e.payload}});
  return out;
}

nlohmann::ordered_json meta_json(const Data& d, const Blobs& b) {
  const Header& h = d.header;
  nlohmann::ordered_json warnings = d.warnings;
  nlohmann::ordered_json meta = {{"format", "keel-view-1"},
          {"source", d.source},
          {"scene", d.scene_name},
          {"build", {{"keel_version", h.keel_version}, {"build_id", h.build_id}, {"compiler", h.compiler},
                     {"flags", h.compiler_flags}, {"target", h.target}, {"game", h.game}}},
          {"tick_rate", h.tick_rate},
          {"first_tick", d.first_tick},
          {"last_tick", d.first_tick + (d.frames.empty() ? 0 : d.frames.size() - 1)},
          {"every", b.every},
          {"contact_every", b.contact_every},
          {"quat_scale", kQuatScale},
          {"not_reproduced", not_reproduced(d)},
          {"against", against_json(d)},
          {"events", events_json(d)},
          {"warnings", std::move(warnings)}};
  bodies_json(d, meta);
  return meta;
}

}  // namespace

keel::Expected<Page> render(const Data& d, const PageOptions& o) {
  if (d.frames.empty()) return keel::Error{d.source + ": no ticks to show"};
  if (d.bodies.size() > 65535) return keel::Error{d.source + ": more than 65,535 bodies; the page cannot show them"};
  const size_t fixed = assets::kPage.size() + assets::kScript.size() + assets::kThree.size() + 64 * 1024;
  Blobs b = choose(d, o, fixed);
  const std::string text = "text/plain";
  std::string data = data_block("keel-meta", "application/json", script_safe(meta_json(d, b).dump()));
  data += data_block("keel-ticks", text, base64(b.ticks));
  data += data_block("keel-hashes", text, base64(b.hashes));
  data += data_block("keel-poses", text, base64(b.poses));
  data += data_block("keel-against", text, base64(b.against));
  data += data_block("keel-contacts", text, base64(b.contacts));
  auto html = fill(assets::kPage, {{"<!--KEEL:DATA-->", data}, {"/*KEEL:THREE*/", assets::kThree}, {"/*KEEL:VIEWER*/", assets::kScript}});
  if (!html) return html.error();
  Page page;
  page.every = b.every;
  page.contact_every = b.contact_every;
  page.html = std::move(*html);
  return page;
}

}  // namespace keel::replay::view
