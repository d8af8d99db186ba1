// keel-token — key generation and connect-token minting for matchmaking backends.
//
//   keel-token keygen KEYFILE
//   keel-token mint --key KEYFILE --client-id N --match M --server HOST:PORT
//                   [--server HOST:PORT ...] [--ttl S] [--timeout S]
//
// mint prints the token as one line of URL-safe base64 (no padding); the client passes
// it to its SDK. docs/security.md describes what the token protects.
#include <keel/protocol/token.h>

#include <CLI/CLI.hpp>

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

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

  CLI11_PARSE(app, argc, argv);
  if (kg->parsed()) return keygen(keygen_path, force);
  return mint(key_path, params);
}
