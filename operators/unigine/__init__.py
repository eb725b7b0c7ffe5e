"""Unigine MESH and ANIM in Blender."""
