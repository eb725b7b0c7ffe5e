"""Where BonesPro keeps what Blender cannot hold: its custom property names
(``operators.blender.kept_keys`` gathers every format's sets; no bpy here)."""

from __future__ import annotations

#: Keys BonesPro's Blender side writes under a name that starts with ``_`` (an
#: earlier RigPort wrote them without it).
OWN = frozenset(
    {
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
        "_bonespro_text",
    }
)
