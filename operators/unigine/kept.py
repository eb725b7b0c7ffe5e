"""Where Unigine keeps what Blender cannot hold: its custom property names
(``operators.blender.kept_keys`` gathers every format's sets; no bpy here)."""

from __future__ import annotations

#: Extras keys of the Unigine codec that the Blender side stores as ``"_" + key``.
HIDDEN = frozenset(
    {
        "unigine_surfaces",
        "unigine_index",
        "unigine_bones",
        "unigine_flag",
        "unigine_name",
        "unigine_bounds",
        "unigine_kept",
        "unigine_header",
        "unigine_boxes",
    }
)

#: Keys Unigine's Blender side writes under a name that starts with ``_`` (an
#: earlier RigPort wrote them without it).
OWN = frozenset(
    {
        "_unigine_source",
        "_unigine_clip",
        "_unigine_animations",
    }
)

#: Keys that were always hidden.
ALWAYS_HIDDEN = frozenset({"_unigine_fingerprint"})

#: Where an imported mesh object keeps the fingerprint of the mesh its kept data
#: (bounds, weight bytes, the surface of each vertex) describes.
FINGERPRINT = "_unigine_fingerprint"
