#!/usr/bin/env python3
"""Generates the example and benchmark scenes in this folder.

    python3 scenes/generate_scenes.py            # rewrite the .json files beside this script
    python3 scenes/generate_scenes.py --check    # exit 1 if a committed file is out of date

The files are data: they are committed, and tests and benchmarks read them, never this
script. Layouts (docs/scene-format.md describes the format):

  pile.json              static ground + 1000 dynamic 1 m boxes in a 10x10x10 grid
  pile_4000.json         the same at 4000 boxes (20x10x20), for per-tick costs at scale
  pyramid.json           static ground + a 20-row pyramid of 210 touching 1 m boxes
  pyramid_5050.json      the pyramid at 100 rows: 5050 boxes in one island
  spheres_capsules.json  ground, four walls, 500 spheres and 500 capsules in a checkerboard
  spheres_capsules_tilt.json  the same with every capsule tilted 1-4 degrees: the columns collapse
  mixed_10000.json       10000 boxes, spheres, tilted capsules and hulls in a 25x16x25 grid, pitch 1.6 m
  demo.json              a small playground with 8 spawn points
  characters.json        16 scripted capsule characters over a kerb, crates, stairs and a ramp
  ragdolls.json          64 ragdolls (half of them with holding torque) falling onto 50 boxes
  chain.json             8 chains of ten capsule links on ball joints, released level, with weights
  vehicle.json           4 cars rolling down a ramp into a wall of boxes, on wheel joints
  convex_pile.json       a mesh floor + 500 convex hulls of 8-32 points in a 10x5x10 grid
  terrain.json           a 64 x 64 m heightfield bowl + 240 spheres, capsules and boxes rolling down
  arena.json             a 480 x 480 m ground, 2000 dynamic boxes and spheres scattered over it and
                         64 kinematic player capsules on an 8 x 8 grid (interest management:
                         keel-netbench --interest drives the players)
  arena_128.json         arena.json with 128 kinematic capsules (16 x 8): keel-netbench --interest
                         with 128 clients (benchmark only)
  arena_match.json       the big-match level: a 220 x 180 m ground, 2000 dynamic crates and balls
                         on a jittered 4 m grid, 128 spawn points (bench/bigmatch.sh: 128 players
                         walking, pushing and throwing balls among them)

Common to all: density 1000 kg/m^3, friction 0.6, restitution 0, tick_rate 60, body ids
unique and consecutive from 1 (the ground is body 1). Only the standard library is used.
"""

import argparse
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

DENSITY = 1000.0
FRICTION = 0.6
RESTITUTION = 0.0
GRAVITY = (0.0, -9.81, 0.0)


def num(x):
    """Rounds away binary noise such as -5.3999999999999995 so the files read cleanly.

    Six decimals is far below float32 resolution at these magnitudes (metres). -0.0
    becomes 0.0 so that no file carries a negative zero by accident.
    """
    r = round(x, 6)
    return 0.0 if r == 0 else r


def vec3(x, y, z):
    return {"x": num(x), "y": num(y), "z": num(z)}


def yaw_quat(degrees):
    """Rotation about +Y by `degrees`, as {"x","y","z","w"}; full precision on purpose."""
    half = math.radians(degrees) / 2.0
    return {"x": 0.0, "y": math.sin(half), "z": 0.0, "w": math.cos(half)}


def roll_quat(degrees):
    """Rotation about +Z by `degrees`."""
    half = math.radians(degrees) / 2.0
    return {"x": 0.0, "y": 0.0, "z": math.sin(half), "w": math.cos(half)}


def material():
    return {"friction": FRICTION, "restitution": RESTITUTION, "density": DENSITY}


def box_collider(hx, hy, hz):
    return {"shape": "Box", "half_extents": vec3(hx, hy, hz), **material()}


def sphere_collider(radius):
    return {"shape": "Sphere", "radius": radius, **material()}


def capsule_collider(radius, half_height):
    return {"shape": "Capsule", "radius": radius, "half_height": half_height, **material()}


def hull_collider(points):
    return {"shape": "Hull", "points": [vec3(*p) for p in points], **material()}


class Lcg:
    """A 32-bit linear congruential generator: the same numbers on every Python."""

    def __init__(self, seed):
        self.state = seed & 0xFFFFFFFF

    def uniform(self, lo, hi):
        self.state = (self.state * 1664525 + 1013904223) & 0xFFFFFFFF
        return lo + (hi - lo) * ((self.state >> 8) / float(1 << 24))


def hull_points(rng, kind):
    """8-32 points in a 0.5-1.0 m shape: a rock (points on an ellipsoid), a crate (a box's
    corners plus points on its faces: coplanar on purpose) or a shard (points in a box)."""
    n = 8 + int(rng.uniform(0.0, 24.999))
    a, b, c = (rng.uniform(0.25, 0.5) for _ in range(3))
    points = []
    if kind == 1:
        points = [(sx * a, sy * b, sz * c) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    while len(points) < n:
        x, y, z = (rng.uniform(-1.0, 1.0) for _ in range(3))
        if kind == 0:
            length = math.sqrt(x * x + y * y + z * z)
            if length < 1e-3:
                continue
            x, y, z = x / length, y / length, z / length
        elif kind == 1:
            axis = len(points) % 3  # pin one coordinate to a face
            if axis == 0:
                x = 1.0 if x > 0 else -1.0
            elif axis == 1:
                y = 1.0 if y > 0 else -1.0
            else:
                z = 1.0 if z > 0 else -1.0
        points.append((x * a, y * b, z * c))
    return points


def mesh_floor(half=20, cell=2.0):
    """Body 1: a static triangle-mesh floor in the plane y = 0 from -half to +half m in x
    and z, in cells of `cell` m (two triangles each, counter-clockwise seen from above)."""
    n = int(2 * half / cell)
    points = [vec3(-half + cell * c, 0.0, -half + cell * r) for r in range(n + 1) for c in range(n + 1)]
    indices = []
    for r in range(n):
        for c in range(n):
            i = r * (n + 1) + c
            indices += [i, i + n + 1, i + 1, i + 1, i + n + 1, i + n + 2]
    collider = {"shape": "Mesh", "points": points, "indices": indices, **material()}
    return body(1, "Static", (0.0, 0.0, 0.0), collider)


def convex_pile():
    """500 hulls (rock / crate / shard by id mod 3), 10x5x10, pitch 1.3 m: x and z from
    -5.85 to 5.85, y from 1.5 to 6.7, on a 40 x 40 m mesh floor of 2 m cells (800
    triangles). Ids 2..501 layer by layer; every hull turned by a per-body yaw. Points come
    from an LCG seeded with the body id."""
    bodies = [mesh_floor()]
    for j in range(5):
        for k in range(10):
            for i in range(10):
                body_id = len(bodies) + 1
                rng = Lcg(body_id * 7919)
                position = (-5.85 + 1.3 * i, 1.5 + 1.3 * j, -5.85 + 1.3 * k)
                collider = hull_collider(hull_points(rng, body_id % 3))
                bodies.append(body(body_id, "Dynamic", position, collider, yaw_quat(body_id * 37 % 360)))
    return scene("convex_pile", bodies)


def body(body_id, motion, position, collider, rotation=None, **extra):
    b = {"id": body_id, "motion": motion, "position": vec3(*position)}
    if rotation is not None:
        b["rotation"] = rotation
    b.update(extra)
    b["colliders"] = [collider]
    return b


def ground():
    """Body 1: a static 200 x 1 x 200 m slab whose top face is the plane y = 0."""
    return body(1, "Static", (0.0, -0.5, 0.0), box_collider(100.0, 0.5, 100.0))


def scene(name, bodies, spawn_points=None):
    s = {"name": name, "tick_rate": 60, "gravity": vec3(*GRAVITY), "bodies": bodies}
    if spawn_points:
        s["spawn_points"] = spawn_points
    return s


def pile(name="pile", nx=10, ny=10, nz=10):
    """nx*ny*nz boxes (1000 by default: 10x10x10), pitch 1.2 m, centred on x = z = 0, the
    lowest layer at y = 2.0 (for 10x10x10: x and z from -5.4 to 5.4, y from 2.0 to 12.8).

    Ids run layer by layer from the bottom: id = 2 + nx*nz*j + nx*k + i for grid indices
    (i along x, j along y, k along z). Boxes with i+j+k odd are turned 15 degrees about Y.
    """
    bodies = [ground()]
    for j in range(ny):
        for k in range(nz):
            for i in range(nx):
                position = (-0.6 * (nx - 1) + 1.2 * i, 2.0 + 1.2 * j, -0.6 * (nz - 1) + 1.2 * k)
                rotation = yaw_quat(15.0) if (i + j + k) % 2 == 1 else None
                bodies.append(body(len(bodies) + 1, "Dynamic", position,
                                   box_collider(0.5, 0.5, 0.5), rotation))
    return scene(name, bodies)


def pile_4000():
    """The pile at four times the size: 20x10x20 boxes, x and z from -11.4 to 11.4."""
    return pile("pile_4000", 20, 10, 20)


def pyramid(name="pyramid", rows=20):
    """`rows` rows in the XY plane at z = 0; row r (0 = bottom) has rows - r boxes.

    Box i of a row of n sits at x = (i - (n - 1) / 2) * 1.0, y = 0.5 + r: neighbours and
    rows touch exactly. 20 rows: 210 boxes, ids 2..211 row by row from the bottom, left to
    right.
    """
    bodies = [ground()]
    for r in range(rows):
        n = rows - r
        for i in range(n):
            position = ((i - (n - 1) / 2.0) * 1.0, 0.5 + r, 0.0)
            bodies.append(body(len(bodies) + 1, "Dynamic", position, box_collider(0.5, 0.5, 0.5)))
    return scene(name, bodies)


def pyramid_5050():
    """The pyramid with 100 rows: 5050 touching boxes in one island (the layout of Box3D's
    "large pyramid" benchmark, at Keel's density of 1000)."""
    return pyramid("pyramid_5050", 100)


def spheres_capsules():
    """Ground, four 0.5 m x 25 m walls with inner faces at x = +-5 and z = +-5 (ids 2..5),
    then 1000 bodies on a 10x10x10 grid: x and z = -4.5..4.5 (pitch 1 m), y = 2..20
    (pitch 2 m). (i+j+k) even: sphere r 0.5; odd: upright capsule r 0.3, half_height 0.5.
    Ids 6..1005 layer by layer from the bottom, as in pile.json.
    """
    bodies = [ground()]
    walls = [((5.25, 12.5, 0.0), (0.25, 12.5, 5.5)),
             ((-5.25, 12.5, 0.0), (0.25, 12.5, 5.5)),
             ((0.0, 12.5, 5.25), (5.5, 12.5, 0.25)),
             ((0.0, 12.5, -5.25), (5.5, 12.5, 0.25))]
    for position, half in walls:
        bodies.append(body(len(bodies) + 1, "Static", position, box_collider(*half)))
    for j in range(10):
        for k in range(10):
            for i in range(10):
                position = (-4.5 + i, 2.0 + 2.0 * j, -4.5 + k)
                if (i + j + k) % 2 == 0:
                    collider = sphere_collider(0.5)
                else:
                    collider = capsule_collider(0.3, 0.5)
                bodies.append(body(len(bodies) + 1, "Dynamic", position, collider))
    return scene("spheres_capsules", bodies)


def tilt_quat(body_id):
    """A tilt of 1-4 degrees about a horizontal axis, angle and azimuth from an LCG seeded
    with the body id."""
    rng = Lcg(body_id * 7919)
    tilt = math.radians(rng.uniform(1.0, 4.0))
    azimuth = rng.uniform(0.0, 2.0 * math.pi)
    s = math.sin(tilt / 2.0)
    return {"x": s * math.cos(azimuth), "y": 0.0, "z": s * math.sin(azimuth), "w": math.cos(tilt / 2.0)}


def spheres_capsules_tilt():
    """spheres_capsules with every capsule tilted (tilt_quat). In the untilted scene the
    bodies fall in exactly aligned columns that stay standing; tilted, the columns
    collapse into a heap, which is the work a peer comparison should measure."""
    s = spheres_capsules()
    s["name"] = "spheres_capsules_tilt"
    for b in s["bodies"]:
        if b["motion"] == "Dynamic" and b["colliders"][0]["shape"] == "Capsule":
            collider = b.pop("colliders")
            b["rotation"] = tilt_quat(b["id"])
            b["colliders"] = collider
    return s


def mixed_10000():
    """10000 dynamic bodies on a 25x16x25 grid, pitch 1.6 m (x and z from -19.2 to 19.2,
    y from 2.0 to 26.0: no two bodies overlap at the start, whatever their turn), by id mod 4: box 0.5 m, sphere r 0.5, capsule r 0.3 half_height
    0.4 tilted (tilt_quat), hull of 8-32 points (hull_points, kind by id mod 3). Every
    body turned by a per-body yaw except the capsules. Ids 2..10001 layer by layer."""
    bodies = [ground()]
    for j in range(16):
        for k in range(25):
            for i in range(25):
                body_id = len(bodies) + 1
                position = (-19.2 + 1.6 * i, 2.0 + 1.6 * j, -19.2 + 1.6 * k)
                kind = body_id % 4
                rotation = yaw_quat(body_id * 37 % 360)
                if kind == 0:
                    collider = box_collider(0.5, 0.5, 0.5)
                elif kind == 1:
                    collider = sphere_collider(0.5)
                elif kind == 2:
                    collider = capsule_collider(0.3, 0.4)
                    rotation = tilt_quat(body_id)
                else:
                    collider = hull_collider(hull_points(Lcg(body_id * 7919), body_id % 3))
                bodies.append(body(body_id, "Dynamic", position, collider, rotation))
    return scene("mixed_10000", bodies)


def terrain_height(x, z):
    """Height of the terrain bowl at local grid coordinates (m): deepest at x = 44, z = 32,
    rising to every edge (steeply beyond x = 44, so nothing rolls out), with bumps.
    Rounded to 4 decimals (exact in the file)."""
    kx = 0.012 if x < 44.0 else 0.05
    h = kx * (x - 44.0) ** 2 + 0.015 * (z - 32.0) ** 2 + 0.6 * math.sin(0.35 * x) * math.sin(0.3 * z)
    return round(h, 4)


def terrain():
    """Body 1: a static heightfield of 65 x 65 samples, 1 m apart, placed at (-32, 0, -32)
    (local x, z = 0..64 become world -32..32). Then 240 dynamic bodies (ids 2..241) in
    three layers of an 8 x 10 grid over the high side (local x = 6..20, z = 14..50), each
    1.5 m above the surface plus 1.5 m per layer: by (i + j + k) mod 3, a sphere r 0.4,
    a capsule r 0.3 half_height 0.4, or a 0.35 m box. They roll down into the bowl.
    """
    n = 65
    heights = [terrain_height(float(c), float(r)) for r in range(n) for c in range(n)]
    field = {"shape": "Heightfield", "rows": n, "columns": n, "cell_size": 1.0, "heights": heights, **material()}
    bodies = [body(1, "Static", (-32.0, 0.0, -32.0), field)]
    for k in range(3):
        for j in range(10):
            for i in range(8):
                lx, lz = 6.0 + 2.0 * i, 14.0 + 4.0 * j
                y = terrain_height(lx, lz) + 1.5 + 1.5 * k
                kind = (i + j + k) % 3
                if kind == 0:
                    collider = sphere_collider(0.4)
                elif kind == 1:
                    collider = capsule_collider(0.3, 0.4)
                else:
                    collider = box_collider(0.35, 0.35, 0.35)
                bodies.append(body(len(bodies) + 1, "Dynamic", (lx - 32.0, y, lz - 32.0), collider))
    return scene("terrain", bodies)


def demo():
    """A small playground: a stack of boxes, a ramp with balls waiting at its top, a few
    capsules, a kinematic spinner, a trigger zone, and 8 spawn points on a circle of
    radius 8 m facing the centre (forward = -Z), offset 22.5 degrees to stay off the ramp."""
    bodies = [ground()]

    def add(*args, **kwargs):
        bodies.append(body(len(bodies) + 1, *args, **kwargs))

    for level in range(5):  # a stack of five 1 m boxes at x = -6
        add("Dynamic", (-6.0, 0.5 + level, 0.0), box_collider(0.5, 0.5, 0.5))
    # The ramp: an 8 x 0.5 x 4 m static slab tilted 20 degrees, high end towards +x.
    # Centre height 1.62 keeps the low end's bottom edge just clear of the ground.
    add("Static", (6.0, 1.62, 0.0), box_collider(4.0, 0.25, 2.0), roll_quat(20.0))
    for n in range(3):  # balls resting above the ramp's high end
        add("Dynamic", (9.0, 4.5 + 1.1 * n, -1.0 + 1.0 * n), sphere_collider(0.4))
    for n in range(4):  # capsules lying side by side on the ground, turned to lie along x
        add("Dynamic", (-2.0, 0.3, 4.0 + 0.8 * n), capsule_collider(0.3, 0.6),
            roll_quat(90.0))
    # A kinematic spinner (turns 1 rad/s about Y) that sweeps the floor near the centre.
    add("Kinematic", (0.0, 0.25, -5.0), box_collider(2.0, 0.25, 0.25),
        angular_velocity=vec3(0.0, 1.0, 0.0))
    # A trigger zone: a sensor that pushes nothing; static, so it needs no mass.
    bodies.append({"id": len(bodies) + 1, "motion": "Static", "position": vec3(0.0, 1.0, 0.0),
                   "layer": 2, "collides_with": 1,
                   "colliders": [{"shape": "Box", "half_extents": vec3(1.0, 1.0, 1.0),
                                  "is_trigger": True, **material()}]})
    spawn_points = []
    for n in range(8):
        a = 2.0 * math.pi * (n + 0.5) / 8.0
        yaw = math.degrees(math.pi / 2.0 - a)  # turns -Z towards the centre
        spawn_points.append({"position": vec3(8.0 * math.cos(a), 1.0, 8.0 * math.sin(a)),
                             "rotation": yaw_quat(yaw)})
    return scene("demo", bodies, spawn_points)


def characters():
    """16 capsule characters walking scripted loops in 16 lanes (z = -11.25..11.25, pitch
    1.5 m) over a course that spans every lane: a 0.3 m kerb at x = -7..-6, crates (20 kg,
    0.6 m) in the odd lanes at x = -1.5, four 0.2 m stairs from x = 3 up to a 0.8 m deck
    (x = 4.8..9) and a 20 degree ramp back down to the ground at x = 11.2, all inside four
    walls. Characters: r 0.3, half height 0.6 (1.8 m tall), 80 kg, rotation frozen, start
    with their feet on the ground at x = 0. Each script walks 2 m towards -x (odd lanes
    push their crate), pauses, walks 14.5 m towards +x at 2.0 to 3.05 m/s (up the stairs,
    over the deck, down the ramp), jumps, sidesteps and walks back; pauses and paces differ
    per lane so the lanes fall out of step.
    """
    bodies = [ground()]

    def add(*args, **kwargs):
        bodies.append(body(len(bodies) + 1, *args, **kwargs))

    for position, half in [((-8.5, 1.0, 0.0), (0.5, 1.0, 13.0)), ((15.5, 1.0, 0.0), (0.5, 1.0, 13.0)),
                           ((3.5, 1.0, 13.5), (12.5, 1.0, 0.5)), ((3.5, 1.0, -13.5), (12.5, 1.0, 0.5))]:
        add("Static", position, box_collider(*half))
    add("Static", (-6.5, 0.15, 0.0), box_collider(0.5, 0.15, 12.5))  # the kerb
    for k in range(4):  # stairs: step k rises to 0.2 (k + 1) from x = 3 + 0.6 k to the deck's end
        x0 = 3.0 + 0.6 * k
        add("Static", ((x0 + 9.0) / 2.0, 0.1 * (k + 1), 0.0), box_collider((9.0 - x0) / 2.0, 0.1 * (k + 1), 12.5))
    # The ramp: a 0.2 m slab tilted -20 degrees about Z whose top runs from the deck's edge
    # (9, 0.8) down to the ground at x = 9 + 0.8 / tan 20 = 11.198.
    slope = math.radians(20.0)
    mid = (9.0 + 0.4 / math.tan(slope), 0.4)
    add("Static", (mid[0] - 0.1 * math.sin(slope), mid[1] - 0.1 * math.cos(slope), 0.0),
        box_collider(1.25, 0.1, 12.5), roll_quat(-20.0))
    lanes = [-11.25 + 1.5 * i for i in range(16)]
    for i, z in enumerate(lanes):
        if i % 2 == 1:
            add("Dynamic", (-1.5, 0.3, z), box_collider(0.3, 0.3, 0.3), mass=20.0)
    chars = []
    for i, z in enumerate(lanes):
        add("Dynamic", (0.0, 0.901, z), capsule_collider(0.3, 0.6), mass=80.0, freeze_rotation=True,
            can_sleep=False)
        bodies[-1]["colliders"][0]["friction"] = 0.2
        pace = 2.0 + 0.07 * i
        leg = int(math.ceil(14.5 / pace * 60.0))  # ticks to cover 14.5 m at this pace
        script = [
            {"ticks": 60, "move": vec3(-2.0, 0.0, 0.0)},
            {"ticks": 10 + 3 * i},
            {"ticks": leg, "move": vec3(pace, 0.0, 0.0)},
            {"ticks": 12, "move": vec3(pace, 0.0, 0.0), "jump": True},
            {"ticks": 30, "move": vec3(0.0, 0.0, 0.5 if i % 2 == 0 else -0.5)},
            {"ticks": leg, "move": vec3(-pace, 0.0, 0.0)},
        ]
        chars.append({"body": len(bodies), "script": script})
    s = scene("characters", bodies)
    s["characters"] = chars
    return s


def pitch_quat(degrees):
    """Rotation about +X by `degrees`."""
    half = math.radians(degrees) / 2.0
    return {"x": math.sin(half), "y": 0.0, "z": 0.0, "w": math.cos(half)}


def ragdolls():
    """A 5x5x2 pile of 1 m boxes (ids 2..51) under an 8x8 grid of ragdolls.

    Ragdoll r (0..63, row-major in x then z) has first_id 1000 + 20 r, feet at
    (-7 + 2 i, 4 + 0.25 ((i + k) % 4), -7 + 2 k), turned (45 r) degrees about Y and tipped
    20 degrees forward; ragdolls with r odd hold their pose with 150 N·m.
    """
    bodies = [ground()]
    for j in range(2):
        for k in range(5):
            for i in range(5):
                position = (-2.4 + 1.2 * i, 0.5 + 1.0 * j, -2.4 + 1.2 * k)
                bodies.append(body(len(bodies) + 1, "Dynamic", position, box_collider(0.5, 0.5, 0.5)))
    dolls = []
    for k in range(8):
        for i in range(8):
            r = 8 * k + i
            yaw = math.radians(45.0 * r) / 2.0
            tip = math.radians(20.0) / 2.0
            # yaw (about Y) then tip (about X, in the ragdoll's frame): q = yaw * tip
            q = {"x": math.cos(yaw) * math.sin(tip), "y": math.sin(yaw) * math.cos(tip),
                 "z": -math.sin(yaw) * math.sin(tip), "w": math.cos(yaw) * math.cos(tip)}
            dolls.append({"first_id": 1000 + 20 * r,
                          "position": vec3(-7.0 + 2.0 * i, 4.0 + 0.25 * ((i + k) % 4), -7.0 + 2.0 * k),
                          "rotation": q, "height": 1.8, "mass": 75.0,
                          "holding_torque": 150.0 if r % 2 == 1 else 0.0})
    s = scene("ragdolls", bodies)
    s["ragdolls"] = dolls
    return s


def chain():
    """8 chains (c = 0..7) of ten 0.4 m capsule links along +X from a world pivot at
    (0, 6, -7 + 2 c), released level; link ids 100 (c + 1) + 1..10, a 20 kg ball at the end
    (id 100 (c + 1) + 11). Five boxes (ids 2..6) stand where the chains swing through.
    """
    bodies = [ground()]
    for i in range(5):
        bodies.append(body(len(bodies) + 1, "Dynamic", (0.0, 0.5, -6.0 + 3.0 * i), box_collider(0.5, 0.5, 0.5)))
    joints = []
    for c in range(8):
        z = -7.0 + 2.0 * c
        for n in range(10):
            link_id = 100 * (c + 1) + n + 1
            bodies.append(body(link_id, "Dynamic", (0.2 + 0.4 * n, 6.0, z), capsule_collider(0.05, 0.15),
                               roll_quat(90.0), mass=1.0))
            joints.append({"kind": "Ball", "body_a": link_id,
                           "frame_a": {"position": vec3(0.0, -0.2, 0.0)},  # the link's end nearer the pivot
                           "body_b": 0 if n == 0 else link_id - 1,
                           "frame_b": {"position": vec3(0.0, 6.0, z) if n == 0 else vec3(0.0, 0.2, 0.0)}})
        weight_id = 100 * (c + 1) + 11
        bodies.append(body(weight_id, "Dynamic", (4.2, 6.0, z), sphere_collider(0.2), mass=20.0))
        joints.append({"kind": "Ball", "body_a": weight_id, "frame_a": {"position": vec3(-0.2, 0.0, 0.0)},
                       "body_b": weight_id - 1, "frame_b": {"position": vec3(0.0, 0.2, 0.0)}})
    s = scene("chain", bodies)
    s["joints"] = joints
    return s


def vehicle():
    """A 10-degree ramp (id 2, static, 40 m long, falling toward +Z and meeting the ground
    at z = 20), four cars (first_id 100, 110, 120, 130) parked on it 12 m up the slope from
    its centre with free wheels, and a wall of 24 boxes (ids 3..26) at z = 30 that they
    roll into.
    """
    bodies = [ground()]
    t = math.radians(10.0)
    ramp_y = 20.0 * math.sin(t) - 0.5 * math.cos(t)  # the +Z edge of its top face at y = 0
    bodies.append(body(2, "Static", (0.0, ramp_y, 0.0), box_collider(8.0, 0.5, 20.0), pitch_quat(10.0)))
    for j in range(4):
        for i in range(6):
            bodies.append(body(len(bodies) + 1, "Dynamic", (-3.0 + 1.2 * i, 0.5 + 1.0 * j, 30.0),
                               box_collider(0.5, 0.5, 0.5)))
    cars = []
    for n in range(4):
        # Top-face point 12 m up the slope, then the chassis centre 0.85 m along its normal.
        surface_y = ramp_y + 0.5 * math.cos(t) + 12.0 * math.sin(t)
        surface_z = 0.5 * math.sin(t) - 12.0 * math.cos(t)
        position = (-4.5 + 3.0 * n, surface_y + 0.85 * math.cos(t), surface_z + 0.85 * math.sin(t))
        cars.append({"first_id": 100 + 10 * n, "position": vec3(*position), "rotation": pitch_quat(10.0)})
    s = scene("vehicle", bodies)
    s["vehicles"] = cars
    return s


def arena(columns=8):
    """Body 1: a static 480 x 1 x 480 m slab (top face y = 0). Bodies 2 .. 2001: boxes and
    spheres (every third) resting at uniformly random points of x, z in [-230, 230].
    Bodies 2002 .. 2065: kinematic capsules, the players, on an 8 x 8 grid 56 m apart
    (arena_128.json: 128 of them, 16 x 8, 28 m apart in x)."""
    rng = Lcg(2027)
    bodies = [body(1, "Static", (0.0, -0.5, 0.0), box_collider(240.0, 0.5, 240.0))]
    for n in range(2000):
        x, z = rng.uniform(-230.0, 230.0), rng.uniform(-230.0, 230.0)
        body_id = len(bodies) + 1
        if n % 3 == 2:
            bodies.append(body(body_id, "Dynamic", (x, 0.4, z), sphere_collider(0.4)))
        else:
            bodies.append(body(body_id, "Dynamic", (x, 0.5, z), box_collider(0.5, 0.5, 0.5),
                               yaw_quat(rng.uniform(0.0, 90.0))))
    step_x = 56.0 * 8 / columns
    for i in range(columns):
        for k in range(8):
            position = (-224.0 + step_x * (i + 0.5), 1.0, -196.0 + 56.0 * k)
            bodies.append(body(len(bodies) + 1, "Kinematic", position, capsule_collider(0.4, 0.5)))
    return scene("arena" if columns == 8 else "arena_%d" % (columns * 8), bodies)


def arena_match():
    """Body 1: a static 220 x 1 x 180 m slab (top face y = 0). Bodies 2 .. 2001: crates (two
    in three) and balls, one per cell of a 50 x 40 grid of 4 m cells over 200 x 160 m, each
    within 1.2 m of its cell's centre (no two touch at the start). 128 spawn points on a
    16 x 8 grid 12 m by 18 m apart, each on a cell corner (at least 0.6 m clear of every
    body), facing +z."""
    rng = Lcg(2028)
    bodies = [body(1, "Static", (0.0, -0.5, 0.0), box_collider(110.0, 0.5, 90.0))]
    for i in range(50):
        for k in range(40):
            x = -98.0 + 4.0 * i + rng.uniform(-1.2, 1.2)
            z = -78.0 + 4.0 * k + rng.uniform(-1.2, 1.2)
            body_id = len(bodies) + 1
            if body_id % 3 == 1:
                bodies.append(body(body_id, "Dynamic", (x, 0.4, z), sphere_collider(0.4)))
            else:
                bodies.append(body(body_id, "Dynamic", (x, 0.5, z), box_collider(0.5, 0.5, 0.5),
                                   yaw_quat(rng.uniform(0.0, 90.0))))
    spawn_points = []
    for i in range(16):
        for k in range(8):
            spawn_points.append({"position": vec3(-90.0 + 12.0 * i, 0.0, -64.0 + 18.0 * k),
                                 "rotation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0}})
    return scene("arena_match", bodies, spawn_points)


def render(s):
    """JSON with one body / spawn point per line: diffable, and far smaller than indent=2."""
    lines = ["{"]
    keys = list(s.keys())
    for n, key in enumerate(keys):
        comma = "," if n + 1 < len(keys) else ""
        value = s[key]
        if isinstance(value, list):
            lines.append(f'  "{key}": [')
            for m, item in enumerate(value):
                item_comma = "," if m + 1 < len(value) else ""
                lines.append("    " + json.dumps(item, separators=(", ", ": ")) + item_comma)
            lines.append("  ]" + comma)
        else:
            lines.append(f'  "{key}": ' + json.dumps(value, separators=(", ", ": ")) + comma)
    lines.append("}")
    return "\n".join(lines) + "\n"


SCENES = {
    "pile.json": pile,
    "pile_4000.json": pile_4000,
    "pyramid.json": pyramid,
    "pyramid_5050.json": pyramid_5050,
    "spheres_capsules.json": spheres_capsules,
    "spheres_capsules_tilt.json": spheres_capsules_tilt,
    "mixed_10000.json": mixed_10000,
    "demo.json": demo,
    "characters.json": characters,
    "convex_pile.json": convex_pile,
    "ragdolls.json": ragdolls,
    "chain.json": chain,
    "vehicle.json": vehicle,
    "terrain.json": terrain,
    "arena.json": arena,
    "arena_128.json": lambda: arena(16),
    "arena_match.json": arena_match,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if a file differs from what would be written")
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: beside this script)")
    args = parser.parse_args()
    stale = []
    for file_name, build in SCENES.items():
        text = render(build())
        path = args.out / file_name
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(file_name)
        else:
            path.write_text(text)
            print(f"wrote {path} ({len(build()['bodies'])} bodies)")
    if stale:
        print("out of date (run python3 scenes/generate_scenes.py): " + ", ".join(stale),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
