"""RenderWare in Blender: operators, import and export of clumps, animations, textures."""
