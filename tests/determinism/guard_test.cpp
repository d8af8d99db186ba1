// Guards on the determinism rules (docs/determinism.md): nothing that steps a
// world may call a libm transcendental function, and everything must be compiled without
// floating-point contraction or fast-math. Checked on the built artefacts and the
// compile commands CMake exports, so a new file, flag or call cannot slip past.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

// ---- libm symbols --------------------------------------------------------------------

std::set<std::string> forbidden_symbols() {
  std::ifstream in(std::string(KEEL_SOURCE_DIR) + "/tests/determinism/libm_symbols.txt");
  std::set<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    for (const char* suffix : {"", "f", "l"}) {
      names.insert(line + suffix);
      names.insert("__" + line + suffix + "_finite");
    }
  }
  return names;
}

/// The nm lines (`nm -A` output) whose symbol, version suffix dropped, is forbidden.
std::vector<std::string> forbidden_in(const std::string& nm_output, const std::set<std::string>& forbidden) {
  std::vector<std::string> hits;
  std::istringstream lines(nm_output);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t start = line.find_last_of(" \t");
    std::string symbol = start == std::string::npos ? line : line.substr(start + 1);
    symbol = symbol.substr(0, symbol.find('@'));
    if (forbidden.count(symbol) > 0) hits.push_back(line);
  }
  return hits;
}

struct CommandResult {
  int status = -1;
  std::string output;
};

CommandResult run(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  r.status = pclose(pipe);
  return r;
}

void expect_no_libm(const std::string& artefact) {
  const std::set<std::string> forbidden = forbidden_symbols();
  ASSERT_GT(forbidden.size(), 50u) << "tests/determinism/libm_symbols.txt is missing or empty";
  const CommandResult nm = run("nm -A '" + artefact + "'");
  ASSERT_EQ(nm.status, 0) << "nm " << artefact << " failed:\n" << nm.output;
  ASSERT_NE(nm.output.find("sqrt"), std::string::npos) << "nm output of " << artefact << " looks empty";
  std::string report;
  for (const std::string& hit : forbidden_in(nm.output, forbidden)) report += "  " + hit + "\n";
  EXPECT_TRUE(report.empty()) << artefact << " references libm transcendental functions; use keel::sim::dmath "
                              << "(sim/include/keel/sim/det_math.h) instead:\n" << report;
}

TEST(LibmGuard, MatcherCatchesEveryForm) {
  const std::string nm_output =
      "lib.a:a.o:                 U sinf\n"
      "lib.a:a.o:                 U sqrt\n"
      "lib.a:b.o:                 U __exp_finite\n"
      "keel-detrun:                 U powl@GLIBC_2.2.5\n"
      "keel-detrun:                 U atan2f@GLIBC_2.27\n"
      "keel-detrun:0000000000001234 T _ZN4keel3sim5dmath3sinEf\n"
      "keel-detrun:                 U sqrtf@GLIBC_2.2.5\n"
      "keel-detrun:                 U cosine_table\n";
  const std::vector<std::string> hits = forbidden_in(nm_output, forbidden_symbols());
  ASSERT_EQ(hits.size(), 4u);
  EXPECT_NE(hits[0].find("sinf"), std::string::npos);
  EXPECT_NE(hits[1].find("__exp_finite"), std::string::npos);
  EXPECT_NE(hits[2].find("powl"), std::string::npos);
  EXPECT_NE(hits[3].find("atan2f"), std::string::npos);
}

TEST(LibmGuard, SimLibraryCallsNoLibmTranscendental) { expect_no_libm(std::string(KEEL_BINARY_DIR) + "/lib/libkeel_sim.a"); }

TEST(LibmGuard, DeterminismRunnerCallsNoLibmTranscendental) {
  expect_no_libm(std::string(KEEL_BINARY_DIR) + "/bin/keel-detrun");
}

// ---- compile flags -------------------------------------------------------------------

struct CompileEntry {
  std::string file;
  std::string command;
};

/// Reads CMake's compile_commands.json: an array of objects whose values are strings.
class CompileCommandsReader {
 public:
  explicit CompileCommandsReader(const std::string& text) : s_(text) {}

  bool read(std::vector<CompileEntry>& out) {
    if (!expect('[')) return false;
    if (peek() == ']') return true;
    for (;;) {
      CompileEntry e;
      if (!object(e)) return false;
      out.push_back(e);
      if (peek() == ',') {
        ++i_;
        continue;
      }
      return expect(']');
    }
  }

 private:
  char peek() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  bool expect(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  bool string(std::string& out) {
    if (!expect('"')) return false;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;  // \" and \\ are all CMake writes
      out += s_[i_++];
    }
    return expect('"');
  }
  bool object(CompileEntry& e) {
    if (!expect('{')) return false;
    for (;;) {
      std::string key, value;
      if (!string(key) || !expect(':') || !string(value)) return false;
      if (key == "file") e.file = value;
      if (key == "command") e.command = value;
      if (peek() == ',') {
        ++i_;
        continue;
      }
      return expect('}');
    }
  }

  const std::string& s_;
  size_t i_ = 0;
};

/// What is wrong with one compile command, or "" when it keeps the rounding rules.
std::string flag_problem(const std::string& command) {
  std::istringstream words(command);
  std::string w, contract;
  while (words >> w) {
    if (w.rfind("-ffp-contract=", 0) == 0) contract = w;  // the last one wins
    for (const char* bad : {"-ffast-math", "-Ofast", "-funsafe-math-optimizations", "-fassociative-math",
                            "-freciprocal-math", "-ffinite-math-only", "-fno-signed-zeros", "-mfpmath=387"}) {
      if (w == bad) return "has " + w;
    }
  }
  if (contract != "-ffp-contract=off") return contract.empty() ? "lacks -ffp-contract=off" : "ends with " + contract;
  return {};
}

TEST(BuildFlags, ReaderAndRulesOnASample) {
  const std::string json = R"([
{
  "directory": "/b",
  "command": "/usr/bin/c++ -I\"/a b\" -O3 -ffp-contract=off -fno-fast-math -o x.o -c /s/sim/src/world.cpp",
  "file": "/s/sim/src/world.cpp",
  "output": "x.o"
},
{
  "directory": "/b",
  "command": "/usr/bin/c++ -ffp-contract=off -ffp-contract=fast -c /s/y.cpp",
  "file": "/s/y.cpp"
}
])";
  std::vector<CompileEntry> entries;
  ASSERT_TRUE(CompileCommandsReader(json).read(entries));
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].file, "/s/sim/src/world.cpp");
  EXPECT_EQ(flag_problem(entries[0].command), "");
  EXPECT_EQ(flag_problem(entries[1].command), "ends with -ffp-contract=fast");
  EXPECT_EQ(flag_problem("c++ -O2 -c a.cpp"), "lacks -ffp-contract=off");
  EXPECT_EQ(flag_problem("c++ -ffp-contract=off -Ofast -c a.cpp"), "has -Ofast");
}

TEST(BuildFlags, EveryCompileCommandDisablesContractionAndFastMath) {
  const std::string path = std::string(KEEL_BINARY_DIR) + "/compile_commands.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path << " is missing (the top-level CMakeLists.txt sets CMAKE_EXPORT_COMPILE_COMMANDS)";
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<CompileEntry> entries;
  ASSERT_TRUE(CompileCommandsReader(text).read(entries)) << path << " does not parse";
  size_t sim_files = 0, runner_files = 0;
  std::string report;
  for (const CompileEntry& e : entries) {
    if (e.file.find("/sim/src/") != std::string::npos) ++sim_files;
    if (e.file.find("/tools/keel-detrun/") != std::string::npos) ++runner_files;
    if (std::string problem = flag_problem(e.command); !problem.empty()) report += "  " + e.file + ": " + problem + "\n";
  }
  // Everything that steps a world must be there, or the check would pass vacuously.
  EXPECT_GE(sim_files, 10u);
  EXPECT_GE(runner_files, 3u);
  EXPECT_TRUE(report.empty()) << "compile commands that break the rounding rules (docs/determinism.md):\n" << report;
}

}  // namespace
