#!/usr/bin/env python3
"""Plays a Keel match from Python over libkeel_client.so (keel_client.py beside this file):
connects in development mode, lists the match's bodies with their shapes (the world
description), drives the game's input by the layout it declares, follows every body's pose
and prints the game's events, the players' joins and leaves, and the connection's
statistics.

    follow.py --server 127.0.0.1:7777 [--game pushball.so] [--predict] [--seconds 5]
              [--library build/lib/libkeel_client.so] [--companion-seconds 1.5]

--companion-seconds S: a second client joins the same match after --companion-join
seconds (default 1) and leaves at S seconds, so that another player's join and leave are
seen (the server announces them to the players already playing). Output is one record a
line ("state ...", "body {...}" as a body is described, "body_removed ID", "game_event
{...}", "player_event ...", "pose ...", "stats {...}", "link_stats {...}") for people and
scripts alike; exit status 0 when the client reached
Playing, 1 otherwise, 2 when the library does not load or has another ABI.
"""

import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keel_client  # noqa: E402


def drive_value(field):
    """Forward on every stick, straight ahead on every angle, nothing pressed: a steady
    input whose effect (the player's body moving) shows that it arrived."""
    kind = field["kind"]
    if kind == "stick":
        return (0.0, 1.0)
    if kind == "direction3":
        return (0.0, 0.0, 1.0)
    if kind == "point3":
        return tuple((lo + hi) / 2 for lo, hi in zip(field["min"], field["max"]))
    if kind in ("int", "enum", "fixed"):
        return field["min"][0]
    if kind == "angle":
        return 0.0
    return 0  # bool, buttons


def print_world_changes(client, known):
    """Prints the bodies described since the last look and those removed; `known` (id ->
    description) is updated. The engine-side pattern: walk the list again only when the
    world's version changed."""
    now = {b["id"]: b for b in client.bodies()}
    for body_id in sorted(now.keys() - known.keys()):
        print("body " + json.dumps(now[body_id]))
    for body_id in sorted(known.keys() - now.keys()):
        print(f"body_removed {body_id}")
    known.clear()
    known.update(now)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", required=True, help="HOST:PORT of a keel-server in development mode")
    ap.add_argument("--library", help="libkeel_client.so (default: $KEEL_CLIENT_LIBRARY, else the loader's search)")
    ap.add_argument("--game", help="the game module the server runs (--game), if any")
    ap.add_argument("--predict", action="store_true", help="predicted mode (default: interpolate)")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--client-id", type=int, default=1)
    ap.add_argument("--match", type=int, default=1)
    ap.add_argument("--companion-seconds", type=float, default=0.0)
    ap.add_argument("--companion-join", type=float, default=1.0)
    args = ap.parse_args()

    try:
        lib = keel_client.load(args.library)
    except (OSError, keel_client.KeelError) as e:
        print(f"cannot use libkeel_client: {e}", file=sys.stderr)
        return 2
    print(f"library {keel_client.library_version(lib)} abi {lib.keel_abi[0]}.{lib.keel_abi[1]}")

    client = keel_client.Client(lib, args.server, predict=args.predict, game_module=args.game)
    for f in client.fields:
        print(f"input {f['name']} {f['kind']} labels {','.join(f['labels']) or '-'}")
    for t in client.event_types:
        print(f"event_type {t}")
    companion = None
    if args.companion_seconds > 0:
        companion = keel_client.Client(lib, args.server, predict=False, game_module=args.game)

    start = time.monotonic()
    client.connect_dev(args.client_id, args.match, 0.0)
    companion_connected = False
    for f in client.fields:
        value = drive_value(f)
        client.set_input(f["name"], value)
        print(f"input_set {f['name']} {value}")

    first, last, changes = {}, {}, {}
    known, world_version = {}, 0
    playing_at = None
    next_pose_sample = 0.0
    now = 0.0
    while now < args.seconds:
        now = time.monotonic() - start
        client.update(now)
        if companion:
            if now >= args.companion_seconds:
                companion.disconnect(now)
                companion.close()
                companion = None
            elif now >= args.companion_join:
                if not companion_connected:
                    companion.connect_dev(args.client_id + 1, args.match, now)
                    companion_connected = True
                companion.update(now)
        if playing_at is None and client.state() == "playing":
            playing_at = now
            print(f"state playing at {now:.2f}")
        if client.world_version() != world_version:
            world_version = client.world_version()
            print_world_changes(client, known)
        for e in client.game_events():
            print("game_event " + json.dumps(e))
        for kind, player, tick in client.player_events():
            print(f"player_event {kind} player {player} tick {tick}")
        if playing_at is not None and now >= next_pose_sample:
            next_pose_sample = now + 0.05
            for body in known:
                p = client.pose(body, now)
                if p is None:
                    continue
                position = p[0]
                first.setdefault(body, position)
                if last.get(body) != position:
                    changes[body] = changes.get(body, 0) + 1
                last[body] = position
        time.sleep(0.005)

    for body in sorted(first):
        a, b = first[body], last[body]
        moved = math.dist(a, b)
        print(f"pose {body} first {a[0]:.3f} {a[1]:.3f} {a[2]:.3f} last {b[0]:.3f} {b[1]:.3f} {b[2]:.3f} "
              f"moved {moved:.3f} changes {changes.get(body, 0)}")
    print("stats " + json.dumps(client.stats()))
    print("link_stats " + json.dumps(client.link_stats()))
    print(f"state {client.state()} at the end")
    client.disconnect(time.monotonic() - start)
    client.close()
    return 0 if playing_at is not None else 1


if __name__ == "__main__":
    sys.exit(main())
