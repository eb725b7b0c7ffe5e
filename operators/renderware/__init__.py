"""RenderWare clumps in Blender: operators, clump build and extract."""
