"""Where Urho3D keeps what Blender cannot hold: its custom property names
(``operators.blender.kept_keys`` gathers every format's sets; no bpy here)."""

from __future__ import annotations

#: Extras keys of the Urho3D codec that the Blender side stores as ``"_" + key``.
HIDDEN = frozenset(
    {
        "urho_layout",
        "urho_lod_count",
        "urho_index",
        "urho_axes",
        "urho_ani",
    }
)


#: Keys that were always hidden.
ALWAYS_HIDDEN = frozenset(
    {
        "_urho_tracks",
        "_urho_steps",
        "_urho_fingerprint",
    }
)

#: Where an imported mesh object keeps the fingerprint of the mesh its kept layout
#: and ``urho:*`` attributes describe (``operators.blender.fingerprint``).
FINGERPRINT = "_urho_fingerprint"
