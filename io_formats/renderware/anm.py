"""RenderWare animations (.anm): the RtAnim / HAnim keyframe stream.

The file is one Anim Animation chunk (0x1B): version 0x100, interpolator type
(1: standard HAnim keyframes; 2: compressed), key count, flags and duration,
then the keys. A standard key is 36 bytes: time, rotation x y z w (as applied),
translation, and the byte offset of the same node's previous key (-36 for none). The first
``nodes`` keys are each node's first key (in hierarchy order), the next
``nodes`` their second keys; every later key follows its previous one, so a
key's node is found by walking back to one of the first keys (done here by
pointer jumping, in numpy).

Compressed keys (type 2) are kept as bytes: librw, the reference reader, has no
interpolator for them, and neither has RigPort's importer (it says so).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from ..codec import FormatError, Reader
from .chunks import read_chunk

ANIM_ANIMATION = 0x1B
VERSION = 0x100
STANDARD = 1
COMPRESSED = 2
#: The previous-key offset of a node's first key (none): anything that does not
#: point at key 0, so librw's node count (keys up to the first one that points
#: at key 0) is right.
NO_KEY = -36
KEY = np.dtype([("time", "<f4"), ("q", "<f4", 4), ("t", "<f4", 3), ("prev", "<i4")])


@dataclass
class AnmFile:
    stamp: int
    type_id: int
    flags: int
    duration: float  # as read: a numpy float32 with the file's exact bits
    keys: np.ndarray | None  # KEY records (standard keys)
    raw_keys: bytes = b""  # the keys of another interpolator, as read
    count: int = 0  # the declared key count
    version: int = VERSION
    trailing: bytes = b""

    def node_count(self) -> int:
        """Nodes: the keys before the first key that is later than the very first."""
        if self.keys is None or not len(self.keys):
            return 0
        later = np.nonzero(self.keys["time"] > self.keys["time"][0])[0]
        return int(later[0]) if len(later) else len(self.keys)

    def nodes_of_keys(self, nodes: int) -> np.ndarray:
        """The node index of every key, from the previous-key offsets."""
        k = self.keys
        n = len(k)
        if nodes <= 0 or nodes > n or n < 2 * nodes and n != nodes:
            raise FormatError(f"{n} keys cannot animate {nodes} nodes (two keys each at least)")
        prev = k["prev"].astype(np.int64)
        later = prev[nodes:]
        if np.any(later % KEY.itemsize) or np.any(later < 0):
            raise FormatError("a previous-key offset is not a multiple of 36 or negative")
        ptr = prev // KEY.itemsize
        idx = np.arange(n)
        bad = (idx >= nodes) & (ptr >= idx)
        if bad.any():
            raise FormatError(f"key {int(np.nonzero(bad)[0][0])} points forward or at itself")
        ptr[:nodes] = idx[:nodes]
        for _ in range(64):  # pointer jumping: depth halves every round
            nxt = ptr[ptr]
            if np.array_equal(nxt, ptr):
                break
            ptr = nxt
        return ptr

    def tracks(self, nodes: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per node: times, rotation (w x y z) and translation, in time order."""
        node = self.nodes_of_keys(nodes)
        order = np.lexsort((self.keys["time"], node))
        k = self.keys[order]
        bounds = np.searchsorted(node[order], np.arange(nodes + 1))
        out = []
        for i in range(nodes):
            s = k[bounds[i] : bounds[i + 1]]
            q = s["q"].astype(np.float64)[:, [3, 0, 1, 2]]
            out.append((s["time"].astype(np.float64), q, s["t"].astype(np.float64)))
        return out


def read(data: bytes) -> AnmFile:
    r = Reader(data)
    at = r.pos
    kind, stamp, body = read_chunk(r, "animation")
    if kind != ANIM_ANIMATION:
        raise FormatError(f"not a RenderWare animation: chunk 0x{kind:X}, expected 0x1B", at)
    version, type_id, count, flags = body.i32(), body.i32(), body.i32(), body.i32()
    duration = body.f32_exact()
    if version != VERSION:
        raise FormatError(f"animation version 0x{version:X} (expected 0x100)", at + 12)
    if type_id == STANDARD:
        body.count(count, KEY.itemsize, "key")
        keys = body.array(KEY, count, "keys")
        if not body.at_end():
            raise body.error(f"{body.remaining} bytes after the {count} keys")
        return AnmFile(stamp, type_id, flags, duration, keys, b"", count, version, r.rest())
    return AnmFile(stamp, type_id, flags, duration, None, body.rest(), count, version, r.rest())


def write(f: AnmFile) -> bytes:
    if f.keys is not None:
        count, payload = len(f.keys), np.ascontiguousarray(f.keys, KEY).tobytes()
    else:
        count, payload = f.count, f.raw_keys
    head = struct.pack("<iiii", f.version, f.type_id, count, f.flags)
    if isinstance(f.duration, np.float32):  # its exact bits (a signalling NaN stays one)
        head += np.array(f.duration, "<f4").tobytes()
    else:
        head += struct.pack("<f", f.duration)
    body = head + payload
    return struct.pack("<III", ANIM_ANIMATION, len(body), f.stamp) + body + f.trailing


def from_tracks(
    tracks: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    stamp: int,
    flags: int = 0,
) -> AnmFile:
    """Standard keys in the stream order RenderWare plays them: every node's first
    two keys, then each further key ordered by the time of the key before it."""
    n = len(tracks)
    counts = np.array([len(t[0]) for t in tracks])
    if n == 0 or counts.min() < 2:
        raise FormatError("every node needs two keys at least")
    node = np.repeat(np.arange(n), counts)
    rank = np.concatenate([np.arange(c) for c in counts])
    times = np.concatenate([t[0] for t in tracks])
    q = np.concatenate([t[1] for t in tracks])[:, [1, 2, 3, 0]]
    tr = np.concatenate([t[2] for t in tracks])
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    prev_time = np.where(rank > 0, times[np.maximum(np.arange(len(times)) - 1, 0)], -1.0)
    # First keys by node, second keys by node, then by the previous key's time.
    group = np.minimum(rank, 2)
    order = np.lexsort((node, np.where(group < 2, 0.0, prev_time), group))
    place = np.empty(len(order), np.int64)
    place[order] = np.arange(len(order))
    keys = np.zeros(len(order), KEY)
    keys["time"] = times[order]
    keys["q"] = q[order]
    keys["t"] = tr[order]
    flat = np.arange(len(times))
    prev_flat = np.where(rank > 0, flat - 1, flat)
    prev_flat = np.where(rank > 0, prev_flat, start[node])
    keys["prev"] = np.where(rank[order] > 0, place[prev_flat[order]] * KEY.itemsize, NO_KEY)
    duration = float(max(t[0][-1] for t in tracks))
    return AnmFile(stamp, STANDARD, flags, duration, keys, b"", len(keys))
