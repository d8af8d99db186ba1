#include "golden.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <system_error>

namespace keel::det {

namespace {

constexpr std::string_view kMagic = "keel-golden";

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

template <class T>
std::optional<T> parse_uint(std::string_view s) {
  T v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}


std::optional<uint64_t> parse_hash(std::string_view s) {
  if (s.size() != 16) return std::nullopt;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
  }
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v, 16);
  return v;
}

/// Reads one file line by line, keeping the first error with its line number.
class Parser {
 public:
  explicit Parser(const std::string& source) : source_(source) {}

  keel::Expected<Golden> parse(std::string_view text) {
    size_t pos = 0;
    while (pos < text.size() && error_.empty()) {
      size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(pos, end - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++line_no_;
      parse_line(line);
      pos = end + 1;
    }
    if (error_.empty()) finish();
    if (!error_.empty()) return keel::Error{error_};
    return std::move(golden_);
  }

 private:
  bool fail(const std::string& what) {
    if (error_.empty()) error_ = source_ + ":" + std::to_string(line_no_) + ": " + what;
    return false;
  }

  void parse_line(std::string_view line) {
    std::vector<std::string_view> w = split_words(line);
    if (line_no_ == 1) {
      if (w.size() != 2 || w[0] != kMagic) {
        fail("not a Keel golden file (the first line must be \"keel-golden 2\")");
      } else if (w[1] == "1") {
        version_ = 1;  // world chains read the same; a match's frames changed in version 2
      } else if (w[1] != "2") {
        fail("golden format version " + std::string(w[1]) + " is not supported (this build reads 1 and 2)");
      }
      return;
    }
    if (w.empty() || w[0].front() == '#') return;
    if (w[0] == "tick") return tick(w);
    if (w[0] == "input") return input(w);
    if (body_started_) {
      fail("header line \"" + std::string(w[0]) + "\" after the first input or tick line");
      return;
    }
    header(w, line);
  }

  void header(const std::vector<std::string_view>& w, std::string_view line) {
    if (w[0] == "scene") {
      // The scene path may contain spaces: everything after "scene ".
      std::string_view rest = line.substr(line.find("scene") + 5);
      while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
      golden_.scene = std::string(rest);
      return;
    }
    if (w[0] == "kind") {
      if (w.size() == 2 && w[1] == "world") {
        golden_.kind = ChainKind::World;
      } else if (w.size() == 3 && w[1] == "match" && version_ == 1) {
        fail("a version 1 match golden holds the sandbox's old fixed input fields; regenerate it (version 2 holds "
             "the game's input codes)");
      } else if (w.size() == 3 && w[1] == "match") {
        golden_.kind = ChainKind::Match;
        golden_.rules = std::string(w[2]);
      } else {
        fail("kind must be \"world\" or \"match RULES\"");
      }
      have_kind_ = true;
      return;
    }
    if (w[0] == "ticks" || w[0] == "every") {
      auto v = w.size() == 2 ? parse_uint<uint64_t>(w[1]) : std::nullopt;
      const bool is_ticks = w[0] == "ticks";
      if (!v || *v > GoldenLimits::kMaxTicks || (!is_ticks && *v == 0)) {
        fail(std::string(w[0]) + " must be an integer in " + (is_ticks ? "0" : "1") + ".." +
             std::to_string(GoldenLimits::kMaxTicks));
        return;
      }
      (is_ticks ? golden_.ticks : golden_.every) = *v;
      (is_ticks ? have_ticks_ : have_every_) = true;
      return;
    }
    fail("unknown line \"" + std::string(w[0]) + "\"");
  }

  bool start_body() {
    if (body_started_) return true;
    body_started_ = true;
    if (!have_kind_ || !have_ticks_ || !have_every_) {
      return fail("the header needs kind, ticks and every before the first input or tick line");
    }
    if (golden_.ticks / golden_.every + 1 > GoldenLimits::kMaxHashes) {
      return fail("ticks / every gives more than " + std::to_string(GoldenLimits::kMaxHashes) + " hashes");
    }
    return true;
  }

  void tick(const std::vector<std::string_view>& w) {
    if (!start_body()) return;
    if (w.size() != 3) {
      fail("a tick line is \"tick T HASH\"");
      return;
    }
    auto t = parse_uint<uint64_t>(w[1]);
    const uint64_t expected = uint64_t(golden_.hashes.size()) * golden_.every;
    if (!t || *t != expected || *t > golden_.ticks) {
      fail("expected \"tick " + std::to_string(expected) + " ...\" (ticks run 0, every, 2 every, ... up to ticks)");
      return;
    }
    auto h = parse_hash(w[2]);
    if (!h) {
      fail("tick " + std::to_string(*t) + ": expected 16 lowercase hex digits");
      return;
    }
    golden_.hashes.push_back(*h);
  }

  void input(const std::vector<std::string_view>& w) {
    if (!start_body()) return;
    if (golden_.kind != ChainKind::Match) {
      fail("input lines belong to \"kind match\" goldens only");
      return;
    }
    if (!golden_.hashes.empty()) {
      fail("input lines come before the tick lines");
      return;
    }
    auto t = w.size() >= 4 ? parse_uint<uint64_t>(w[1]) : std::nullopt;
    auto player = w.size() >= 4 ? parse_uint<uint32_t>(w[3]) : std::nullopt;
    if (!t || !player || *player > GoldenLimits::kMaxPlayer) {
      fail("an input line is \"input T join|leave|frame PLAYER ...\"");
      return;
    }
    if (*t >= golden_.ticks || (last_input_tick_ && *t < *last_input_tick_)) {
      fail("input tick " + std::to_string(*t) + " is out of order or not below ticks");
      return;
    }
    last_input_tick_ = *t;
    game::TickInputs& in = golden_.inputs[*t];
    if (w[2] == "join" || w[2] == "leave") {
      if (w.size() != 4) {
        fail("\"input T " + std::string(w[2]) + " PLAYER\" takes nothing more");
        return;
      }
      if (!in.inputs.empty()) {
        fail("tick " + std::to_string(*t) + ": join and leave lines come before frame lines");
        return;
      }
      in.events.push_back({w[2] == "join" ? game::PlayerEvent::Kind::Join : game::PlayerEvent::Kind::Leave, *player});
      return;
    }
    if (w[2] != "frame" || w.size() < 4 || w.size() > 4 + game::kMaxComponents) {
      fail("an input frame is \"input T frame PLAYER CODE...\" (the game's input codes, at most " +
           std::to_string(game::kMaxComponents) + ")");
      return;
    }
    frame(in, *t, *player, w);
  }

  void frame(game::TickInputs& in, uint64_t t, uint32_t player, const std::vector<std::string_view>& w) {
    game::InputFrame f;
    for (size_t i = 4; i < w.size(); ++i) {
      auto code = parse_uint<uint32_t>(w[i]);
      if (!code) {
        fail("tick " + std::to_string(t) + ": frame codes do not parse");
        return;
      }
      f.code[i - 4] = *code;
    }
    // Match expects one frame per player, sorted by player id.
    if (!in.inputs.empty() && in.inputs.back().player >= player) {
      fail("tick " + std::to_string(t) + ": frames must be sorted by player, one per player");
      return;
    }
    in.inputs.push_back({player, f});
  }

  void finish() {
    if (!body_started_ && !start_body()) return;
    const uint64_t want = golden_.ticks / golden_.every + 1;
    if (golden_.hashes.size() != want) {
      fail("the chain has " + std::to_string(golden_.hashes.size()) + " tick lines, " +
           std::to_string(want) + " expected (ticks " + std::to_string(golden_.ticks) + ", every " +
           std::to_string(golden_.every) + ")");
    }
  }

  const std::string& source_;
  std::string error_;
  size_t line_no_ = 0;
  int version_ = 2;
  Golden golden_;
  bool have_kind_ = false, have_ticks_ = false, have_every_ = false;
  bool body_started_ = false;
  std::optional<uint64_t> last_input_tick_;
};

}  // namespace

std::string hex_hash(uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, hash);
  return buf;
}

std::string format_golden(const Golden& g) {
  std::string out;
  out += std::string(kMagic) + " " + std::to_string(Golden::kFormatVersion) + "\n";
  out += "# Regenerate with scripts/determinism.sh --write; say why in the commit (docs/determinism.md).\n";
  out += "scene " + g.scene + "\n";
  out += g.kind == ChainKind::World ? std::string("kind world\n") : "kind match " + g.rules + "\n";
  out += "ticks " + std::to_string(g.ticks) + "\n";
  out += "every " + std::to_string(g.every) + "\n";
  for (const auto& [tick, in] : g.inputs) {
    const std::string prefix = "input " + std::to_string(tick) + " ";
    for (const game::PlayerEvent& e : in.events) {
      out += prefix + (e.kind == game::PlayerEvent::Kind::Join ? "join " : "leave ") + std::to_string(e.player) + "\n";
    }
    for (const game::PlayerInput& pi : in.inputs) {
      // Codes up to the last nonzero one (at least one): the rest are 0.
      size_t n = game::kMaxComponents;
      while (n > 1 && pi.frame.code[n - 1] == 0) --n;
      out += prefix + "frame " + std::to_string(pi.player);
      for (size_t c = 0; c < n; ++c) {
        out += ' ';
        out += std::to_string(pi.frame.code[c]);
      }
      out += "\n";
    }
  }
  for (size_t i = 0; i < g.hashes.size(); ++i) {
    out += "tick " + std::to_string(uint64_t(i) * g.every) + " " + hex_hash(g.hashes[i]) + "\n";
  }
  return out;
}

keel::Expected<Golden> parse_golden(std::string_view text, const std::string& source) {
  if (text.size() > GoldenLimits::kMaxFileBytes) {
    return keel::Error{source + ": is " + std::to_string(text.size()) + " bytes, at most " +
                      std::to_string(GoldenLimits::kMaxFileBytes) + " allowed"};
  }
  return Parser(source).parse(text);
}

keel::Expected<Golden> read_golden(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return keel::Error{path + ": cannot open"};
  // Read at most one byte past the limit so a huge file is refused, not loaded.
  std::string text;
  char buf[1 << 16];
  while (in && text.size() <= GoldenLimits::kMaxFileBytes) {
    in.read(buf, sizeof buf);
    text.append(buf, size_t(in.gcount()));
  }
  if (in.bad()) return keel::Error{path + ": read error"};
  return parse_golden(text, path);
}

keel::Status write_golden(const std::string& path, const Golden& golden) {
  // Write beside the target and rename, so an interrupted --write never leaves half a file.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    const std::string text = format_golden(golden);
    out.write(text.data(), std::streamsize(text.size()));
    if (!out) return keel::Error{tmp + ": cannot write"};
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return keel::Error{path + ": cannot replace"};
  return keel::Status::ok();
}

}  // namespace keel::det
