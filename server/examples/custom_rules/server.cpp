// keel-hover-server: keel-server with its own rules (hover_rules.h). Everything else —
// the command line, sessions, recording, metrics — is keel::server's.
#include "hover_rules.h"

#include <keel/server/server.h>

int main(int argc, char** argv) {
  return keel::server::server_main(argc, argv, [] { return std::make_unique<hover::HoverRules>(); });
}
