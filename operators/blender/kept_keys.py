"""Where RigPort's kept round-trip data lives in custom properties, out of sight.

Blender's UI hides custom properties whose names start with ``_``. RigPort keeps
what Blender cannot hold (file blobs, bookkeeping such as file order, bind
transforms, index widths) under such names; what an artist sees, edits or
animates (MRTK ``tracked``/``pinch``/``direction``, ``urho_lod``, RenderWare
``rw_color``/``rw_texture_name``/``rw_bone_id``/``rw_atomic_flags``, bone
collision data, ``rigport_fps``) stays visible.

Each format declares its own names in ``operators/<format>/kept.py``; this
module gathers them with the shared ones. Two kinds of kept key:

* :data:`HIDDEN`: names the codecs use in the neutral scene's extras
  (``io_formats`` knows nothing of Blender's UI). ``build.set_prop`` stores them
  as ``"_" + name``; ``extract.read_prop`` and :func:`extras_keys` give them back
  under the codec's name.
* Keys written by the Blender side itself, whose constants already start with
  ``_`` (``build.REST``, MRTK ``ROLE``, BonesPro ``HEADER`` ...).

Earlier versions of RigPort stored both kinds without the ``_``: :data:`LEGACY` lists
those names. :func:`migrate` renames them when a blend file is loaded (the
panel's load handler, ``ui/panel.py``), and ``read_prop`` falls back to them, so a file
saved by the previous version still exports the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .. import format_parts

#: The shared keys; each format adds its own in ``operators/<format>/kept.py``
#: (``HIDDEN``, ``OWN``, ``ALWAYS_HIDDEN``, ``IDENTITY``, each optional).
_SHARED = {
    # extras keys of the codecs that the Blender side stores as ``"_" + key``
    "HIDDEN": frozenset({"rigport_format"}),
    # keys the Blender side writes under a constant that starts with ``_``
    # (without it: the name an earlier RigPort wrote)
    "OWN": frozenset(
        {
            "_rigport_bind_scale",
            "_rigport_rest",
            "_rigport_local",
            "_rigport_inverse_bind",
            "_rigport_length",
        }
    ),
    # keys that were always hidden (guard data, the import's counts and transform)
    "ALWAYS_HIDDEN": frozenset(
        {
            "_rigport_guard",
            "_rigport_name",
            "_rigport_counts",
            "_rigport_import_transform",
            "_rigport_exact_keys",  # an action's exact keys: blender/exact_keys.py
        }
    ),
    # kept keys that identify what an item is rather than keep file data (the
    # file's own name of a renamed item): "Forget Kept Data" leaves them, so
    # export still finds and names things
    "IDENTITY": frozenset({"_rigport_name"}),
}


def _gathered(kind: str) -> frozenset[str]:
    return _SHARED[kind].union(
        *(getattr(module, kind, frozenset()) for module in format_parts("kept"))
    )


#: Extras keys of the codecs that the Blender side stores as ``"_" + key``.
HIDDEN = _gathered("HIDDEN")
#: Keys the Blender side writes under a name that starts with ``_``.
OWN = _gathered("OWN")
#: Keys that were always hidden (guard data, stored sources of animations).
ALWAYS_HIDDEN = _gathered("ALWAYS_HIDDEN")
#: Kept keys "Forget Kept Data" leaves (a recording's joint role, a renamed item's name).
IDENTITY = _gathered("IDENTITY")

#: Names an earlier RigPort wrote, each with the name it has now.
LEGACY = {**{k: "_" + k for k in HIDDEN}, **{k[1:]: k for k in OWN}}


def stored_name(key: str) -> str:
    """The custom property name RigPort writes for extras key ``key``."""
    return "_" + key if key in HIDDEN else key


def logical_name(stored: str) -> str:
    """The extras key a stored custom property name stands for (its old visible
    name included)."""
    if stored[:1] == "_" and stored[1:] in HIDDEN:
        return stored[1:]
    if stored in LEGACY and stored not in HIDDEN:
        return LEGACY[stored]
    return stored


def find(holder, key: str) -> str | None:
    """The name under which ``holder`` has ``key`` (now or as an earlier RigPort
    wrote it), or None."""
    for name in (stored_name(key), key, key[1:] if key in OWN else None):
        if name is not None and name in holder:
            return name
    return None


def get(holder, key: str, default=None):
    """The raw value of kept key ``key`` (under its current or old name)."""
    name = find(holder, key)
    return holder[name] if name is not None else default


def has(holder, key: str) -> bool:
    return find(holder, key) is not None


def extras_keys(holder) -> Iterator[tuple[str, str]]:
    """(extras key, stored name) of every custom property of ``holder``; the
    current name wins where an old one is also there."""
    names = list(holder.keys())
    present = set(names)
    for name in names:  # in the holder's order
        if LEGACY.get(name) in present:  # an old name beside the current one
            continue
        yield logical_name(name), name


def is_kept(name: str) -> bool:
    """True for a custom property name that holds RigPort's kept data."""
    return (
        name in LEGACY
        or name in ALWAYS_HIDDEN
        or name in OWN
        or (name[:1] == "_" and name[1:] in HIDDEN)
    )


def _plain(value):
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "to_list"):
        return value.to_list()
    return value


def migrate(holders: Iterable) -> int:
    """Rename the old visible kept keys of ``holders`` to their hidden names;
    how many were renamed."""
    renamed = 0
    for holder in holders:
        for name in [n for n in holder.keys() if n in LEGACY]:
            new = LEGACY[name]
            if new not in holder:
                holder[new] = _plain(holder[name])
            del holder[name]
            renamed += 1
    return renamed


def forget(holders: Iterable) -> int:
    """Remove RigPort's kept data from ``holders`` (all but :data:`IDENTITY`);
    how many properties were removed."""
    removed = 0
    for holder in holders:
        for name in [n for n in holder.keys() if is_kept(n) and LEGACY.get(n, n) not in IDENTITY]:
            del holder[name]
            removed += 1
    return removed
