// keel-server --scene SCENE.json [--bind 127.0.0.1:7777] [--record DIR] [--stop-after-ticks N]
//             [--metrics 127.0.0.1:9100] [--token-key KEYFILE] ...
// docs/operations.md lists every flag; server_main does the work so that servers with
// their own rules (server/examples/) get the same command line.
#include <keel/server/server.h>

int main(int argc, char** argv) { return keel::server::server_main(argc, argv); }
