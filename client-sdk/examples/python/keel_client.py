"""A small Python binding of Keel's client SDK over ctypes (Python 3's standard library
only): it loads libkeel_client.so, declares the C API's structs and prototypes
(keel/client/keel_client.h) and refuses a library of another ABI.

    import keel_client
    lib = keel_client.load()             # $KEEL_CLIENT_LIBRARY, else libkeel_client.so.1
    client = keel_client.Client(lib, "127.0.0.1:7777", predict=True)
    client.connect_dev(client_id=1, match_id=1, now=0.0)
    client.update(now)                   # every frame, from one thread
    client.set_input("move", (0.0, 1.0)) # fields by the name the game declares
    pose = client.pose(body_id, now)

Every call that fails raises KeelError with the C API's code and message. A Client is
used from one thread (the library runs no thread of its own); close() it, or use it as a
context manager, to free the handle. docs/client-sdk.md, "Python", walks through it.
"""

import ctypes
import os

# The C ABI this binding was written for (keel_client.h): a library of the same major
# and at least this minor has every function and field declared below.
ABI_MAJOR = 1
ABI_MINOR = 2

OK = 0
ERROR_NOT_FOUND = 5
RESULT_NAMES = {
    0: "OK", 1: "ARGUMENT", 2: "ADDRESS", 3: "TOKEN", 4: "STATE", 5: "NOT_FOUND",
    6: "INTERNAL", 7: "GAME", 8: "KIND",
}

MODE_INTERPOLATE = 0
MODE_PREDICT = 1
STATE_NAMES = {0: "disconnected", 1: "connecting", 2: "accepted", 3: "playing", 4: "reconnecting"}
STATE_PLAYING = 3

FIELD_BOOL, FIELD_BUTTONS, FIELD_INT, FIELD_ENUM, FIELD_FIXED = 0, 1, 2, 3, 4
FIELD_STICK, FIELD_ANGLE, FIELD_DIRECTION3, FIELD_POINT3 = 5, 6, 7, 8
FIELD_KIND_NAMES = {0: "bool", 1: "buttons", 2: "int", 3: "enum", 4: "fixed", 5: "stick",
                    6: "angle", 7: "direction3", 8: "point3"}

SHAPE_NAMES = {0: "sphere", 1: "box", 2: "capsule", 3: "hull", 4: "mesh", 5: "heightfield"}
MOTION_NAMES = {0: "static", 1: "kinematic", 2: "dynamic"}

PLAYER_JOINED = 0
PLAYER_LEFT = 1
MAX_EVENT_VALUES = 32


class KeelError(Exception):
    def __init__(self, what, code, message):
        super().__init__(f"{what}: {RESULT_NAMES.get(code, code)}" + (f" ({message})" if message else ""))
        self.code = code
        self.message = message


c_double3 = ctypes.c_double * 3


class LinkConfig(ctypes.Structure):
    _fields_ = [("latency_ms", ctypes.c_double), ("jitter_ms", ctypes.c_double), ("loss", ctypes.c_double),
                ("duplicate", ctypes.c_double), ("reorder", ctypes.c_double), ("seed", ctypes.c_uint64)]


class Config(ctypes.Structure):
    _fields_ = [("mode", ctypes.c_int), ("server_address", ctypes.c_char_p),
                ("link", ctypes.POINTER(LinkConfig)), ("interpolation_delay_intervals", ctypes.c_double),
                ("max_rollback_ticks", ctypes.c_uint32), ("desync_dump_dir", ctypes.c_char_p),
                ("auto_reconnect", ctypes.c_int), ("game_module", ctypes.c_char_p)]


class Pose(ctypes.Structure):
    _fields_ = [("position", ctypes.c_float * 3), ("rotation", ctypes.c_float * 4), ("extrapolated", ctypes.c_int)]


class Stats(ctypes.Structure):
    _fields_ = [("state", ctypes.c_uint32), ("player_id", ctypes.c_uint32),
                ("snapshots_received", ctypes.c_uint64), ("confirmed_ticks", ctypes.c_uint64),
                ("hash_checks", ctypes.c_uint64), ("hash_mismatches", ctypes.c_uint64),
                ("rollbacks", ctypes.c_uint64), ("max_rollback_ticks", ctypes.c_uint32),
                ("last_rollback_ticks", ctypes.c_uint32), ("inputs_sent", ctypes.c_uint64),
                ("inputs_late", ctypes.c_uint64), ("bytes_sent", ctypes.c_uint64),
                ("bytes_received", ctypes.c_uint64), ("reconnects", ctypes.c_uint64),
                ("dropped", ctypes.c_uint64), ("rtt_ms", ctypes.c_double), ("server_tick", ctypes.c_double),
                ("input_lead_ticks", ctypes.c_double), ("rollbacks_across_state_changes", ctypes.c_uint64),
                ("game_events_dropped", ctypes.c_uint64)]


class LinkStats(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("state", ctypes.c_uint32), ("rtt_ms", ctypes.c_double),
                ("jitter_ms", ctypes.c_double), ("loss_out", ctypes.c_double), ("loss_in", ctypes.c_double),
                ("kbps_out", ctypes.c_double), ("kbps_in", ctypes.c_double),
                ("packets_sent", ctypes.c_uint64), ("packets_received", ctypes.c_uint64),
                ("bytes_sent", ctypes.c_uint64), ("bytes_received", ctypes.c_uint64),
                ("rollbacks", ctypes.c_uint64), ("hash_checks", ctypes.c_uint64),
                ("hash_mismatches", ctypes.c_uint64), ("player_events_dropped", ctypes.c_uint64)]


class InputField(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_uint32), ("components", ctypes.c_uint32),
                ("min", c_double3), ("max", c_double3), ("step", ctypes.c_double),
                ("label_count", ctypes.c_uint32)]


class GameEvent(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint32), ("type_name", ctypes.c_char_p), ("tick", ctypes.c_uint64),
                ("predicted", ctypes.c_int), ("value_count", ctypes.c_uint32),
                ("values", ctypes.c_double * MAX_EVENT_VALUES)]


class PlayerEvent(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_uint32), ("player_id", ctypes.c_uint32), ("tick", ctypes.c_uint64)]


class BodyDesc(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint32), ("motion", ctypes.c_uint32), ("kind", ctypes.c_uint32),
                ("collider_count", ctypes.c_uint32), ("complete", ctypes.c_int),
                ("position", ctypes.c_float * 3), ("rotation", ctypes.c_float * 4)]


class ColliderDesc(ctypes.Structure):
    _fields_ = [("shape", ctypes.c_uint32), ("position", ctypes.c_float * 3), ("rotation", ctypes.c_float * 4),
                ("radius", ctypes.c_float), ("half_height", ctypes.c_float), ("half_extents", ctypes.c_float * 3),
                ("point_count", ctypes.c_uint32), ("points", ctypes.POINTER(ctypes.c_float)),
                ("index_count", ctypes.c_uint32), ("indices", ctypes.POINTER(ctypes.c_uint32)),
                ("rows", ctypes.c_uint32), ("columns", ctypes.c_uint32), ("cell_size", ctypes.c_float),
                ("heights", ctypes.POINTER(ctypes.c_float)), ("is_trigger", ctypes.c_int)]


_H = ctypes.c_void_p  # keel_client*
_R = ctypes.c_int     # keel_result
P = ctypes.POINTER
_PROTOTYPES = {
    "keel_client_abi_version": (ctypes.c_uint32, []),
    "keel_client_version_string": (ctypes.c_char_p, []),
    "keel_client_config_init": (None, [P(Config)]),
    "keel_client_create": (_R, [P(Config), P(_H)]),
    "keel_client_create_error": (ctypes.c_char_p, []),
    "keel_client_destroy": (None, [_H]),
    "keel_client_connect": (_R, [_H, ctypes.c_char_p, ctypes.c_double]),
    "keel_client_connect_dev": (_R, [_H, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_double]),
    "keel_client_disconnect": (_R, [_H, ctypes.c_double]),
    "keel_client_update": (_R, [_H, ctypes.c_double]),
    "keel_client_input_field_count": (ctypes.c_uint32, [_H]),
    "keel_client_input_field": (_R, [_H, ctypes.c_uint32, P(InputField)]),
    "keel_client_find_input_field": (ctypes.c_uint32, [_H, ctypes.c_char_p]),
    "keel_client_input_label": (ctypes.c_char_p, [_H, ctypes.c_uint32, ctypes.c_uint32]),
    "keel_client_set_input_bool": (_R, [_H, ctypes.c_uint32, ctypes.c_int]),
    "keel_client_set_input_buttons": (_R, [_H, ctypes.c_uint32, ctypes.c_uint32]),
    "keel_client_set_input_int": (_R, [_H, ctypes.c_uint32, ctypes.c_int32]),
    "keel_client_set_input_number": (_R, [_H, ctypes.c_uint32, ctypes.c_double]),
    "keel_client_set_input_vector": (_R, [_H, ctypes.c_uint32, ctypes.c_double, ctypes.c_double, ctypes.c_double]),
    "keel_client_event_type_count": (ctypes.c_uint32, [_H]),
    "keel_client_event_type_name": (ctypes.c_char_p, [_H, ctypes.c_uint32]),
    "keel_client_event_field_count": (ctypes.c_uint32, [_H, ctypes.c_uint32]),
    "keel_client_event_field": (_R, [_H, ctypes.c_uint32, ctypes.c_uint32, P(InputField)]),
    "keel_client_poll_game_event": (_R, [_H, P(GameEvent)]),
    "keel_client_poll_player_event": (_R, [_H, P(PlayerEvent)]),
    "keel_client_pose": (_R, [_H, ctypes.c_uint32, ctypes.c_double, P(Pose)]),
    "keel_client_state": (ctypes.c_int, [_H]),
    "keel_client_get_stats": (_R, [_H, P(Stats)]),
    "keel_client_get_link_stats": (_R, [_H, P(LinkStats)]),
    "keel_client_last_error": (ctypes.c_char_p, [_H]),
    "keel_client_world_version": (ctypes.c_uint64, [_H]),
    "keel_client_body_count": (ctypes.c_uint32, [_H]),
    "keel_client_body_at": (_R, [_H, ctypes.c_uint32, P(BodyDesc)]),
    "keel_client_find_body": (_R, [_H, ctypes.c_uint32, P(BodyDesc)]),
    "keel_client_body_collider": (_R, [_H, ctypes.c_uint32, ctypes.c_uint32, P(ColliderDesc)]),
}


def load(path=None):
    """Loads libkeel_client.so: `path`, else $KEEL_CLIENT_LIBRARY, else the SONAME through
    the dynamic loader's search path. Raises OSError when it does not load and KeelError
    when its ABI is not this binding's."""
    path = path or os.environ.get("KEEL_CLIENT_LIBRARY") or f"libkeel_client.so.{ABI_MAJOR}"
    lib = ctypes.CDLL(path)
    try:
        abi = lib.keel_client_abi_version
    except AttributeError:
        raise KeelError(f"{path} is not libkeel_client (no keel_client_abi_version)", 1, "") from None
    abi.restype, abi.argtypes = ctypes.c_uint32, []
    version = abi()
    major, minor = version >> 16, version & 0xFFFF
    if major != ABI_MAJOR or minor < ABI_MINOR:
        raise KeelError(f"{path} has C ABI {major}.{minor}; this binding needs {ABI_MAJOR}.{ABI_MINOR} "
                        f"or a later minor", 1, "")
    for name, (restype, argtypes) in _PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    lib.keel_abi = (major, minor)
    return lib


def library_version(lib):
    return lib.keel_client_version_string().decode()


def _text(raw):
    return raw.decode(errors="replace") if raw else ""


class Client:
    """One client handle. `game_module`: the game module's path (.so) the server runs
    with --game, or None for the sandbox."""

    def __init__(self, lib, address, predict=False, game_module=None, link=None):
        self.lib = lib
        self._handle = _H()
        config = Config()
        lib.keel_client_config_init(ctypes.byref(config))
        config.server_address = address.encode()
        config.mode = MODE_PREDICT if predict else MODE_INTERPOLATE
        config.game_module = game_module.encode() if game_module else None
        self._link = None
        if link is not None:
            self._link = LinkConfig(**link)
            config.link = ctypes.pointer(self._link)
        rc = lib.keel_client_create(ctypes.byref(config), ctypes.byref(self._handle))
        if rc != OK:
            raise KeelError(f"keel_client_create({address})", rc, _text(lib.keel_client_create_error()))
        self.fields = [self._field(i) for i in range(lib.keel_client_input_field_count(self._handle))]
        self.event_types = [_text(lib.keel_client_event_type_name(self._handle, t))
                            for t in range(lib.keel_client_event_type_count(self._handle))]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self._handle:
            self.lib.keel_client_destroy(self._handle)
            self._handle = _H()

    def __del__(self):
        # A handle the program forgot to close is freed with its Python object.
        if getattr(self, "_handle", None):
            self.close()

    def _check(self, rc, what):
        if rc != OK:
            raise KeelError(what, rc, _text(self.lib.keel_client_last_error(self._handle)))

    def _field(self, index):
        f = InputField()
        self._check(self.lib.keel_client_input_field(self._handle, index, ctypes.byref(f)), "keel_client_input_field")
        labels = [_text(self.lib.keel_client_input_label(self._handle, index, i)) for i in range(f.label_count)]
        return {"index": index, "name": _text(f.name), "kind": FIELD_KIND_NAMES.get(f.kind, str(f.kind)),
                "components": f.components, "min": list(f.min[:f.components]), "max": list(f.max[:f.components]),
                "step": f.step, "labels": labels}

    def connect(self, token_base64, now):
        self._check(self.lib.keel_client_connect(self._handle, token_base64.encode(), now), "keel_client_connect")

    def connect_dev(self, client_id, match_id, now):
        self._check(self.lib.keel_client_connect_dev(self._handle, client_id, match_id, now), "keel_client_connect_dev")

    def disconnect(self, now):
        self._check(self.lib.keel_client_disconnect(self._handle, now), "keel_client_disconnect")

    def update(self, now):
        self._check(self.lib.keel_client_update(self._handle, now), "keel_client_update")

    def state(self):
        return STATE_NAMES.get(self.lib.keel_client_state(self._handle), "unknown")

    def set_input(self, name, value):
        """Sets input field `name` (as the game declares it) from a Python value: bool,
        an int (int, enum, a buttons mask), a float (fixed, angle) or a tuple (stick,
        direction3, point3)."""
        index = self.lib.keel_client_find_input_field(self._handle, name.encode())
        if index >= len(self.fields):
            raise KeelError(f"set_input({name})", 5, f"the game has no input field {name!r}")
        kind = self.fields[index]["kind"]
        h = self._handle
        if kind == "bool":
            rc = self.lib.keel_client_set_input_bool(h, index, 1 if value else 0)
        elif kind == "buttons":
            rc = self.lib.keel_client_set_input_buttons(h, index, int(value))
        elif kind in ("int", "enum"):
            rc = self.lib.keel_client_set_input_int(h, index, int(value))
        elif kind in ("fixed", "angle"):
            rc = self.lib.keel_client_set_input_number(h, index, float(value))
        else:
            v = list(value) + [0.0] * (3 - len(value))
            rc = self.lib.keel_client_set_input_vector(h, index, float(v[0]), float(v[1]), float(v[2]))
        self._check(rc, f"set_input({name})")

    def pose(self, body_id, now):
        """(position, rotation, extrapolated) of body `body_id`, or None when unknown."""
        p = Pose()
        rc = self.lib.keel_client_pose(self._handle, body_id, now, ctypes.byref(p))
        if rc == ERROR_NOT_FOUND:
            return None
        self._check(rc, "keel_client_pose")
        return tuple(p.position), tuple(p.rotation), bool(p.extrapolated)

    def game_events(self):
        """Every game event not yet polled: dicts of type name, tick, predicted, values."""
        out = []
        e = GameEvent()
        while True:
            rc = self.lib.keel_client_poll_game_event(self._handle, ctypes.byref(e))
            if rc == ERROR_NOT_FOUND:
                return out
            self._check(rc, "keel_client_poll_game_event")
            out.append({"type": _text(e.type_name), "tick": e.tick, "predicted": bool(e.predicted),
                        "values": list(e.values[:e.value_count])})

    def player_events(self):
        """Every join and leave not yet polled: ("joined" | "left", player id, tick)."""
        out = []
        e = PlayerEvent()
        while True:
            rc = self.lib.keel_client_poll_player_event(self._handle, ctypes.byref(e))
            if rc == ERROR_NOT_FOUND:
                return out
            self._check(rc, "keel_client_poll_player_event")
            out.append(("joined" if e.kind == PLAYER_JOINED else "left", e.player_id, e.tick))

    def stats(self):
        s = Stats()
        self._check(self.lib.keel_client_get_stats(self._handle, ctypes.byref(s)), "keel_client_get_stats")
        return {name: getattr(s, name) for name, _ in Stats._fields_}

    def link_stats(self):
        s = LinkStats()  # zeroed; the size is this binding's, so a newer library fills only what it knows
        s.struct_size = ctypes.sizeof(LinkStats)
        self._check(self.lib.keel_client_get_link_stats(self._handle, ctypes.byref(s)), "keel_client_get_link_stats")
        return {name: getattr(s, name) for name, _ in LinkStats._fields_}

    def world_version(self):
        """Grows whenever the body list changes (0 before the first scene)."""
        return self.lib.keel_client_world_version(self._handle)

    def bodies(self):
        """Every described body, by ascending id: dicts of id, motion, kind, complete, the
        pose when described, and its colliders (shape, local pose, dimensions, and the
        counts of any hull points, mesh triangles or heightfield samples). The geometry's
        arrays belong to the library until the next update, so they are copied here."""
        out = []
        b = BodyDesc()
        for i in range(self.lib.keel_client_body_count(self._handle)):
            self._check(self.lib.keel_client_body_at(self._handle, i, ctypes.byref(b)), "keel_client_body_at")
            out.append({"id": b.id, "motion": MOTION_NAMES.get(b.motion, str(b.motion)), "kind": b.kind,
                        "complete": bool(b.complete), "position": tuple(b.position),
                        "rotation": tuple(b.rotation),
                        "colliders": [self._collider(b.id, c) for c in range(b.collider_count)]})
        return out

    def _collider(self, body_id, index):
        c = ColliderDesc()
        self._check(self.lib.keel_client_body_collider(self._handle, body_id, index, ctypes.byref(c)),
                    "keel_client_body_collider")
        shape = SHAPE_NAMES.get(c.shape, str(c.shape))
        out = {"shape": shape, "position": tuple(c.position), "rotation": tuple(c.rotation),
               "trigger": bool(c.is_trigger)}
        if shape in ("sphere", "capsule"):
            out["radius"] = c.radius
        if shape == "capsule":
            out["half_height"] = c.half_height
        if shape == "box":
            out["half_extents"] = tuple(c.half_extents)
        if shape in ("hull", "mesh"):
            out["points"] = [tuple(c.points[3 * k:3 * k + 3]) for k in range(c.point_count)] if c.points else []
        if shape == "mesh":
            out["triangles"] = c.index_count // 3
        if shape == "heightfield":
            out["grid"] = (c.rows, c.columns, c.cell_size)
        return out
