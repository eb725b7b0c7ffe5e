"""Where RenderWare keeps what Blender cannot hold: its custom property names
(``operators.blender.kept_keys`` gathers every format's sets; no bpy here)."""

from __future__ import annotations

#: Extras keys of the RenderWare codec that the Blender side stores as ``"_" + key``.
HIDDEN = frozenset(
    {
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
        "rw_name",
        "rw_name_raw",
        "rw_geometry_extension",
        "rw_anm_flags",
    }
)

#: Keys RenderWare's Blender side writes under a name that starts with ``_`` (an
#: earlier RigPort wrote them without it).
OWN = frozenset(
    {
        "_rw_atomic_frame",
        "_rw_atomic_index",
    }
)

#: Keys that were always hidden.
ALWAYS_HIDDEN = frozenset(
    {
        "_rw_fingerprint",
        "_rw_kept_face_positions",
        "_rw_ifp",
        "_rw_ifp_ends",
        "_rw_anm_stamp",
    }
)

#: Kept keys that say what an item is: a frame's own name where Blender shows
#: another (made unique, or a readable one for an empty name), and its bytes.
#: "Forget Kept Data" leaves them, so the export still writes the file's name.
IDENTITY = frozenset(
    {
        "_rw_name",
        "_rw_name_raw",
    }
)
