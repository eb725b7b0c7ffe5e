"""GTA IFP animation packages: ANPK (GTA III, Vice City) and ANP3 (San Andreas).

An IFP holds many animations; each animation holds one object per animated
bone, and each object a list of keyframes. Two layouts exist:

- **ANPK** is a tree of 4-character sections with a 32-bit size each:
  ``ANPK{INFO, (NAME, DGAN{INFO, CPAN{ANIM, KR00|KRT0|KRTS}...})...}``. Names
  are NUL-terminated and padded to 4 bytes (the declared size excludes the
  padding). ``ANIM`` has a 28-byte name, the key count, and either two sibling
  indices (GTA III, 48 bytes) or a bone ID (Vice City, 44 bytes). Keys are
  floats: rotation x y z w stored conjugated (the game inverts it), optional
  translation and scale, and the absolute time in seconds last.
- **ANP3** is a flat record stream: 24-byte names, per animation the object
  count, the byte size of all its keys and a compression flag; per object a
  frame type (3: rotation, 4: rotation and root translation), the key count
  and the bone ID. Compressed keys are int16: rotation / 4096, time / 60 s,
  translation / 1024. Uncompressed keys are floats (rotation, time, then the
  translation). Rotations are stored as they apply (not conjugated).

The reader keeps everything the writer needs to give back the same bytes: the
raw keys (as numpy structured arrays), fixed-width name fields with whatever
follows their NUL, padding bytes, sizes that disagree with the content, unknown
sections and trailing bytes (files in IMG archives are padded to 2048). An
edited animation is re-encoded with the file's own key layout and quantisation.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from ..codec import FormatError, Reader

# -- key layouts ---------------------------------------------------------------

ANPK_KEYS = {
    "KR00": np.dtype([("q", "<f4", 4), ("time", "<f4")]),
    "KRT0": np.dtype([("q", "<f4", 4), ("t", "<f4", 3), ("time", "<f4")]),
    "KRTS": np.dtype([("q", "<f4", 4), ("t", "<f4", 3), ("s", "<f4", 3), ("time", "<f4")]),
}
#: ANP3 keys by (frame type, compressed).
ANP3_KEYS = {
    (3, False): np.dtype([("q", "<f4", 4), ("time", "<f4")]),
    (4, False): np.dtype([("q", "<f4", 4), ("time", "<f4"), ("t", "<f4", 3)]),
    (3, True): np.dtype([("q", "<i2", 4), ("time", "<i2")]),
    (4, True): np.dtype([("q", "<i2", 4), ("time", "<i2"), ("t", "<i2", 3)]),
}
ROTATION_STEP = 4096.0
TIME_STEP = 60.0
TRANSLATION_STEP = 1024.0
ANP3_NAME = 24
ANIM_NAME = 28


def fixed_name(raw: bytes) -> str:
    """The text of a fixed-width or NUL-terminated name field."""
    return raw.split(b"\0", 1)[0].decode("latin-1")


def name_field(name: str, width: int, old: bytes = b"") -> bytes:
    """``name`` in a ``width``-byte field; ``old``'s bytes after the NUL are kept
    when the name is the same (files carry stale bytes there)."""
    if old and fixed_name(old) == name and len(old) == width:
        return old
    raw = name.encode("latin-1", "replace")
    if len(raw) >= width:
        raise FormatError(f"the name {name!r} does not fit {width - 1} characters")
    return raw + b"\0" * (width - len(raw))


def _pad4(n: int) -> int:
    return -n & 3


# -- the neutral view of one object's keys -------------------------------------


@dataclass
class Keys:
    """Decoded keys of one object: seconds, rotation (w x y z, as applied),
    translation and scale (None when the layout has none)."""

    times: np.ndarray
    rotation: np.ndarray
    translation: np.ndarray | None = None
    scale: np.ndarray | None = None


@dataclass
class IfpObject:
    """One animated bone of an animation."""

    name_raw: bytes
    frames: np.ndarray  # structured, the file's own key layout
    kind: str  # ANPK: KR00/KRT0/KRTS; ANP3: "3" or "4"
    bone_id: int | None = None
    compressed: bool = False
    #: ANPK: the ANIM payload after the key count (unknown, last frame, bone ID
    #: or two sibling indices), its padding, the key section's size delta and
    #: bytes after the keys, further sections of the CPAN, the CPAN size delta.
    anim_tail: bytes = b""
    anim_pad: bytes = b""
    keys_extra: bytes = b""
    keys_size_delta: int = 0
    extra_sections: bytes = b""
    size_delta: int = 0
    key_section: bool = True
    #: The key count as read (-1: a new object); the ANIM's last-frame index is
    #: kept as read while the count is.
    read_count: int = -1

    @property
    def name(self) -> str:
        return fixed_name(self.name_raw)

    def keys(self) -> Keys:
        with np.errstate(invalid="ignore"):  # a signalling NaN key turns quiet here
            return self._keys()

    def _keys(self) -> Keys:
        f = self.frames
        if self.compressed:
            q = f["q"].astype(np.float64) / ROTATION_STEP
            times = f["time"].astype(np.float64) / TIME_STEP
            t = f["t"].astype(np.float64) / TRANSLATION_STEP if "t" in f.dtype.names else None
            return Keys(times, q[:, [3, 0, 1, 2]], t)
        q = f["q"].astype(np.float64)[:, [3, 0, 1, 2]]
        if self.kind in ANPK_KEYS:  # stored conjugated
            q[:, 1:] *= -1.0
        t = f["t"].astype(np.float64) if "t" in f.dtype.names else None
        s = f["s"].astype(np.float64) if "s" in f.dtype.names else None
        return Keys(f["time"].astype(np.float64), q, t, s)

    def encode(self, keys: Keys) -> np.ndarray:
        """``keys`` in this object's own layout and quantisation."""
        n = len(keys.times)
        out = np.zeros(n, self.frames.dtype)
        q = np.asarray(keys.rotation, np.float64)[:, [1, 2, 3, 0]]
        names = self.frames.dtype.names
        if self.compressed:
            out["q"] = _int16(q * ROTATION_STEP)
            out["time"] = _int16(np.asarray(keys.times) * TIME_STEP)
            if "t" in names:
                out["t"] = _int16(_or_zero(keys.translation, n) * TRANSLATION_STEP)
            return out
        if self.kind in ANPK_KEYS:
            q[:, :3] *= -1.0
        out["q"] = q
        out["time"] = keys.times
        if "t" in names:
            out["t"] = _or_zero(keys.translation, n)
        if "s" in names:
            s = keys.scale if keys.scale is not None else np.ones((n, 3))
            out["s"] = s
        return out


def _or_zero(a: np.ndarray | None, n: int) -> np.ndarray:
    return np.zeros((n, 3)) if a is None else np.asarray(a, np.float64)


def _int16(x: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(x), -32768, 32767).astype(np.int16)


@dataclass
class IfpAnimation:
    name_raw: bytes
    objects: list[IfpObject] = field(default_factory=list)
    #: ANP3: the compression flag word, the declared key data size (None: the
    #: size of the keys). ANPK: NAME padding, DGAN size delta, the DGAN INFO
    #: payload after the object count and its padding, bytes after the objects.
    flags: int = 0
    data_size: int | None = None
    name_pad: bytes = b""
    size_delta: int = 0
    info_rest: bytes = b"\0\0\0\0"
    info_pad: bytes = b""
    tail: bytes = b""

    @property
    def name(self) -> str:
        return fixed_name(self.name_raw)

    @property
    def frame_count(self) -> int:
        return max((len(o.frames) for o in self.objects), default=0)

    @property
    def duration(self) -> float:
        ends = [float(o.keys().times[-1]) for o in self.objects if len(o.frames)]
        return max(ends, default=0.0)


@dataclass
class IfpFile:
    version: str  # "ANPK" or "ANP3"
    name_raw: bytes
    animations: list[IfpAnimation] = field(default_factory=list)
    size_delta: int = 0
    #: ANPK: the INFO section's padding and size delta; bytes in the package
    #: after the animations; bytes after the package (padding to 2048).
    info_pad: bytes = b""
    tail: bytes = b""
    trailing: bytes = b""

    @property
    def name(self) -> str:
        return fixed_name(self.name_raw)

    def find(self, name: str) -> IfpAnimation | None:
        low = name.lower()
        return next((a for a in self.animations if a.name.lower() == low), None)


# -- reading -------------------------------------------------------------------

_SECTION = struct.Struct("<4sI")


def _section(r: Reader, what: str, expect: bytes | None = None) -> tuple[bytes, int, int]:
    start = r.pos
    r.need(8, f"{what} section header")
    tag, size = _SECTION.unpack(r.bytes(8))
    if expect is not None and tag != expect:
        raise FormatError(f"{what}: expected section {expect.decode()!r}, found {tag!r}", start)
    if size > r.remaining:
        raise FormatError(
            f"{what}: section {tag!r} says {size} bytes, only {r.remaining} remain", start
        )
    return tag, size, start


def _padding(r: Reader, size: int, limit: int) -> bytes:
    """The bytes that round a section of ``size`` up to 4 (fewer at the very end)."""
    return r.bytes(min(_pad4(size), max(limit - r.pos, 0)))


def read(data: bytes) -> IfpFile:
    r = Reader(data)
    r.need(8, "IFP header")
    magic = r.data[:4]
    if magic == b"ANP3":
        return _read_anp3(r)
    if magic == b"ANPK":
        return _read_anpk(r)
    raise FormatError(f"not an IFP file: expected 'ANPK' or 'ANP3', found {magic!r}", 0)


def _read_anp3(r: Reader) -> IfpFile:
    r.bytes(4)
    size = r.u32()
    if size > r.remaining:
        raise r.error(f"ANP3 says {size} bytes, only {r.remaining} remain", 4)
    body = r.sub(size, "ANP3 package")
    name_raw = body.bytes(ANP3_NAME)
    count = body.count(body.i32(), 36, "animation")
    f = IfpFile("ANP3", name_raw)
    for _ in range(count):
        f.animations.append(_read_anp3_animation(body))
    f.tail = body.rest()
    f.trailing = r.rest()
    return f


def _read_anp3_animation(r: Reader) -> IfpAnimation:
    name_raw = r.bytes(ANP3_NAME)
    n = r.count(r.i32(), 36, "object")
    data_size, flags = r.i32(), r.i32()
    # The flag word says whether keys are compressed; the declared key size
    # settles it when a file's flag disagrees with its keys.
    start = r.pos
    first = bool(flags & 1)
    try:
        objects = _read_anp3_objects(r, n, first)
        ok = sum(o.frames.nbytes for o in objects) == data_size
    except FormatError:
        objects, ok = None, False
    if not ok:
        end = r.pos
        r.pos = start
        try:
            other = _read_anp3_objects(r, n, not first)
        except FormatError:
            other = None
        if other is not None and sum(o.frames.nbytes for o in other) == data_size:
            objects = other
        elif objects is None:
            r.pos = start
            objects = _read_anp3_objects(r, n, first)  # raises the first layout's error
        else:
            r.pos = end
    anim = IfpAnimation(name_raw, objects, flags=flags)
    natural = sum(o.frames.nbytes for o in objects)
    anim.data_size = None if data_size == natural else data_size
    return anim


def _read_anp3_objects(r: Reader, n: int, compressed: bool) -> list[IfpObject]:
    objects = []
    for _ in range(n):
        at = r.pos
        raw = r.bytes(ANP3_NAME)
        kind, frames, bone = r.i32(), r.i32(), r.i32()
        if kind not in (3, 4):
            raise FormatError(f"{fixed_name(raw)!r}: unknown ANP3 frame type {kind}", at)
        dt = ANP3_KEYS[(kind, compressed)]
        r.count(frames, dt.itemsize, "key")
        keys = np.frombuffer(r.bytes(frames * dt.itemsize), dt).copy()
        objects.append(IfpObject(raw, keys, str(kind), bone, compressed, read_count=frames))
    return objects


def _read_anpk(r: Reader) -> IfpFile:
    """The package is read inside its declared size: content running past it is
    refused (a size smaller than the content cannot be written back)."""
    tag, size, _ = _section(r, "package", b"ANPK")
    body = r.sub(size, "ANPK package")
    try:
        return _read_anpk_body(body, size, r)
    except FormatError as err:
        if body.end == r.end:
            raise
        raise FormatError(
            f"{err.message} (the ANPK header at offset 4 gives the package {size} bytes, "
            f"and {r.end - body.end} bytes follow it)",
            err.offset,
        ) from None


def _read_anpk_body(body: Reader, size: int, r: Reader) -> IfpFile:
    tag, info_size, at = _section(body, "package info", b"INFO")
    if info_size < 4:
        raise FormatError(f"package INFO of {info_size} bytes has no animation count", at)
    count = body.i32()
    name_raw = body.bytes(info_size - 4)
    f = IfpFile("ANPK", name_raw)
    f.info_pad = _padding(body, info_size, body.end)
    body.count(count, 24, "animation")
    for _ in range(count):
        f.animations.append(_read_anpk_animation(body, body.end))
    f.tail = body.rest()
    natural = sum(_anpk_animation_size(a) for a in f.animations)
    f.size_delta = size - (8 + info_size + len(f.info_pad) + natural + len(f.tail))
    f.trailing = r.rest()
    return f


def _read_anpk_animation(r: Reader, limit: int) -> IfpAnimation:
    _, size, _ = _section(r, "animation name", b"NAME")
    name_raw = r.bytes(size)
    anim = IfpAnimation(name_raw, name_pad=_padding(r, size, limit))
    _, dgan_size, _ = _section(r, f"animation {anim.name!r}", b"DGAN")
    body = r.sub(dgan_size, "DGAN")
    _, info_size, at = _section(body, f"animation {anim.name!r} info", b"INFO")
    if info_size < 4:
        raise FormatError(f"animation {anim.name!r}: INFO of {info_size} bytes", at)
    n = body.count(body.i32(), 24, "object")
    anim.info_rest = body.bytes(info_size - 4)
    anim.info_pad = _padding(body, info_size, body.end)
    for _ in range(n):
        anim.objects.append(_read_cpan(body, anim.name))
    anim.tail = body.rest()
    anim.size_delta = dgan_size - _dgan_natural(anim)
    return anim


def _read_cpan(r: Reader, anim: str) -> IfpObject:
    _, size, _ = _section(r, f"animation {anim!r} object", b"CPAN")
    body = r.sub(size, "CPAN")
    _, anim_size, at = _section(body, f"animation {anim!r} object", b"ANIM")
    if anim_size < ANIM_NAME + 4:
        raise FormatError(f"animation {anim!r}: ANIM of {anim_size} bytes is too short", at)
    name_raw = body.bytes(ANIM_NAME)
    frames = body.i32()
    tail = body.bytes(anim_size - ANIM_NAME - 4)
    pad = _padding(body, anim_size, body.end)
    bone = struct.unpack_from("<i", tail, 8)[0] if len(tail) == 12 else None
    obj = IfpObject(name_raw, np.zeros(0, ANPK_KEYS["KR00"]), "KR00", bone, False, tail, pad)
    obj.read_count = frames
    if frames < 0:
        raise FormatError(f"{obj.name!r}: negative key count {frames}", at)
    head = body.data[body.pos : body.pos + 4] if body.remaining >= 8 else b""
    obj.key_section = bool(frames) or head.decode("latin-1") in ANPK_KEYS
    if obj.key_section:
        start = body.pos
        tag, key_size, _ = _section(body, f"{obj.name!r} keys")
        kind = tag.decode("latin-1")
        if kind not in ANPK_KEYS:
            raise FormatError(f"{obj.name!r}: unknown key section {tag!r}", start)
        dt = ANPK_KEYS[kind]
        if frames * dt.itemsize > key_size:
            raise FormatError(
                f"{obj.name!r}: {frames} {kind} keys need {frames * dt.itemsize} bytes, "
                f"the section has {key_size}",
                start,
            )
        obj.kind = kind
        obj.frames = np.frombuffer(body.bytes(frames * dt.itemsize), dt).copy()
        obj.keys_extra = body.bytes(key_size - frames * dt.itemsize)
    obj.extra_sections = body.rest()
    obj.size_delta = size - _cpan_natural(obj)
    return obj


# -- writing -------------------------------------------------------------------


def _has_keys(o: IfpObject) -> bool:
    return o.key_section or len(o.frames) > 0


def _cpan_natural(o: IfpObject) -> int:
    n = 8 + ANIM_NAME + 4 + len(o.anim_tail) + len(o.anim_pad)
    if _has_keys(o):
        n += 8 + o.frames.nbytes + len(o.keys_extra)
    return n + len(o.extra_sections)


def _dgan_natural(a: IfpAnimation) -> int:
    n = 8 + 4 + len(a.info_rest) + len(a.info_pad)
    return n + sum(8 + _cpan_natural(o) + o.size_delta for o in a.objects) + len(a.tail)


def _anpk_animation_size(a: IfpAnimation) -> int:
    return 8 + len(a.name_raw) + len(a.name_pad) + 8 + _dgan_natural(a) + a.size_delta


def _anim_tail(o: IfpObject) -> bytes:
    """The ANIM payload after the key count; the last-frame index follows the keys."""
    tail = bytearray(o.anim_tail)
    if len(tail) >= 8 and len(o.frames) != o.read_count:
        struct.pack_into("<i", tail, 4, max(len(o.frames) - 1, 0))
    if len(tail) == 12 and o.bone_id is not None:
        struct.pack_into("<i", tail, 8, o.bone_id)
    return bytes(tail)


def write(f: IfpFile) -> bytes:
    out = bytearray()
    if f.version == "ANP3":
        body = bytearray(f.name_raw)
        body += struct.pack("<i", len(f.animations))
        for a in f.animations:
            body += _anp3_animation(a)
        body += f.tail
        out += b"ANP3" + struct.pack("<I", len(body)) + body
    elif f.version == "ANPK":
        body = bytearray()
        body += b"INFO" + struct.pack("<Ii", 4 + len(f.name_raw), len(f.animations))
        body += f.name_raw + f.info_pad
        for a in f.animations:
            body += _anpk_animation(a)
        body += f.tail
        out += b"ANPK" + _size(len(body) + f.size_delta, "package") + body
    else:
        raise FormatError(f"unknown IFP version {f.version!r}")
    out += f.trailing
    return bytes(out)


def _size(n: int, what: str) -> bytes:
    """A section size field; a size delta that makes it negative or too large is refused."""
    if not 0 <= n <= 0xFFFFFFFF:
        raise FormatError(f"the {what} section would declare {n} bytes")
    return struct.pack("<I", n)


def _anp3_animation(a: IfpAnimation) -> bytes:
    natural = sum(o.frames.nbytes for o in a.objects)
    size = natural if a.data_size is None else a.data_size
    out = bytearray(a.name_raw)
    out += struct.pack("<iii", len(a.objects), size, a.flags)
    for o in a.objects:
        if o.kind not in ("3", "4"):
            raise FormatError(f"{o.name!r}: an ANPK key layout in an ANP3 file")
        bone = 0 if o.bone_id is None else o.bone_id
        out += o.name_raw + struct.pack("<iii", int(o.kind), len(o.frames), bone)
        out += o.frames.tobytes()
    return bytes(out)


def _anpk_animation(a: IfpAnimation) -> bytes:
    out = bytearray(b"NAME" + struct.pack("<I", len(a.name_raw)) + a.name_raw + a.name_pad)
    body = bytearray(b"INFO" + struct.pack("<Ii", 4 + len(a.info_rest), len(a.objects)))
    body += a.info_rest + a.info_pad
    for o in a.objects:
        if o.kind not in ANPK_KEYS:
            raise FormatError(f"{o.name!r}: an ANP3 key layout in an ANPK file")
        cpan = bytearray(b"ANIM" + struct.pack("<I", ANIM_NAME + 4 + len(o.anim_tail)))
        cpan += o.name_raw + struct.pack("<i", len(o.frames)) + _anim_tail(o) + o.anim_pad
        if _has_keys(o):
            cpan += o.kind.encode() + struct.pack(
                "<I", o.frames.nbytes + len(o.keys_extra) + o.keys_size_delta
            )
            cpan += o.frames.tobytes() + o.keys_extra
        cpan += o.extra_sections
        body += b"CPAN" + _size(len(cpan) + o.size_delta, f"{o.name!r} CPAN") + cpan
    body += a.tail
    out += b"DGAN" + _size(len(body) + a.size_delta, f"animation {a.name!r} DGAN") + body
    return bytes(out)


# -- building new animations ---------------------------------------------------


def anpk_name(name: str) -> tuple[bytes, bytes]:
    """A NAME payload (with its NUL) and its padding."""
    raw = name.encode("latin-1", "replace") + b"\0"
    return raw, b"\0" * _pad4(len(raw))


def new_object(
    version: str, name: str, keys: Keys, bone_id: int | None, compressed: bool, root: bool
) -> IfpObject:
    """An object for ``keys`` in a file of ``version`` (translation only on a root
    or where ``keys`` has one)."""
    has_t = keys.translation is not None or root
    if version == "ANP3":
        kind = "4" if has_t else "3"
        dt = ANP3_KEYS[(int(kind), compressed)]
        blank = np.zeros(0, dt)
        obj = IfpObject(name_field(name, ANP3_NAME), blank, kind, bone_id or 0, compressed)
    else:
        kind = "KRTS" if keys.scale is not None else ("KRT0" if has_t else "KR00")
        tail = struct.pack("<iii", 0, 0, bone_id) if bone_id is not None else b"\0" * 16
        blank = np.zeros(0, ANPK_KEYS[kind])
        obj = IfpObject(name_field(name, ANIM_NAME), blank, kind, bone_id, False, tail)
    obj.frames = obj.encode(keys)
    return obj


def new_animation(f: IfpFile, name: str, objects: list[IfpObject]) -> IfpAnimation:
    """An animation record in ``f``'s layout."""
    if f.version == "ANP3":
        compressed = any(o.compressed for o in objects) if objects else True
        return IfpAnimation(name_field(name, ANP3_NAME), objects, flags=int(compressed))
    raw, pad = anpk_name(name)
    return IfpAnimation(raw, objects, name_pad=pad)


def new_file(version: str, name: str) -> IfpFile:
    if version == "ANP3":
        return IfpFile("ANP3", name_field(name, ANP3_NAME))
    raw, pad = anpk_name(name)
    return IfpFile("ANPK", raw, info_pad=pad)
