"""FrameList: the clump's transform hierarchy, frame names and the HAnim PLG."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..codec import FormatError, Reader
from ..transforms import parent_first_order
from .chunks import FRAME_LIST, FRAME_NAME, HANIM_PLG, STRUCT, chunk_bytes, expect_chunk, finish
from .extension import Extension, read_extension

#: HAnim node flags: this node is the last of a branch / has a later sibling.
HANIM_POP = 1
HANIM_PUSH = 2

FRAME_DTYPE = np.dtype(
    [("rotation", "<f4", (3, 3)), ("position", "<f4", (3,)), ("parent", "<i4"), ("flags", "<u4")]
)
HANIM_NODE_DTYPE = np.dtype([("id", "<i4"), ("index", "<i4"), ("flags", "<u4")])


@dataclass
class FrameName:
    """Node name plugin (0x0253F2FE): the name's bytes, no terminator."""

    stamp: int
    raw: bytes

    @property
    def name(self) -> str:
        return self.raw.decode("utf-8", "surrogateescape")

    def to_bytes(self) -> bytes:
        return chunk_bytes(FRAME_NAME, self.stamp, self.raw)


@dataclass
class HAnimPLG:
    """HAnim plugin (0x11E): the frame's bone ID; on the root bone, the hierarchy.

    ``nodes`` (when there is a hierarchy) has fields id, index and flags
    (:data:`HANIM_PUSH`, :data:`HANIM_POP`); the node order is the skin's bone order.
    """

    stamp: int
    version: int
    node_id: int
    nodes: np.ndarray | None = None
    flags: int = 0
    key_frame_size: int = 36

    def to_bytes(self) -> bytes:
        n = 0 if self.nodes is None else len(self.nodes)
        head = np.array([self.version, self.node_id, n], "<i4").tobytes()
        if n:
            head += np.array([self.flags, self.key_frame_size], "<u4").tobytes()
            head += np.ascontiguousarray(self.nodes, HANIM_NODE_DTYPE).tobytes()
        return chunk_bytes(HANIM_PLG, self.stamp, head)


def read_frame_name(r: Reader, stamp: int) -> FrameName:
    return FrameName(stamp, r.rest())


def read_hanim(r: Reader, stamp: int) -> HAnimPLG:
    version, node_id, n = r.i32(), r.i32(), r.i32()
    if n < 0:
        raise r.error(f"HAnim PLG: negative node count {n}", r.pos - 4)
    if n == 0:
        finish(r, "HAnim PLG")
        return HAnimPLG(stamp, version, node_id)
    flags, key_size = r.u32(), r.u32()
    r.count(n, HANIM_NODE_DTYPE.itemsize, "HAnim node")
    nodes = r.array(HANIM_NODE_DTYPE, n, "HAnim nodes")
    finish(r, "HAnim PLG")
    return HAnimPLG(stamp, version, node_id, nodes, flags, key_size)


FRAME_PLUGINS = {FRAME_NAME: read_frame_name, HANIM_PLG: read_hanim}


def hanim_parents(flags: np.ndarray) -> np.ndarray:
    """Parent node of each HAnim node from the push/pop flags (-1 for the root)."""
    parents = np.full(len(flags), -1, np.int32)
    stack: list[int] = []
    current = -1
    for i, f in enumerate(np.asarray(flags).tolist()):
        parents[i] = current
        if f & HANIM_PUSH:
            stack.append(current)
        current = i
        if f & HANIM_POP:
            current = stack.pop() if stack else -1
    return parents


def hanim_flags(parents: np.ndarray) -> np.ndarray:
    """Push/pop flags of nodes in depth-first order with the given parents.

    Raises ValueError when the order is not depth-first (a child before its
    parent, or a branch resumed after another one started).
    """
    parents = np.asarray(parents, np.int64)
    n = len(parents)
    has_child = np.zeros(n, bool)
    later_sibling = np.zeros(n, bool)
    last_child: dict[int, int] = {}
    for i, p in enumerate(parents.tolist()):
        if p >= i:
            raise ValueError(f"node {i} comes before its parent {p}")
        if p >= 0:
            has_child[p] = True
        if p in last_child:
            later_sibling[last_child[p]] = True
        last_child[p] = i
    flags = np.where(later_sibling, HANIM_PUSH, 0) | np.where(has_child, 0, HANIM_POP)
    flags = flags.astype(np.uint32)
    if n and not np.array_equal(hanim_parents(flags), parents):
        raise ValueError("the nodes are not in depth-first order")
    return flags


@dataclass
class FrameList:
    stamp: int
    struct_stamp: int
    frames: np.ndarray  # FRAME_DTYPE records
    extensions: list[Extension] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.frames)

    def name(self, i: int) -> str | None:
        plugin = self.extensions[i].find(FrameName)
        return None if plugin is None else plugin.name

    def hanim(self, i: int) -> HAnimPLG | None:
        return self.extensions[i].find(HAnimPLG)

    def to_bytes(self) -> bytes:
        body = np.array([len(self.frames)], "<u4").tobytes()
        body += np.ascontiguousarray(self.frames, FRAME_DTYPE).tobytes()
        out = chunk_bytes(STRUCT, self.struct_stamp, body)
        out += b"".join(e.to_bytes() for e in self.extensions)
        return chunk_bytes(FRAME_LIST, self.stamp, out)


def read_frame_list(r: Reader, stamp: int) -> FrameList:
    sstamp, s = expect_chunk(r, STRUCT, "frame list struct")
    n = s.u32()
    s.count(n, FRAME_DTYPE.itemsize, "frame")
    frames = s.array(FRAME_DTYPE, n, "frames")
    finish(s, "frame list struct")
    parents = frames["parent"]
    bad = np.nonzero((parents < -1) | (parents >= n) | (parents == np.arange(n)))[0]
    if len(bad):
        i = int(bad[0])
        raise FormatError(
            f"frame {i} has parent {int(parents[i])} (frames: {n})", s.pos - (n - i) * 56 + 48
        )
    try:
        parent_first_order(parents)
    except ValueError as exc:
        raise FormatError(f"frame hierarchy: {exc}".replace("bone", "frame"), s.pos) from None
    r.count(n, 12, "frame extension")
    extensions = [read_extension(r, f"frame {i}", FRAME_PLUGINS) for i in range(n)]
    finish(r, "frame list")
    return FrameList(stamp, sstamp, frames, extensions)


def frame_matrices(frames: np.ndarray) -> np.ndarray:
    """(N, 4, 4) local matrices, column-vector convention (columns right, up, at, pos)."""
    n = len(frames)
    m = np.zeros((n, 4, 4), np.float64)
    m[:, :3, :3] = np.transpose(frames["rotation"].astype(np.float64), (0, 2, 1))
    m[:, :3, 3] = frames["position"]
    m[:, 3, 3] = 1.0
    return m
