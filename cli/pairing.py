"""Which model each animation of a library goes with, by the bones its tracks name.

A library run (``roundtrip``/``convert`` over folders, without ``--model``)
needs a skeleton for every animation. An animation goes with the model in its
own folder (of its format family: a ``.ani`` with a ``.mdl``, a ``.ifp`` with a
``.dff``) whose bones include every bone its tracks name. When several models
do (characters sharing one rig), the one whose file name starts the
animation's file name wins (``Ninja.mdl`` for ``Ninja_Walk.ani``); when that
does not decide either, the animation is left unpaired and the reason says
which models tie. Files that name no bones (a BonesPro animation) pair by
bone count. Names are read with the codecs; nothing here imports bpy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..io_formats import registry
from . import members


@dataclass(frozen=True)
class Skeleton:
    """The bones a file names (case-folded; empty when it names none) and how many."""

    names: frozenset[str]
    count: int


@dataclass
class Pairing:
    """The outcome: ``model`` by animation path, ``unpaired`` reasons by path (an
    animation no model fits, a model no animation fits), and how each pair was
    decided (``"bone names"``, ``"bone names and file name"``, ``"bone count"``)."""

    model: dict[str, str]
    how: dict[str, str]
    unpaired: dict[str, str]

    def to_json(self) -> dict:
        pairs: dict[str, list[str]] = {}
        for anim, model in self.model.items():
            pairs.setdefault(model, []).append(anim)
        return {
            "pairs": [
                {"model": m, "animations": a, "by": sorted({self.how[x] for x in a})}
                for m, a in sorted(pairs.items())
            ],
            "unpaired": [{"item": k, "reason": v} for k, v in sorted(self.unpaired.items())],
        }

    def lines(self) -> list[str]:
        """The pairs and the files left unpaired, one line each, for the run's start."""
        out = [
            f"pair: {row['model']} <- {', '.join(row['animations'])} (by {', '.join(row['by'])})"
            for row in self.to_json()["pairs"]
        ]
        out += [f"unpaired: {k}: {v}" for k, v in sorted(self.unpaired.items())]
        return out


def _names(values) -> frozenset[str]:
    return frozenset(str(v).casefold() for v in values if str(v))


def _urho3d(obj, key: str) -> Skeleton:
    names = [b.name for b in obj.bones] if key == "urho3d.mdl" else [t.name for t in obj.tracks]
    return Skeleton(_names(names), len(names))


def _unigine(obj, key: str) -> Skeleton:
    return Skeleton(_names(b.name for b in obj.bones), len(obj.bones))


def _renderware(obj, key: str) -> Skeleton:
    if key == "renderware.dff":
        frames = [c.frame_list for c in obj.clumps() if hasattr(c, "frame_list")]
        names = [fl.name(i) for fl in frames for i in range(len(fl))]
        return Skeleton(_names(names), len(names))
    if key == "renderware.ifp":
        names = {o.name for a in obj.animations for o in a.objects}
        return Skeleton(_names(names), len(names))
    return Skeleton(frozenset(), obj.node_count())  # .anm: nodes by index only


def _bonespro(obj, key: str) -> Skeleton:
    if key == "bonespro.structure":
        return Skeleton(_names(obj.names), len(obj.names))
    return Skeleton(frozenset(), obj.bone_count)


READERS = {
    "urho3d": _urho3d,
    "unigine": _unigine,
    "renderware": _renderware,
    "bonespro": _bonespro,
}


def family(key: str) -> str:
    """The format family of a registry key: models pair with animations of their own."""
    return key.split(".", 1)[0]


def skeleton(path: str) -> tuple[str, Skeleton]:
    """(format key, skeleton) of a model or animation file, read with its codec;
    FormatError or UsageError when it cannot be read."""
    data = members.read_input(path)
    fmt = registry.format_of(members.file_name(path), data[: registry.SNIFF_BYTES])
    reader = READERS.get(family(fmt.key))
    if reader is None:
        return fmt.key, Skeleton(frozenset(), 0)
    return fmt.key, reader(fmt.read(data), fmt.key)


def folder_of(path: str) -> str:
    """The folder a file is in; for a file in a package, the package and the member's folder."""
    container, member = members.split_member(path)
    if member is not None:
        return f"{container}:{os.path.dirname(member.replace(chr(92), '/'))}"
    return os.path.dirname(os.path.abspath(path))


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(members.file_name(path)))[0].casefold()


def choose(
    anim: str, bones: Skeleton, models: list[tuple[str, Skeleton]]
) -> tuple[str | None, str]:
    """(the model ``anim`` goes with, how) or (None, why not), among ``models`` (its
    folder's models of its family)."""
    name = os.path.basename(members.file_name(anim))
    if not models:
        return None, f"no model of its format in its folder for {name}"
    if bones.names:
        fits = [(m, s) for m, s in models if bones.names <= s.names]
        how = "bone names"
        if not fits:
            best, best_s = max(models, key=lambda ms: len(bones.names & ms[1].names))
            found = len(bones.names & best_s.names)
            if not found:
                listed = ", ".join(os.path.basename(members.file_name(m)) for m, _s in models)
                return None, (
                    f"none of its {len(bones.names)} tracks names a bone of a model in its "
                    f"folder ({listed}); name one with --model"
                )
            return None, (
                f"its {len(bones.names)} tracks match no model's bones in its folder "
                f"(closest: {os.path.basename(members.file_name(best))}, "
                f"{found} of {len(bones.names)} found); name one with --model"
            )
    else:
        fits = [(m, s) for m, s in models if s.count == bones.count and bones.count]
        how = "bone count"
        if not fits:
            return None, (
                f"it names no bones and no model in its folder has its {bones.count} bones; "
                "name one with --model"
            )
    if len(fits) > 1:
        stem = _stem(anim)
        by_name = [(m, s) for m, s in fits if stem.startswith(_stem(m))]
        longest = max((len(_stem(m)) for m, _s in by_name), default=-1)
        by_name = [(m, s) for m, s in by_name if len(_stem(m)) == longest]
        if len(by_name) != 1:
            tied = ", ".join(os.path.basename(members.file_name(m)) for m, _s in fits)
            return None, f"its {how} fit {tied} equally; name one with --model"
        fits, how = by_name, f"{how} and file name"
    return fits[0][0], how


def pair(paths: list[str]) -> Pairing:
    """Pair every animation among ``paths`` with a model among them (see the module)."""
    read: dict[str, tuple[str, Skeleton]] = {}
    unpaired: dict[str, str] = {}
    for path in paths:
        try:
            read[path] = skeleton(path)
        except Exception as exc:  # noqa: BLE001 - any unreadable file: the run says why
            unpaired[path] = f"its bones could not be read: {exc}"
    kinds = {key: registry.by_key(key).kind for key, _s in read.values()}
    models: dict[tuple[str, str], list[tuple[str, Skeleton]]] = {}
    for path, (key, skel) in read.items():
        if kinds[key] == "model":
            models.setdefault((folder_of(path), family(key)), []).append((path, skel))
    result = Pairing({}, {}, unpaired)
    for path, (key, skel) in read.items():
        if kinds[key] != "animation":
            continue
        found, how = choose(path, skel, models.get((folder_of(path), family(key)), []))
        if found is None:
            unpaired[path] = how
        else:
            result.model[path] = found
            result.how[path] = how
    used = set(result.model.values())
    for group in models.values():
        for path, skel in group:
            if path not in used and skel.count:
                unpaired[path] = "no animation in its folder fits its bones"
    return result
