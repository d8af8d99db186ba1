// The keel-token command-line contract (docs/security.md, docs/architecture.md "Conventions"): keygen writes a key, mint prints a
// token that the library parses and a server holding the key admits. Skipped when the
// tool was not built in this build tree.
#include <keel/protocol/handshake.h>
#include <keel/protocol/token.h>

#include <gtest/gtest.h>

#include <sys/wait.h>

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

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
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

TEST(KeelTokenCli, UserDataReachesTheServerAndBadHexIsRefused) {
  fs::path tool = fs::path(KEEL_BINARY_DIR) / "bin" / "keel-token";
  if (!fs::exists(tool)) GTEST_SKIP() << "keel-token not built";
  fs::path key = fs::temp_directory_path() / "keel_token_cli_user_data.key";
  fs::remove(key);
  int status = 0;
  run(tool.string() + " keygen " + key.string() + " 2>/dev/null", status);
  ASSERT_EQ(status, 0);
  auto k = kp::load_token_key(key.string());
  ASSERT_TRUE(k.has_value());
  std::string mint = tool.string() + " mint --key " + key.string() +
                     " --client-id 42 --match 7 --server 127.0.0.1:7777 --user-data ";

  // What the game server gets out of a token minted with `hex`, through the whole
  // handshake (request, challenge, response), as a game server would receive it.
  auto admitted_user_data = [&](const std::string& hex) {
    std::array<uint8_t, kp::kUserDataBytes> got{};
    int st = 0;
    std::string text = trimmed(run(mint + hex, st));
    EXPECT_EQ(st, 0) << hex;
    auto token = kp::token_from_base64(text);
    EXPECT_TRUE(token.has_value()) << text;
    if (!token) return got;
    kp::ServerHandshake server(*k, "127.0.0.1:7777");
    std::vector<uint8_t> challenge, response;
    EXPECT_EQ(server.on_request(kp::build_connection_request(*token), "1.2.3.4:9",
                                token->create_time, challenge),
              kp::DropReason::None);
    EXPECT_EQ(kp::answer_challenge(challenge, kp::client_keys(*token), response), kp::DropReason::None);
    kp::AcceptedClient client;
    EXPECT_EQ(server.on_response(response, "1.2.3.4:9", token->create_time, client),
              kp::DropReason::None);
    EXPECT_EQ(client.client_id, 42u);
    return client.user_data;
  };

  // Both cases of digit, copied to the start and zero-filled after.
  std::array<uint8_t, kp::kUserDataBytes> expect{};
  expect[0] = 0x01;
  expect[1] = 0xAB;
  expect[2] = 0xcd;
  expect[3] = 0xF0;
  EXPECT_EQ(admitted_user_data("01ABcdF0"), expect);
  // The full 256 bytes: every byte value once.
  std::string full;
  const char* digits = "0123456789abcdef";
  for (int i = 0; i < 256; ++i) {
    expect[i] = static_cast<uint8_t>(255 - i);
    full += digits[(255 - i) >> 4];
    full += digits[(255 - i) & 15];
  }
  EXPECT_EQ(admitted_user_data(full), expect);

  // Refused with status 2 and a message naming the flag, never truncated or guessed at.
  for (const std::string& bad : {std::string("abc"), std::string("0g"), std::string("zz12"),
                                 std::string("0x12"), full + "00"}) {
    std::string err = run(mint + bad + " 2>&1", status);
    ASSERT_TRUE(WIFEXITED(status)) << bad;
    EXPECT_EQ(WEXITSTATUS(status), 2) << bad;
    EXPECT_NE(err.find("--user-data"), std::string::npos) << bad << ": " << err;
    EXPECT_FALSE(kp::token_from_base64(trimmed(err)).has_value()) << "a token was printed";
  }
  fs::remove(key);
}
