// One client's session inside a match: its Connection, where it is in the session state
// machine of docs/protocol.md ("Session"), its input buffer and its outgoing streams.
#pragma once

#include "net.h"

#include <keel/protocol/connection.h>
#include <keel/protocol/frame_window.h>
#include <keel/protocol/input_codec.h>
#include <keel/protocol/interest.h>
#include <keel/protocol/snapshot_stream.h>

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace keel::server {

enum class SessionState { Accepted, Syncing, Playing, Closed };
const char* to_string(SessionState s);

/// Where a session is in sending its large blocks (scene, then a checkpoint).
enum class SyncStep { None, Scene, CheckpointDue, Checkpoint };

struct Session {
  Session(const protocol::SnapshotConfig& config, const protocol::InterestConfig& interest,
          const protocol::ConnectionConfig& connection)
      : conn(connection), snapshots(config, interest), kbps(interest.budget_bytes_per_second / 125.0) {}

  uint32_t player = 0;  ///< the token's client id (a spectator's holds no player slot)
  bool spectator = false;  ///< admitted by a spectator token: watches, never plays
  uint32_t client_index = 0;
  uint32_t socket = 0;
  Udp::endpoint endpoint;
  std::string address;
  SessionState state = SessionState::Accepted;
  SyncStep sync = SyncStep::None;
  bool predict = false;
  double timeout = 10.0;  ///< s without an accepted packet before the session closes
  std::string close_reason;

  protocol::Connection conn;
  protocol::InputReceiver input_rx;
  /// Accepted inputs waiting for their tick: ticks in [match tick, match tick + 120].
  std::map<uint64_t, game::PlayerInput> inputs;  ///< frame and sanitised view (player unset)
  /// Partial snapshots: the client's interest, by priority within its budget.
  protocol::InterestSender snapshots;
  protocol::FrameWindow frames;
  bool frames_on = false;  ///< frames are added from the checkpoint's tick on
  /// The client has been sent the world description's catch-up (after the scene's
  /// BlockInfo): from then on it gets every BodyAdded / BodyRemoved.
  bool described = false;

  uint64_t route = 0;        ///< the Router id of this session's route
  /// The token's client-to-server key: tells a second handshake of this connection
  /// attempt (same token) from a reconnect (a new token).
  std::array<uint8_t, 32> client_key{};
  /// The newest challenge issued when this session's answer was accepted
  /// (AcceptedClient::issued_through): an answer to a newer one is a restarted client.
  uint64_t issued_through = 0;
  /// Until the client's first authenticated packet proves it holds the keys and receives
  /// at its address, the server sends it at most as many bytes as it received from that
  /// address (the handshake response, and any resends of it): no amplification, even for
  /// a response replayed by someone else.
  bool proven = false;
  double unproven_allowance = 0;
  double rate_tokens = 0;    ///< packets the client may still send (token bucket)
  double kbps = 256;         ///< its budget: --client-kbps, or less when its hello asks
  double budget_bytes = 0;   ///< bytes the server may still send it (token bucket)
  double bucket_time = 0;
  double last_heard = 0;     ///< s: when a packet from the client last authenticated
  uint32_t dumps = 0;        ///< desync dumps written for this client
  uint32_t desyncs_logged = 0;
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
};

}  // namespace keel::server
