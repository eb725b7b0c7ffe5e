"""BonesPro structure and animation text exports in Blender: operators and rig helpers."""
