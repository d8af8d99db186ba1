// keel-detrun — the determinism runner: checks binary scenes against golden hash chains.
//
// The same checks as `keel-sim determinism`, in a binary that needs only the sim library
// and header-only FlatBuffers, glm and xxHash, so it builds for every configuration the
// determinism check covers (gcc -O0, clang, an aarch64 cross compiler under qemu). Its
// command line is parsed by hand for the same reason: no CLI11 on those builds.
#include "check.h"
#include "scene_binary.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>

namespace {

constexpr const char* kUsage =
    "usage: keel-detrun [--write] [--match] [--ticks N] [--every K] [--threads T]\n"
    "                   [--restore-at T1,T2,...] [--timing] --golden DIR SCENE.kscn...\n"
    "Checks (or with --write, writes) the golden hash chain of each binary scene;\n"
    "prints `ok SCENE` or `mismatch SCENE at tick T: golden H1 got H2` per scene,\n"
    "and with --timing a `timing SCENE ...` line of step times after each check.\n"
    "Exit 0 when all pass, 1 on any mismatch or error, 2 on a bad command line.\n";

bool parse_u64(std::string_view s, uint64_t& out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_list(std::string_view s, std::vector<uint64_t>& out) {
  while (!s.empty()) {
    const size_t comma = s.find(',');
    uint64_t v = 0;
    if (!parse_u64(s.substr(0, comma), v)) return false;
    out.push_back(v);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return !out.empty();
}

int usage_error(const std::string& what) {
  std::fprintf(stderr, "keel-detrun: %s\n%s", what.c_str(), kUsage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  keel::det::DeterminismOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    uint64_t v = 0;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--write") {
      o.write = true;
    } else if (arg == "--match") {
      o.match = true;
    } else if (arg == "--timing") {
      o.timing = true;
    } else if (arg == "--golden" && has_value) {
      o.golden_dir = argv[++i];
    } else if (arg == "--ticks" && has_value && parse_u64(argv[i + 1], v) && v <= (uint64_t(1) << 40)) {
      o.ticks = v;
      ++i;
    } else if (arg == "--every" && has_value && parse_u64(argv[i + 1], v) && v > 0 && v <= (uint64_t(1) << 40)) {
      o.every = v;
      ++i;
    } else if (arg == "--threads" && has_value && parse_u64(argv[i + 1], v) && v >= 1 && v <= 256) {
      o.threads = uint32_t(v);
      ++i;
    } else if (arg == "--restore-at" && has_value && parse_list(argv[i + 1], o.restore_at)) {
      ++i;
    } else if (arg.rfind("--", 0) == 0) {
      return usage_error("bad option or value: " + std::string(arg));
    } else {
      o.scenes.emplace_back(arg);
    }
  }
  if (o.golden_dir.empty()) return usage_error("--golden DIR is required");
  if (o.scenes.empty()) return usage_error("give at least one scene");
  if (o.write && !o.restore_at.empty()) return usage_error("--restore-at checks a golden; it does not go with --write");
  if (o.write && o.timing) return usage_error("--timing times a check; it does not go with --write");
  return keel::det::run_determinism(o, keel::det::load_binary_scene);
}
