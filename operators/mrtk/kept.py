"""Where MRTK keeps what Blender cannot hold: its custom property names
(``operators.blender.kept_keys`` gathers every format's sets; no bpy here)."""

from __future__ import annotations

#: Keys MRTK's Blender side writes under a name that starts with ``_`` (an
#: earlier RigPort wrote them without it).
OWN = frozenset(
    {
        "_mrtk_role",
        "_mrtk_curves",
        "_mrtk_wraps",
        "_mrtk_meta",
    }
)


#: Kept keys that say what an item is rather than keep file data: "Forget Kept
#: Data" leaves them.
IDENTITY = frozenset(
    {
        "_mrtk_role",
    }
)
