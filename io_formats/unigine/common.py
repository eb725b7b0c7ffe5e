"""Pieces the MESH and ANIM codecs share: strings, bounds, bones, index widths and
the per-frame change-flag records of animations.

Frame records (FORMAT-NOTES): one flag byte per bone per frame; bit 0..2 =
translation x, y, z, bit 3 = rotation (short[4] x y z w), bit 4..6 = scale x,
y, z. A set bit means the component is stored in this record; a clear bit
means the previous frame's value holds. Translations and scales are float32 in
MESH files and box-quantised uint16 in ANIM files. Bit 7 stores nothing and is
kept as read.

Records have variable sizes, so finding where each one starts is inherently
sequential: :func:`read_frames` walks the flag bytes with a table of record
sizes (one small loop step per record) and then gathers every field with numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..bounds import box_sphere
from ..codec import FormatError, Reader, Writer
from ..codec.errors import plural_of

#: The bits of a frame flag, in the order their data is stored.
COMPONENT_BITS = (0, 1, 2, 3, 4, 5, 6)
ROTATION_BIT = 3
TRANSLATION_MASK = 0x07
ROTATION_MASK = 0x08
SCALE_MASK = 0x70

#: Frames per second of a file's animation frames. MESH and ANIM files store frame
#: numbers and no rate: RigPort takes a frame as 1/30 s (frame_rate options of the
#: operators say at which rate those seconds become Blender frames).
FRAME_RATE = 30.0


def expect_magic(r: Reader, magic: bytes, what: str) -> None:
    """The file's version tag (``ms11``, ``an10``): another version of the same
    family is "unsupported version", anything else is not this kind of file."""
    head = r.bytes(4) if r.remaining >= 4 else r.rest()
    if head == magic:
        return
    tag = magic.decode("ascii")
    if len(head) == 4 and head[:2] == magic[:2]:
        raise FormatError(
            f"unsupported version {head.decode('latin-1')!r}: "
            f"RigPort reads only {tag} {plural_of(what)}",
            0,
        )
    raise FormatError(f"not a Unigine {what}: expected magic b'{tag}', found {head!r}", 0)


def read_int(r: Reader, what: str) -> int:
    """A compact integer in its shortest encoding.

    Unigine writes the shortest form; a longer one (or a negative zero) would
    not be written back the same, so it is refused rather than silently changed.
    """
    start = r.pos
    value = r.compact_int()
    mag = abs(value)
    shortest = 1 + max(0, -(-(mag.bit_length() - 6) // 7))
    if r.pos - start != shortest or (value == 0 and r.data[start] & 0x40):
        raise r.error(f"{what}: compact integer not in its shortest encoding", start)
    return value


def read_string(r: Reader, what: str) -> str:
    """A compact-int length that counts the closing NUL, then the bytes and the NUL."""
    start = r.pos
    n = read_int(r, f"{what} length")
    if n < 1:
        raise r.error(f"{what}: string length {n} (it must count the closing NUL)", start)
    r.count(n, 1, f"{what} string")
    raw = r.bytes(n)
    if raw[-1] != 0:
        raise r.error(f"{what}: string does not end with a NUL", r.pos - 1)
    return raw[:-1].decode("utf-8", "surrogateescape")


def write_string(w: Writer, s: str) -> None:
    raw = s.encode("utf-8", "surrogateescape")
    w.compact_int(len(raw) + 1)
    w.bytes(raw + b"\0")


def read_bounds(r: Reader, what: str) -> np.ndarray:
    """Box minimum, box maximum, sphere centre (float[3] each) and sphere radius."""
    return r.array("<f4", 10, f"{what} bounds")


def write_bounds(w: Writer, bounds: np.ndarray) -> None:
    w.array(np.asarray(bounds).reshape(10), "<f4")


def compute_bounds(points: np.ndarray) -> np.ndarray:
    """Box of ``points``; sphere around the box centre that holds every point."""
    out = np.zeros(10, np.float32)
    out[0:3], out[3:6], out[6:9], out[9] = box_sphere(np.asarray(points, np.float64).reshape(-1, 3))
    return out


def index_dtype(count: int) -> str:
    """Index width by the count of what is indexed: < 256 uint8, < 65536 uint16, else int32."""
    if count < 256:
        return "<u1"
    if count < 65536:
        return "<u2"
    return "<i4"


def read_indices(r: Reader, limit: int, what: str) -> np.ndarray:
    """A compact-int count, then indices as wide as ``limit`` asks; each < ``limit``."""
    n = read_int(r, f"{what} count")
    dt = np.dtype(index_dtype(limit))
    r.count(n, dt.itemsize, what)
    start = r.pos
    idx = r.array(dt, n, what).astype(np.int64)
    bad = np.nonzero((idx < 0) | (idx >= limit))[0]
    if len(bad):
        i = int(bad[0])
        raise r.error(
            f"{what} {i} is {int(idx[i])}, out of range for {limit} vertices",
            start + i * dt.itemsize,
        )
    return idx


def write_indices(w: Writer, idx: np.ndarray, limit: int) -> None:
    w.compact_int(len(idx))
    w.array(idx, index_dtype(limit))


@dataclass
class Bone:
    name: str
    parent: int  # -1 for a root; may be larger than the bone's own index


def read_bones(r: Reader) -> list[Bone]:
    n = read_int(r, "bone count")
    r.count(n, 3, "bone")
    bones = []
    for i in range(n):
        name = read_string(r, f"bone {i} name")
        at = r.pos
        parent = r.i16()
        if not -1 <= parent < n:
            raise r.error(f"bone {i} ({name!r}) has parent {parent} of {n} bones", at)
        bones.append(Bone(name, parent))
    return bones


def write_bones(w: Writer, bones: list[Bone]) -> None:
    w.compact_int(len(bones))
    for b in bones:
        write_string(w, b.name)
        w.i16(b.parent)


def read_names(r: Reader, what: str) -> list[str]:
    n = read_int(r, f"{what} count")
    r.count(n, 2, what)
    return [read_string(r, f"{what} {i} name") for i in range(n)]


def write_names(w: Writer, names: list[str]) -> None:
    w.compact_int(len(names))
    for name in names:
        write_string(w, name)


def read_bind(r: Reader, n: int) -> np.ndarray:
    """(n, 10) float32: position xyz, rotation x y z w, scale xyz, relative to the parent."""
    return r.array("<f4", (n, 10), "bind pose")


def read_anim_bones(r: Reader, n_bones: int, what: str) -> np.ndarray:
    n = read_int(r, f"{what} bone count")
    r.count(n, 2, f"{what} bone index")
    start = r.pos
    idx = r.array("<i2", n, f"{what} bone indices")
    bad = np.nonzero((idx < 0) | (idx >= n_bones))[0]
    if len(bad):
        i = int(bad[0])
        raise r.error(
            f"{what}: bone index {int(idx[i])} out of range for {n_bones} bones", start + 2 * i
        )
    return idx


def write_anim_bones(w: Writer, idx: np.ndarray) -> None:
    w.compact_int(len(idx))
    w.array(idx, "<i2")


@dataclass
class Frames:
    """Per frame and bone: the change flags and the values in effect.

    Components a record does not store hold the previous frame's value (0 before
    the first stored one), so the arrays are dense and the flags say what the
    file stores.
    """

    flags: np.ndarray  # (F, B) uint8
    translation: np.ndarray  # (F, B, 3) float32 (MESH) or uint16 (ANIM)
    rotation: np.ndarray  # (F, B, 4) int16, x y z w
    scale: np.ndarray  # (F, B, 3) like translation

    @property
    def n_frames(self) -> int:
        return self.flags.shape[0]


def _component_sizes(value_size: int) -> np.ndarray:
    return np.array([value_size] * 3 + [8] + [value_size] * 3, np.int64)


def _record_layout(flags: np.ndarray, value_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Size of each record, and the offset of each component inside it."""
    sizes = _component_sizes(value_size)
    bits = ((flags[..., None].astype(np.int64) >> np.arange(7)) & 1) * sizes
    offsets = 1 + np.cumsum(bits, axis=-1) - bits
    return 1 + bits.sum(axis=-1), offsets


def _size_table(value_size: int) -> list[int]:
    sizes, _ = _record_layout(np.arange(256, dtype=np.uint8), value_size)
    return sizes.tolist()


def read_frames(r: Reader, n_bones: int, value_dtype: str, what: str) -> Frames:
    """A compact-int frame count, then ``frames x bones`` flag records."""
    n_frames = read_int(r, f"{what} frame count")
    if n_frames < 0:
        raise r.error(f"{what}: negative frame count {n_frames}")
    n_rec = n_frames * n_bones
    # a frame of no bones takes no bytes: bound the frame count by the bytes left anyway
    r.count(n_frames * max(n_bones, 1), 1, f"{what} frame record")
    vdt = np.dtype(value_dtype)
    table = _size_table(vdt.itemsize)
    data, pos, end = r.data, r.pos, r.end
    starts = [0] * n_rec
    for i in range(n_rec):
        if pos >= end:
            break
        starts[i] = pos
        pos += table[data[pos]]
    else:
        i = n_rec
    if pos > end or i < n_rec:
        last = starts[i - 1] if i else pos
        raise r.error(f"{what}: frame record {max(i - 1, 0)} of {n_rec} runs past the end", last)
    r.pos = pos
    st = np.array(starts, np.int64)
    buf = np.frombuffer(data, np.uint8)
    flags = buf[st] if n_rec else np.zeros(0, np.uint8)
    _, offsets = _record_layout(flags, vdt.itemsize)
    shape = (n_frames, n_bones)
    flags = flags.reshape(shape)
    offsets = offsets.reshape(shape + (7,))
    st = st.reshape(shape)
    translation = np.zeros(shape + (3,), vdt.newbyteorder("="))
    rotation = np.zeros(shape + (4,), np.int16)
    scale = np.zeros(shape + (3,), vdt.newbyteorder("="))
    frame_index = np.arange(n_frames)[:, None]
    for bit in COMPONENT_BITS:
        mask = (flags >> bit) & 1 == 1
        width = 8 if bit == ROTATION_BIT else vdt.itemsize
        dt = np.dtype("<i2") if bit == ROTATION_BIT else vdt
        at = (st + offsets[..., bit])[mask]
        lanes = width // dt.itemsize
        raw = buf[at[:, None] + np.arange(width)].view(dt).reshape(len(at), lanes)
        stored = np.zeros(shape + (lanes,), dt)
        stored[mask] = raw
        last = np.maximum.accumulate(np.where(mask, frame_index, -1), axis=0)
        held = np.take_along_axis(stored, np.maximum(last, 0)[..., None], axis=0)
        held[last < 0] = 0
        if bit == ROTATION_BIT:
            rotation[:] = held
        elif bit < ROTATION_BIT:
            translation[..., bit] = held[..., 0]
        else:
            scale[..., bit - 4] = held[..., 0]
    return Frames(flags, translation, rotation, scale)


def write_frames(w: Writer, frames: Frames, value_dtype: str) -> None:
    vdt = np.dtype(value_dtype)
    flags = np.ascontiguousarray(frames.flags, np.uint8)
    w.compact_int(flags.shape[0])
    sizes, offsets = _record_layout(flags.reshape(-1), vdt.itemsize)
    starts = np.cumsum(sizes) - sizes
    buf = np.zeros(int(sizes.sum()), np.uint8)
    flat = flags.reshape(-1)
    buf[starts] = flat
    values = {
        **{b: frames.translation.reshape(-1, 3)[:, b : b + 1] for b in range(3)},
        ROTATION_BIT: frames.rotation.reshape(-1, 4),
        **{b: frames.scale.reshape(-1, 3)[:, b - 4 : b - 3] for b in range(4, 7)},
    }
    for bit in COMPONENT_BITS:
        mask = (flat >> bit) & 1 == 1
        if not mask.any():
            continue
        dt = np.dtype("<i2") if bit == ROTATION_BIT else vdt
        raw = np.ascontiguousarray(values[bit][mask], dt).view(np.uint8)
        raw = raw.reshape(int(mask.sum()), -1)
        at = (starts + offsets[:, bit])[mask]
        buf[at[:, None] + np.arange(raw.shape[1])] = raw
    w.bytes(buf.tobytes())


def change_flags(
    translation: np.ndarray, rotation: np.ndarray, scale: np.ndarray, anim_flag: int
) -> np.ndarray:
    """Frame flags that store every component of ``anim_flag`` in frame 0 and, later,
    only the components whose stored value differs from the previous frame's."""
    f, b = translation.shape[:2]
    flags = np.zeros((f, b), np.uint8)
    flags[:1] = anim_flag & 0x7F
    if f < 2:
        return flags
    changed = [translation[1:, :, i] != translation[:-1, :, i] for i in range(3)]
    changed.append((rotation[1:] != rotation[:-1]).any(axis=-1))
    changed += [scale[1:, :, i] != scale[:-1, :, i] for i in range(3)]
    bits = np.zeros((f - 1, b), np.uint8)
    for bit, ch in enumerate(changed):
        if anim_flag >> bit & 1:
            bits |= ch.astype(np.uint8) << bit
    flags[1:] = bits
    return flags
