// keel-token — key generation and connect-token minting for matchmaking backends.
//
//   keel-token keygen KEYFILE
//   keel-token mint --key KEYFILE --client-id N --match M --server HOST:PORT
//                   [--server HOST:PORT ...] [--ttl S] [--timeout S] [--user-data HEX]
//                   [--spectator]
//
// mint prints the token as one line of URL-safe base64 (no padding); the client passes
// it to its SDK. --user-data is up to kUserDataBytes (256) bytes as hex digits, copied
// into the start of the token's user data and zero-filled after; the server hands it to
// the game unread (AcceptedClient::user_data). Bad hex exits with status 2. --spectator
// mints a spectator's token: the match is sent to it, it takes no player slot and plays no
// one (ClientRole in keel/protocol/token.h).
// docs/security.md describes what the token protects.
#include <keel/protocol/token.h>

#include <CLI/CLI.hpp>

#include <sys/stat.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string_view>

namespace kp = keel::protocol;

namespace {

int keygen(const std::string& path, bool force) {
  if (!force && std::filesystem::exists(path)) {
    std::cerr << "keel-token: " << path << " exists; pass --force to replace it\n";
    return 1;
  }
  // Created owner-only before the key is written, so it is never world-readable.
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::cerr << "keel-token: " << path << ": cannot create\n";
    return 1;
  }
  std::fclose(f);
  ::chmod(path.c_str(), 0600);
  auto status = kp::save_token_key(path, kp::generate_token_key());
  if (!status) {
    std::cerr << "keel-token: " << status.error().message << "\n";
    return 1;
  }
  std::cerr << "keel-token: wrote a new token key to " << path << " (keep it secret)\n";
  return 0;
}

std::optional<int> hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return std::nullopt;
}

// Hex rather than base64 because backends log and compare it by eye, and every language
// prints it without a library. The token holds a fixed kUserDataBytes, so longer input
// is refused rather than cut short: a backend must not believe it sent bytes it did not.
bool parse_user_data(std::string_view hex, std::array<uint8_t, kp::kUserDataBytes>& out,
                     std::string& error) {
  if (hex.size() % 2 != 0) {
    error = "an odd number of hex digits (" + std::to_string(hex.size()) + ")";
    return false;
  }
  if (hex.size() > 2 * kp::kUserDataBytes) {
    error = std::to_string(hex.size() / 2) + " bytes, more than the token's " +
            std::to_string(kp::kUserDataBytes);
    return false;
  }
  out.fill(0);
  for (size_t i = 0; i < hex.size(); i += 2) {
    auto hi = hex_digit(hex[i]);
    auto lo = hex_digit(hex[i + 1]);
    if (!hi || !lo) {
      error = "'" + std::string(hex.substr(hi ? i + 1 : i, 1)) + "' at position " +
              std::to_string(hi ? i + 1 : i) + " is not a hex digit";
      return false;
    }
    out[i / 2] = static_cast<uint8_t>(*hi << 4 | *lo);
  }
  return true;
}

int mint(const std::string& key_path, const kp::MintParams& params) {
  auto key = kp::load_token_key(key_path);
  if (!key) {
    std::cerr << "keel-token: " << key.error().message << "\n";
    return 1;
  }
  auto now = std::chrono::duration_cast<std::chrono::seconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  auto token = kp::mint_token(*key, params, static_cast<uint64_t>(now));
  if (!token) {
    std::cerr << "keel-token: " << token.error().message << "\n";
    return 1;
  }
  std::cout << kp::token_to_base64(*token) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"keel-token: make token keys and mint connect tokens for keel-server"};
  app.require_subcommand(1);

  std::string keygen_path;
  bool force = false;
  auto* kg = app.add_subcommand("keygen", "write a new random token key to KEYFILE");
  kg->add_option("KEYFILE", keygen_path, "where to write the key (64 hex digits)")->required();
  kg->add_flag("--force", force, "replace an existing file");

  std::string key_path;
  kp::MintParams params;
  auto* mt = app.add_subcommand("mint", "print a connect token (base64) for one client");
  mt->add_option("--key", key_path, "token key file (from keygen)")->required();
  mt->add_option("--client-id", params.client_id, "client id (the player id in the match)")
      ->required();
  mt->add_option("--match", params.match_id, "match id")->required();
  mt->add_option("--server", params.server_addresses,
                 "HOST:PORT the token is valid for, exactly as the server binds (repeatable, "
                 "at most 8)")
      ->required();
  mt->add_option("--ttl", params.ttl_seconds, "seconds the token stays valid")
      ->default_val(30)
      ->check(CLI::Range(1, 86400));
  mt->add_option("--timeout", params.timeout_seconds, "connection time-out in seconds")
      ->default_val(10)
      ->check(CLI::Range(1, 3600));
  bool spectator = false;
  mt->add_flag("--spectator", spectator, "a spectator's token: watches the match, takes no player slot");
  std::string user_data;
  mt->add_option("--user-data", user_data,
                 "bytes for the game server, as hex digits (at most " +
                     std::to_string(2 * kp::kUserDataBytes) + "; zero-filled to " +
                     std::to_string(kp::kUserDataBytes) + " bytes)");

  CLI11_PARSE(app, argc, argv);
  if (kg->parsed()) return keygen(keygen_path, force);
  if (spectator) params.role = kp::ClientRole::Spectator;
  std::string error;
  if (!parse_user_data(user_data, params.user_data, error)) {
    std::cerr << "keel-token: --user-data: " << error << "\n";
    return 2;
  }
  return mint(key_path, params);
}
