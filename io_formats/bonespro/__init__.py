"""BonesPro (3ds Max) structure and animation text exports."""
