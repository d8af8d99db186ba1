#!/usr/bin/env python3
"""The Python client (client-sdk/examples/python/follow.py over libkeel_client.so) against a
real keel-server on 127.0.0.1 running the pushball module, which the Python process loads
through libkeel_client.so (no Keel C++ in the program). Checks that the client reached
Playing, that poses moved, that its input arrived (its pusher drove forward), that it saw a
companion client join and leave and a confirmed kick-off, and that its statistics are sane;
then that the binding refuses what it must (a library that is not Keel's, one of another
ABI, a bad address, a missing module).
Bounded: about 6 s; every process is killed by a time-out.

    python_client_test.py --server-bin BIN --library LIB --module MOD --scene JSON --example PY --work DIR
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def records(output, prefix):
    return [line[len(prefix):] for line in output.splitlines() if line.startswith(prefix)]


def main():
    ap = argparse.ArgumentParser()
    for a in ("--server-bin", "--library", "--module", "--scene", "--example", "--work"):
        ap.add_argument(a, required=True)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    scene_ids = {b["id"] for b in json.load(open(args.scene))["bodies"]}

    address = f"127.0.0.1:{free_udp_port()}"
    server_log = open(os.path.join(args.work, "server.txt"), "w")
    server = subprocess.Popen([args.server_bin, "--game", args.module, "--scene", args.scene, "--bind", address,
                               "--record", args.work, "--status-interval", "0"],
                              stdout=server_log, stderr=subprocess.STDOUT)
    try:
        time.sleep(0.3)
        # The library comes from the environment, as an engine's launcher would set it.
        env = dict(os.environ, KEEL_CLIENT_LIBRARY=args.library)
        run = subprocess.run([sys.executable, args.example, "--server", address, "--game", args.module, "--predict",
                              "--seconds", "4", "--match", "7", "--client-id", "40", "--companion-join", "1.0",
                              "--companion-seconds", "2.5"],
                             env=env, capture_output=True, text=True, timeout=30)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        server_log.close()
    out = run.stdout
    print(out)
    if run.stderr:
        print("stderr:", run.stderr)

    check(run.returncode == 0, f"follow.py exited 0 (got {run.returncode})")
    check(any(line.startswith("library ") and line.endswith(" abi 1.3") for line in out.splitlines()),
          "the library's version and ABI 1.3 are printed")
    check("input drive stick labels -" in out and "input push buttons labels charge" in out,
          "the module's input layout read through the introspection API")
    check(any(r[:1].isdigit() for r in records(out, "state playing at ")), "reached Playing")

    # The world description: every scene body with its box, as the scene says, and the
    # bodies the game spawned, labelled by kind: pushers (1) and the ball (2), spheres of
    # 0.5 m and 0.4 m (games/pushball/pushball_rules.h).
    described = {}
    for r in records(out, "body "):
        b = json.loads(r)
        described[b["id"]] = b
    scene = {b["id"]: b for b in json.load(open(args.scene))["bodies"]}
    for body_id, b in scene.items():
        d = described.get(body_id)
        want = b["colliders"][0]["half_extents"]
        check(d is not None and d["motion"] == "static" and d["colliders"][0]["shape"] == "box" and
              all(abs(x - y) < 1e-6 for x, y in zip(d["colliders"][0]["half_extents"], (want["x"], want["y"], want["z"]))),
              f"scene body {body_id} described as its static box ({d})")
    spawned = [b for i, b in described.items() if i not in scene]
    pushers = [b for b in spawned if b["kind"] == 1]
    balls = [b for b in spawned if b["kind"] == 2]
    check(len(pushers) >= 2 and all(b["motion"] == "dynamic" and b["colliders"][0]["shape"] == "sphere" and
                                    abs(b["colliders"][0]["radius"] - 0.5) < 1e-6 for b in pushers),
          f"the pushers described: dynamic spheres of radius 0.5, kind 1 ({pushers})")
    check(len(balls) == 1 and balls[0]["colliders"][0]["shape"] == "sphere" and
          abs(balls[0]["colliders"][0]["radius"] - 0.4) < 1e-6,
          f"the ball described: a sphere of radius 0.4, kind 2 ({balls})")
    # The companion's pusher is removed when it leaves.
    check(len(records(out, "body_removed ")) >= 1, f"a removal announced ({records(out, 'body_removed ')})")

    # Poses: bodies were followed and moved. The client drives its pusher forward from the
    # start (about 5.7 m/s over 3.9 s here: 22 m), which it does only when its input
    # reached the server; no other body goes so far (the ball's kick-off carries it about
    # 3 m). The companion's pusher, whose input is all zeros, stays put: the control.
    poses = {}
    for r in records(out, "pose "):
        f = r.split()
        poses[int(f[0])] = {"moved": float(f[f.index("moved") + 1]), "changes": int(f[f.index("changes") + 1])}
    check(len(poses) >= len(scene_ids), f"poses of every scene body ({sorted(poses)})")
    pushers = {b: p for b, p in poses.items() if b not in scene_ids}
    check(len(pushers) >= 1, f"a pusher body besides the scene's ({sorted(pushers)})")
    check(any(p["moved"] > 10.0 and p["changes"] >= 20 for p in pushers.values()),
          f"the client's pusher drove more than 10 m, its pose changing as it went ({pushers})")
    check(any(p["moved"] < 0.5 for p in pushers.values()), f"the idle companion's pusher stayed put ({pushers})")

    # The companion (client 41) joined and left; this client saw both, in that order.
    joins = [r.split() for r in records(out, "player_event joined ")]
    leaves = [r.split() for r in records(out, "player_event left ")]
    own = json.loads(records(out, "stats ")[-1])["player_id"] if records(out, "stats ") else None
    others_joined = {int(j[1]): int(j[3]) for j in joins if own is not None and int(j[1]) != own}
    others_left = {int(l[1]): int(l[3]) for l in leaves}
    check(len(others_joined) == 1, f"another player's join seen ({joins}, own player {own})")
    check(any(p in others_left and others_left[p] > t for p, t in others_joined.items()),
          f"that player's leave seen after its join ({leaves})")

    events = [json.loads(r) for r in records(out, "game_event ")]
    kickoffs = [e for e in events if e["type"] == "kickoff" and not e["predicted"]]
    check(len(kickoffs) >= 1, f"a confirmed kickoff event ({len(events)} game events)")
    check(all(len(e["values"]) == 3 for e in kickoffs), "a kickoff carries its three payload numbers")

    stats = json.loads(records(out, "stats ")[-1]) if records(out, "stats ") else {}
    link = json.loads(records(out, "link_stats ")[-1]) if records(out, "link_stats ") else {}
    check(stats.get("hash_checks", 0) > 0 and stats.get("hash_mismatches", 1) == 0,
          f"predicted with hash checks and no mismatch ({stats.get('hash_checks')}, {stats.get('hash_mismatches')})")
    check(stats.get("snapshots_received", 0) > 50, f"snapshots received ({stats.get('snapshots_received')})")
    check(0 < link.get("rtt_ms", 0) < 200, f"loopback RTT measured ({link.get('rtt_ms')} ms)")
    check(link.get("loss_in", 1) < 0.05 and link.get("loss_out", 1) < 0.05,
          f"no loss on loopback ({link.get('loss_in')}, {link.get('loss_out')})")
    check(link.get("kbps_in", 0) > 1 and link.get("kbps_out", 0) > 0.5,
          f"traffic both ways ({link.get('kbps_in')} kbit/s in, {link.get('kbps_out')} out)")
    check(link.get("bytes_sent") == stats.get("bytes_sent") and link.get("packets_received", 0) > 50,
          "the link statistics agree with the session's counters")
    sys.path.insert(0, os.path.dirname(os.path.abspath(args.example)))
    import ctypes
    import keel_client
    check(link.get("struct_size") == ctypes.sizeof(keel_client.LinkStats),
          f"the library filled the binding's whole struct ({link.get('struct_size')} bytes)")

    # The binding's refusals: a library that is not Keel's, a server address that does not parse.
    try:
        keel_client.load("libc.so.6")
        check(False, "libc.so.6 refused as a Keel client library")
    except keel_client.KeelError as e:
        check("no keel_client_abi_version" in str(e), f"libc.so.6 refused as a Keel client library ({e})")
    # A library of another ABI major: built here, it exports keel_client_abi_version alone.
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc:
        fake_source = os.path.join(args.work, "abi2.c")
        fake = os.path.join(args.work, "libkeel_client_abi2.so")
        with open(fake_source, "w") as f:
            f.write("unsigned keel_client_abi_version(void) { return 2u << 16; }\n")
        subprocess.run([cc, "-shared", "-fPIC", "-o", fake, fake_source], check=True, timeout=30)
        try:
            keel_client.load(fake)
            check(False, "a library of ABI 2.0 refused")
        except keel_client.KeelError as e:
            check("has C ABI 2.0; this binding needs 1.2" in str(e), f"a library of ABI 2.0 refused ({e})")
    lib = keel_client.load(args.library)
    try:
        keel_client.Client(lib, "no-port")
        check(False, "an address without a port refused")
    except keel_client.KeelError as e:
        check(e.code == 2 and e.message != "", f"an address without a port refused ({e})")
    try:
        keel_client.Client(lib, "127.0.0.1:9", game_module="/no/such/module.so")
        check(False, "a missing game module refused")
    except keel_client.KeelError as e:
        check(e.code == 7 and "/no/such/module.so" in e.message, f"a missing game module refused ({e})")

    if failures:
        print(f"{len(failures)} check(s) failed; server log: {os.path.join(args.work, 'server.txt')}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
