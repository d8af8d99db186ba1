// The keel-token command-line contract (DESIGN.md §6): keygen writes a key, mint prints a
// token that the library parses and a server holding the key admits. Skipped when the
// tool was not built in this build tree.
#include <keel/protocol/handshake.h>
#include <keel/protocol/token.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace kp = keel::protocol;
namespace fs = std::filesystem;

namespace {

std::string run(const std::string& cmd, int& status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
  status = pclose(p);
  return out;
}

}  // namespace

TEST(KeelTokenCli, KeygenThenMintGivesAnAdmissibleToken) {
  fs::path tool = fs::path(KEEL_BINARY_DIR) / "bin" / "keel-token";
  if (!fs::exists(tool)) GTEST_SKIP() << "keel-token not built";
  fs::path key = fs::temp_directory_path() / "keel_token_cli_test.key";
  fs::remove(key);
  int status = 0;
  run(tool.string() + " keygen " + key.string() + " 2>/dev/null", status);
  ASSERT_EQ(status, 0);
  EXPECT_EQ(fs::status(key).permissions() & fs::perms::others_read, fs::perms::none);
  std::string text = run(tool.string() + " mint --key " + key.string() +
                             " --client-id 42 --match 7 --server 127.0.0.1:7777 --ttl 60",
                         status);
  ASSERT_EQ(status, 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  auto token = kp::token_from_base64(text);
  ASSERT_TRUE(token.has_value()) << token.error().message;
  EXPECT_EQ(token->server_addresses, std::vector<std::string>{"127.0.0.1:7777"});
  EXPECT_EQ(token->expire_time - token->create_time, 60u);

  auto k = kp::load_token_key(key.string());
  ASSERT_TRUE(k.has_value());
  kp::ServerHandshake server(*k, "127.0.0.1:7777");
  std::vector<uint8_t> challenge;
  EXPECT_EQ(server.on_request(kp::build_connection_request(*token), "1.2.3.4:9", token->create_time,
                              challenge),
            kp::DropReason::None);
  // A missing required flag fails with a non-zero status.
  run(tool.string() + " mint --key " + key.string() + " --client-id 1 --match 1 2>/dev/null",
      status);
  EXPECT_NE(status, 0);
  fs::remove(key);
}
