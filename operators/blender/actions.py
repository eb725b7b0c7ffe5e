"""Keep every action an import creates: the one rule for every format.

Blender writes only data blocks with a user into a .blend file. An action that
an import assigns and then replaces by the next one has no user left and is
dropped on save. So every imported action is *stashed*, as Blender's own
"Stash" and the bundled glTF importer do: a muted, locked NLA track per action
on the object (or shape key block) it animates, in import order, with the last
one as the active action. Muted tracks do not change what plays; the NLA
editor lists them, and the Action editor picks any of them as the active action.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import bpy

from . import compat
from .snapshot import AnimationState


def _stashed(ad) -> set[int]:
    """The actions (by pointer) the strips of ``ad``'s NLA tracks play: one scan."""
    if ad is None:
        return set()
    return {s.action.as_pointer() for t in ad.nla_tracks for s in t.strips if s.action is not None}


def _stash(ad, action: bpy.types.Action, slot=None) -> None:
    track = ad.nla_tracks.new(prev=ad.nla_tracks[-1] if len(ad.nla_tracks) else None)
    track.name = action.name
    strip = track.strips.new(action.name, int(action.frame_range[0]), action)
    compat.set_slot(strip, action, slot)
    track.mute = True
    track.lock = True


def keep_actions(
    owner: bpy.types.ID,
    actions: Sequence[bpy.types.Action],
    active: bpy.types.Action | None = None,
) -> Callable[[], None]:
    """Stash ``actions`` on ``owner`` (an object, or a shape key block) as muted NLA
    tracks, one per action in order, and make ``active`` (default: the last) its
    active action. An action the owner played before and that would lose its last
    user is stashed too, so an import never drops the artist's own action.

    Returns the take-back: the owner's animation as it was before (the tracks
    this call added go, its previous action and slot play again:
    ``snapshot.AnimationState``), and ``actions`` removed from the file.

    Linear in the owner's tracks plus ``actions``: one scan of the tracks and at
    most one dependency graph update per call, so an import of many animations
    calls it once (:func:`keep_all`)."""
    actions = [a for a in actions if a is not None]
    state = AnimationState(owner)
    ad = owner.animation_data or owner.animation_data_create()
    stashed = _stashed(ad)
    previous = state.action
    previous_slot = state.slot
    # Strips are made while the owner plays no action, as Blender's own stash does.
    if previous is not None:
        compat.settle_action_slots()
        ad.action = None
    if (
        previous is not None
        and previous not in actions
        and not previous.use_fake_user
        and previous.users == 0
        and previous.as_pointer() not in stashed
    ):
        _stash(ad, previous, previous_slot)
    for action in actions:
        if action.as_pointer() not in stashed:
            stashed.add(action.as_pointer())
            _stash(ad, action)
    if actions:
        chosen = active if active is not None else actions[-1]
        ad.action = chosen
        compat.set_slot(ad, chosen)
    elif previous is not None:
        ad.action = previous
        compat.set_slot(ad, previous, previous_slot)

    def take_back() -> None:
        state.restore()
        for action in actions:
            try:
                bpy.data.actions.remove(action)
            except (ReferenceError, RuntimeError):
                pass

    return take_back


def keep_all(
    made: Iterable[tuple[bpy.types.ID, Sequence[bpy.types.Action]]],
) -> list[Callable[[], None]]:
    """:func:`keep_actions` once per owner of ``made`` (owner, actions) pairs, with
    every action given for it in order (the last one active): an import of many
    files or members stashes once. Returns the take-backs."""
    by_owner: dict[int, tuple[bpy.types.ID, list]] = {}
    for owner, actions in made:
        by_owner.setdefault(owner.as_pointer(), (owner, []))[1].extend(actions)
    return [keep_actions(owner, actions) for owner, actions in by_owner.values()]
