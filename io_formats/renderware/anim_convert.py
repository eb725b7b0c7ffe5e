"""IFP and .anm animations <-> the neutral animation, and bones matched to a rig.

GTA matches an IFP object to a ped's frame by HAnim bone ID, and by name
(without case) where an object has no ID; so does :func:`match_bones`. The
keys are the frames' local transforms, which is what the neutral animation
holds. On the way back (:func:`to_ifp_animation`) the file's own layout and
quantisation are used. The values of every unedited channel arrive exact (the
action's exact keys, ``operators/blender/exact_keys.py``), so they encode to the
file's bytes; the imported animation kept with the action (its source) gives
the layout, the objects no bone matched and the NaN/Inf keys, and within an
edited channel a key whose values equal the original's within the format's
precision keeps its original bytes.
"""

from __future__ import annotations

import base64
import json

import numpy as np

from ..codec import FormatError
from ..scene import Animation, BoneTrack
from . import anm, ifp

#: Per format: tolerances (seconds, rotation, translation) under which a key is
#: "unchanged" and keeps its original bytes.
FLOAT_TOL = (1e-4, 2e-5, 1e-4)
COMPRESSED_TOL = (
    0.5 / ifp.TIME_STEP,
    0.5 / ifp.ROTATION_STEP,
    0.5 / ifp.TRANSLATION_STEP,
)

Bone = tuple[str, int | None]  # (name, HAnim bone ID)


def match_bones(objects: list[Bone], bones: list[Bone]) -> tuple[list[int | None], list[str]]:
    """For each object the index of its bone (ID first, then name without case),
    and the names of the objects that match none."""
    by_id = {bid: i for i, (_, bid) in enumerate(bones) if bid is not None}
    by_name = {name.lower(): i for i, (name, _) in enumerate(bones)}
    out: list[int | None] = []
    missing = []
    for name, bid in objects:
        hit = by_id.get(bid) if bid is not None else None
        if hit is None:
            hit = by_name.get(name.strip().lower())
        out.append(hit)
        if hit is None:
            missing.append(name)
    return out, missing


def _objects(anim: ifp.IfpAnimation) -> list[Bone]:
    return [(o.name, o.bone_id) for o in anim.objects]


def ifp_to_animation(anim: ifp.IfpAnimation, bones: list[Bone]) -> tuple[Animation, list[str]]:
    """The neutral animation of one IFP animation on ``bones``, and the objects
    no bone matched."""
    hits, missing = match_bones(_objects(anim), bones)
    tracks = []
    seen = set()
    for obj, hit in zip(anim.objects, hits, strict=True):
        if hit is None or hit in seen or not len(obj.frames):
            continue
        seen.add(hit)
        k = obj.keys()
        tracks.append(BoneTrack(bones[hit][0], k.times, k.translation, k.rotation, k.scale))
    length = max((float(t.times[-1]) for t in tracks), default=0.0)
    return Animation(anim.name, length, tracks), missing


def pack_source(f: ifp.IfpFile, anim: ifp.IfpAnimation, whole: bool = True) -> str:
    """One animation of ``f`` as a one-animation package (base64), kept with
    the action so an export can give back its bytes. Without ``whole`` the
    package's bytes after its animations and after the package are left out
    (they are the file's, kept once: :func:`pack_ends`)."""
    tail, trailing = (f.tail, f.trailing) if whole else (b"", b"")
    shell = ifp.IfpFile(f.version, f.name_raw, [anim], f.size_delta, f.info_pad, tail, trailing)
    return base64.b64encode(ifp.write(shell)).decode("ascii")


def pack_ends(f: ifp.IfpFile) -> str:
    """The bytes of ``f`` after its animations and after the package (base64 in
    JSON), kept once per file rather than with every animation."""
    return json.dumps(
        {
            "tail": base64.b64encode(f.tail).decode("ascii"),
            "trailing": base64.b64encode(f.trailing).decode("ascii"),
        }
    )


def unpack_ends(text: str, into: ifp.IfpFile) -> None:
    """Put the ends :func:`pack_ends` kept back on ``into``."""
    try:
        ends = json.loads(text)
        into.tail = base64.b64decode(ends["tail"].encode("ascii"), validate=True)
        into.trailing = base64.b64decode(ends["trailing"].encode("ascii"), validate=True)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise FormatError(f"the IFP data kept with the armature is damaged: {exc}") from None


def unpack_source(text: str) -> ifp.IfpFile:
    try:
        return ifp.read(base64.b64decode(text.encode("ascii"), validate=True))
    except (ValueError, FormatError) as exc:
        raise FormatError(f"the IFP data kept with the action is damaged: {exc}") from None


def _keep_unchanged(obj: ifp.IfpObject, new: np.ndarray, keys: ifp.Keys) -> np.ndarray:
    """``new`` with every key that equals one of ``obj``'s within the format's
    precision replaced by that key's original bytes."""
    held = np.flatnonzero(_finite_keys(obj))  # NaN/Inf keys never reached Blender
    if not len(held) or not len(new):
        return new
    full = obj.keys()
    old = ifp.Keys(
        *(
            None if v is None else v[held]
            for v in (full.times, full.rotation, full.translation, full.scale)
        )
    )
    tt, tq, tp = COMPRESSED_TOL if obj.compressed else FLOAT_TOL
    pos = np.clip(np.searchsorted(old.times, keys.times), 0, len(old.times) - 1)
    lower = np.clip(pos - 1, 0, len(old.times) - 1)
    pick = np.where(
        np.abs(old.times[lower] - keys.times) < np.abs(old.times[pos] - keys.times), lower, pos
    )
    same = np.abs(old.times[pick] - keys.times) <= tt
    q0, q1 = old.rotation[pick], np.asarray(keys.rotation, np.float64)
    dq = np.minimum(np.abs(q0 - q1).max(1), np.abs(q0 + q1).max(1))
    same &= dq <= tq
    if old.translation is not None and keys.translation is not None:
        same &= np.abs(old.translation[pick] - keys.translation).max(1) <= tp * np.maximum(
            1.0, np.abs(old.translation[pick]).max(1)
        )
    if old.scale is not None and keys.scale is not None:
        same &= np.abs(old.scale[pick] - keys.scale).max(1) <= tp
    out = new.copy()
    out[same] = obj.frames[held[pick[same]]]
    return out


def _finite_keys(obj: ifp.IfpObject) -> np.ndarray:
    """Which of ``obj``'s keys Blender holds: those whose time and values are all
    finite (the import leaves the others out and keeps them with the action's
    source, as ``operators.blender.guard.guard_track`` does)."""
    if obj.compressed or not len(obj.frames):
        return np.ones(len(obj.frames), bool)
    k = obj.keys()
    good = np.isfinite(k.times)
    for v in (k.translation, k.rotation, k.scale):
        if v is not None:
            good &= np.isfinite(v).all(1)
    return good


def _with_non_finite(obj: ifp.IfpObject, frames: np.ndarray) -> np.ndarray:
    """``frames`` (the keys Blender held) with ``obj``'s NaN/Inf keys back at their
    places, byte for byte, while the key count is the one imported; a track with
    keys added or removed is written as Blender has it."""
    good = _finite_keys(obj)
    if good.all() or len(frames) != int(good.sum()):
        return frames
    out = obj.frames.copy()
    out[good] = frames
    return out


def to_ifp_animation(
    anim: Animation,
    bones: list[Bone],
    version: str,
    compressed: bool,
    source: ifp.IfpAnimation | None = None,
    roots: set[str] | None = None,
) -> ifp.IfpAnimation:
    """An IFP animation of ``anim``'s tracks. With ``source`` (the animation it was
    imported from) its objects, order, layout and unchanged keys are kept;
    bones it did not animate are added after them. ``roots`` name bones that get
    translation keys in a new object."""
    tracks = {t.bone: t for t in anim.tracks}
    used: set[str] = set()
    objects: list[ifp.IfpObject] = []
    if source is not None:
        hits, _missing = match_bones(_objects(source), bones)
        for obj, hit in zip(source.objects, hits, strict=True):
            track = tracks.get(bones[hit][0]) if hit is not None else None
            if track is None or bones[hit][0] in used:
                objects.append(obj)  # not in the action: kept as it was
                continue
            used.add(track.bone)
            has_t = "t" in obj.frames.dtype.names
            keys = ifp.Keys(
                np.asarray(track.times, np.float64),
                _rotation(track),
                _translation(track, obj) if has_t else None,
                track.scale if "s" in obj.frames.dtype.names else None,
            )
            new = obj.encode(keys)
            frames = _with_non_finite(obj, _keep_unchanged(obj, new, keys))
            objects.append(_with_frames(obj, frames))
    ids = dict(bones)
    for bone, track in tracks.items():
        if bone in used:
            continue
        keys = ifp.Keys(
            np.asarray(track.times, np.float64), _rotation(track), track.translation, track.scale
        )
        root = roots is not None and bone in roots
        objects.append(ifp.new_object(version, bone, keys, ids.get(bone), compressed, root))
    if source is not None:
        out = ifp.IfpAnimation(**{**source.__dict__, "objects": objects})
        if out.name != anim.name:
            fresh = ifp.new_animation(ifp.new_file(version, ""), anim.name, objects)
            out.name_raw, out.name_pad = fresh.name_raw, fresh.name_pad
        return out
    return ifp.new_animation(ifp.new_file(version, ""), anim.name, objects)


def _rotation(track: BoneTrack) -> np.ndarray:
    if track.rotation is None:
        return np.tile([1.0, 0.0, 0.0, 0.0], (len(track.times), 1))
    return np.asarray(track.rotation, np.float64)


def _translation(track: BoneTrack, obj: ifp.IfpObject) -> np.ndarray:
    if track.translation is not None:
        return np.asarray(track.translation, np.float64)
    old = obj.keys()
    return np.repeat(old.translation[:1], len(track.times), 0)


def _with_frames(obj: ifp.IfpObject, frames: np.ndarray) -> ifp.IfpObject:
    return ifp.IfpObject(**{**obj.__dict__, "frames": frames})


# -- .anm ------------------------------------------------------------------------


def anm_to_animation(f: anm.AnmFile, bones: list[str], name: str) -> Animation:
    """The neutral animation of an .anm whose nodes are ``bones`` (hierarchy order)."""
    if f.keys is None:
        raise FormatError(
            f"interpolator type {f.type_id} (compressed keys) is not supported: "
            "only standard HAnim keys are read, as librw reads them"
        )
    nodes = f.node_count()
    if nodes != len(bones):
        raise FormatError(
            f"the animation has keys for {nodes} nodes, the armature {len(bones)} HAnim bones"
        )
    tracks = [
        BoneTrack(bone, times, t, q)
        for bone, (times, q, t) in zip(bones, f.tracks(nodes), strict=True)
    ]
    return Animation(name, float(f.duration), tracks, {"rw_anm_flags": int(f.flags)})


def animation_to_anm(anim: Animation, bones: list[str], rest: dict, stamp: int) -> anm.AnmFile:
    """Standard keys for every bone in ``bones`` (hierarchy order); a bone the
    animation does not key holds its ``rest`` (translation, rotation) at the
    start and the end."""
    by_bone = {t.bone: t for t in anim.tracks}
    end = max(float(anim.length), 1e-3)
    tracks = []
    for bone in bones:
        t = by_bone.get(bone)
        rt, rq = rest[bone]
        if t is None or len(t.times) < 2:
            times = np.array([0.0, end])
            tracks.append((times, np.tile(rq, (2, 1)), np.tile(rt, (2, 1))))
            continue
        k = len(t.times)
        q = t.rotation if t.rotation is not None else np.tile(rq, (k, 1))
        tr = t.translation if t.translation is not None else np.tile(rt, (k, 1))
        tracks.append((np.asarray(t.times, np.float64), np.asarray(q), np.asarray(tr)))
    flags = int(anim.extras.get("rw_anm_flags", 0))
    out = anm.from_tracks(tracks, stamp, flags)
    out.duration = float(max(anim.length, out.duration))
    return out
