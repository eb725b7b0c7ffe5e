"""Where RigPort's kept round-trip data lives in custom properties, out of sight.

Blender's UI hides custom properties whose names start with ``_``. RigPort keeps
what Blender cannot hold (file blobs, bookkeeping such as file order, bind
transforms, index widths) under such names; what an artist sees, edits or
animates (MRTK ``tracked``/``pinch``/``direction``, ``urho_lod``, RenderWare
``rw_color``/``rw_texture_name``/``rw_bone_id``/``rw_atomic_flags``, bone
collision data, ``rigport_fps``) stays visible.

Two kinds of kept key:

* :data:`HIDDEN`: names the codecs use in the neutral scene's extras
  (``io_formats`` knows nothing of Blender's UI). ``build.set_prop`` stores them
  as ``"_" + name``; ``extract.read_prop`` and :func:`extras_keys` give them back
  under the codec's name.
* Keys written by the Blender side itself, whose constants already start with
  ``_`` (``build.REST``, MRTK ``ROLE``, BonesPro ``HEADER`` ...).

Earlier versions of RigPort stored both kinds without the ``_``: :data:`LEGACY` lists
those names. :func:`migrate` renames them when a blend file is loaded (the
panel module's load handler), and ``read_prop`` falls back to them, so a file
saved by the previous version still exports the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

#: Extras keys of the codecs that the Blender side stores as ``"_" + key``.
HIDDEN = frozenset(
    {
        # shared
        "rigport_format",
        # Urho3D
        "urho_layout",
        "urho_lod_count",
        "urho_index",
        "urho_axes",
        "urho_ani",
        # Unigine
        "unigine_surfaces",
        "unigine_index",
        "unigine_bones",
        "unigine_flag",
        "unigine_name",
        "unigine_bounds",
        # RenderWare
        "rw_geometry",
        "rw_skin",
        "rw_hanim",
        "rw_material",
        "rw_texture",
        "rw_version",
        "rw_stamp",
        "rw_clump_extension",
        "rw_clump_extensions",
        "rw_clump_items",
        "rw_clump_counts",
        "rw_file_chunks",
        "rw_trailing",
        "rw_atomic_extension",
        "rw_atomic_tail",
        "rw_frame_matrix",
        "rw_frame_index",
        "rw_frame_flags",
        "rw_bone_index",
        "rw_bone_flags",
        "rw_hanim_root",
        "rw_unnamed",
        "rw_extension",
        "rw_name_raw",
        "rw_geometry_extension",
        "rw_anm_flags",
    }
)

#: Keys the Blender side writes under a constant that starts with ``_`` (without
#: it: the name an earlier RigPort wrote).
OWN = frozenset(
    {
        "_rigport_bind_scale",
        "_rigport_rest",
        "_rigport_local",
        "_rigport_inverse_bind",
        "_rigport_length",
        "_unigine_source",
        "_unigine_clip",
        "_unigine_animations",
        "_rw_atomic_frame",
        "_rw_atomic_index",
        "_mrtk_role",
        "_mrtk_curves",
        "_mrtk_wraps",
        "_mrtk_meta",
        "_bonespro_header",
        "_bonespro_node_offset",
        "_bonespro_boxes",
        "_bonespro_node_offsets_per_frame",
        "_bonespro_boxes_per_frame",
        "_bonespro_source",
        "_bonespro_box",
        "_bonespro_node",
        "_bonespro_bone",
        "_bonespro_index",
        "_bonespro_frame_scale",
    }
)

#: Keys that were always hidden (guard data, stored sources of animations).
ALWAYS_HIDDEN = frozenset(
    {
        "_rigport_guard",
        "_rigport_name",
        "_rigport_counts",
        "_rigport_import_transform",
        "_urho_tracks",
        "_urho_steps",
        "_rw_ifp",
        "_rw_anm_stamp",
    }
)

#: Names an earlier RigPort wrote, each with the name it has now.
LEGACY = {**{k: "_" + k for k in HIDDEN}, **{k[1:]: k for k in OWN}}

#: Kept keys that identify what an object is rather than keep file data: a
#: recording's joint role, the file's own name of a renamed item. "Forget Kept
#: Data" leaves them, so export still finds and names things.
IDENTITY = frozenset({"_mrtk_role", "_rigport_name"})


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
