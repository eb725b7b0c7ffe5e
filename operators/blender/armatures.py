"""The one armature chooser: which armature an animation goes onto, an export
writes, or meshes are deformed by.

:func:`choose_armature` applies the rules in a fixed order, each only when the
caller asks for it:

1. the caller's own armature (``given``);
2. the active armature (``active``; with ``active_mesh`` also the armature of
   the active mesh), inside ``pool`` when a pool is given;
3. a rule over the candidates (``pool``, default the scene's armatures):
   :class:`Rank` (most shared bone names, :func:`by_bone_names`, or any score)
   or :class:`Count` (the only one with a bone count, BonesPro's and
   RenderWare ANM's rule);
4. else the pool's only armature; with ``where`` several or none is refused in
   a sentence naming it (an animation export's scope).

It never raises: a :class:`Choice` without an armature says why, and
:meth:`Choice.required` turns that into a FormatError. :func:`mesh_armature` and
:func:`one_armature` find the armature of meshes (modifier, else parent);
:func:`animation_fit` is the rule every animation import follows once its
armature is chosen, :func:`fit_armature` both steps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import bpy

from ...io_formats.codec import FormatError
from ...io_formats.codec.errors import counted
from .build import held_bone_names


class Choice(NamedTuple):
    """The armature chosen (None: none fits) and how, or why none was."""

    armature: bpy.types.Object | None
    how: str

    def required(self, path: str | None = None) -> bpy.types.Object:
        """The armature; FormatError with the reason (naming ``path``) when there is none."""
        if self.armature is None:
            raise FormatError(self.how, None, path)
        return self.armature


@dataclass(frozen=True)
class Rank:
    """The candidate ``score`` rates highest (the first on a tie; 0 never wins).
    ``how(score)`` says how it was chosen; ``none(candidates)`` why none was
    (None: no armature and no reason, the caller goes on without one)."""

    score: Callable[[bpy.types.Object], int]
    how: Callable[[int], str]
    none: Callable[[int], str] | None = None


@dataclass(frozen=True)
class Count:
    """The only candidate with ``bones`` bones, those ``prefer`` accepts first.
    The sentences take ``{bones}`` (the counted bones: "12 bones") and ``{count}``
    (how many have that many)."""

    bones: int
    prefer: Callable[[bpy.types.Object], bool] | None = None
    how: str = "the only armature with {bones}"
    several: str = "select the armature to animate ({count} armatures have {bones})"
    none: str = "no armature has the animation's {bones}"


def iter_armatures(context) -> Iterator[bpy.types.Object]:
    """The scene's armatures."""
    for obj in context.scene.objects:
        if obj.type == "ARMATURE":
            yield obj


def by_bone_names(
    names: Sequence[str],
    how: str = "the armature whose bone names match ({score} of {wanted})",
    refuse: bool = True,
) -> Rank:
    """:class:`Rank` by how many of ``names`` are bones of a candidate. ``how``
    takes ``{score}`` and ``{wanted}``; with ``refuse`` none fitting is refused
    as an animation import refuses it, else the caller goes on without one."""
    wanted = set(names)

    def _refusal(count: int) -> str:
        if count == 0:
            return "no armature in the scene to put the animation on: nothing imported"
        return (
            f"0 of {len(wanted)} animated bones match a bone of any of the scene's "
            f"{count} armatures: nothing imported"
        )

    return Rank(
        lambda arm: len(wanted & _bone_names(arm)),
        lambda score: how.format(score=score, wanted=len(wanted)),
        _refusal if refuse else None,
    )


def _bone_names(armature) -> set[str]:
    """The names animation tracks match: Blender's, and the file's whole names
    of bones Blender holds cut or renamed (``build.held_bone_names``)."""
    return {b.name for b in armature.data.bones} | set(held_bone_names(armature))


def _only(pool: list, where: str | None, use_active: bool) -> Choice:
    if len(pool) == 1:
        return Choice(pool[0], "the only armature")
    if where is None:
        return Choice(None, "")
    if not pool:
        return Choice(None, f"{where} has no armature whose actions to export")
    names = sorted(o.name for o in pool)
    shown = ", ".join(names[:3]) + (" ..." if len(names) > 3 else "")
    todo = "make the one whose actions to export active" if use_active else "an export takes one"
    return Choice(None, f"{where} has {len(pool)} armatures ({shown}): {todo}")


def _ranked(pool: list, rank: Rank) -> Choice:
    best, score = None, 0
    for arm in pool:
        hits = rank.score(arm)
        if hits > score:
            best, score = arm, hits
    if best is None:
        return Choice(None, rank.none(len(pool)) if rank.none is not None else "")
    return Choice(best, rank.how(score))


def _counted(pool: list, count: Count) -> Choice:
    fits = [o for o in pool if len(o.data.bones) == count.bones]
    pick = [o for o in fits if count.prefer(o)] if count.prefer is not None else []
    pick = pick or fits
    if len(pick) == 1:
        return Choice(pick[0], count.how.format(bones=counted(count.bones, "bone"), count=1))
    sentence = count.several if pick else count.none
    return Choice(None, sentence.format(bones=counted(count.bones, "bone"), count=len(pick)))


def choose_armature(
    context,
    *,
    given: bpy.types.Object | None = None,
    active: bool = True,
    active_mesh: bool = False,
    pool: Sequence[bpy.types.Object] | None = None,
    rule: Rank | Count | None = None,
    where: str | None = None,
) -> Choice:
    """The armature by the rules of this module's docstring, in their order."""
    if given is not None:
        return Choice(given, "the given armature")
    candidates = list(iter_armatures(context)) if pool is None else list(pool)
    obj = context.view_layer.objects.active
    if active and obj is not None:
        if obj.type == "ARMATURE" and (pool is None or obj in candidates):
            return Choice(obj, "the active armature")
        if active_mesh and obj.type == "MESH" and mesh_armature(obj) is not None:
            return Choice(mesh_armature(obj), "the active mesh's armature")
    if isinstance(rule, Rank):
        return _ranked(candidates, rule)
    if isinstance(rule, Count):
        return _counted(candidates, rule)
    return _only(candidates, where, active)


def mesh_armature(obj: bpy.types.Object) -> bpy.types.Object | None:
    """The armature deforming ``obj``: its Armature modifier's, else its armature parent."""
    for mod in obj.modifiers:
        if mod.type == "ARMATURE" and mod.object is not None:
            return mod.object
    if obj.parent is not None and obj.parent.type == "ARMATURE":
        return obj.parent
    return None


def one_armature(objects: list, what: str) -> bpy.types.Object | None:
    """The armature that deforms the meshes ``objects`` (None when none does). Meshes
    of several armatures are refused: ``what`` (for example "an Urho3D model") holds
    one skeleton, and the other characters' vertices would lose their weights."""
    found: dict[str, tuple[bpy.types.Object, list[str]]] = {}
    for obj in objects:
        arm = mesh_armature(obj)
        if arm is not None:
            found.setdefault(arm.name, (arm, []))[1].append(obj.name)
    if len(found) > 1:
        parts = [
            f"{name!r} ({counted(len(arm.data.bones), 'bone')}: {', '.join(sorted(meshes)[:3])}"
            f"{' ...' if len(meshes) > 3 else ''})"
            for name, (arm, meshes) in sorted(found.items())
        ]
        raise FormatError(
            f"the meshes to export are deformed by {len(found)} armatures, "
            f"{'; '.join(parts)}; {what} holds one skeleton: export each character on "
            "its own (select its meshes and use Selected Objects)"
        )
    return next(iter(found.values()))[0] if found else None


#: How many missing bone names a partial-fit warning lists.
MISSING_SHOWN = 5


def animation_fit(path: str, armature, bone_names: Sequence[str]) -> list[str]:
    """The rule every animation import follows (every format, package and batch):
    an animation none of whose animated bones is a bone of ``armature`` is refused
    (FormatError naming the file, the armature and the counts); a partial match is
    applied with a warning that counts and names the first missing bones.
    Returns the warnings. An animation without bone tracks fits anything."""
    wanted = list(dict.fromkeys(bone_names))
    if not wanted:
        return []
    have = _bone_names(armature)
    missing = [n for n in wanted if n not in have]
    hits = len(wanted) - len(missing)
    if hits == 0:
        raise FormatError(
            f"0 of {len(wanted)} animated bones match a bone of armature "
            f"{armature.name!r} ({counted(len(have), 'bone')}): the animation is not for it, "
            "nothing imported",
            None,
            path,
        )
    if not missing:
        return []
    shown = ", ".join(missing[:MISSING_SHOWN])
    more = f" and {len(missing) - MISSING_SHOWN} more" if len(missing) > MISSING_SHOWN else ""
    return [
        f"{hits} of {len(wanted)} animated bones match armature {armature.name!r}; "
        f"not in it, so not applied (their keys stay with the action and are written "
        f"back on export): {shown}{more}"
    ]


def fit_armature(
    context, path: str, bone_names: Sequence[str], armature=None
) -> tuple[bpy.types.Object, str, list[str]]:
    """The armature an animation goes onto (``armature`` when given, else the
    active one, else the one sharing most bone names), how it was chosen, and
    the :func:`animation_fit` warnings; FormatError when there is none or it
    does not fit."""
    armature, how = choose_armature(context, given=armature, rule=by_bone_names(bone_names))
    if armature is None:
        raise FormatError(how, None, path)
    return armature, how, animation_fit(path, armature, bone_names)
