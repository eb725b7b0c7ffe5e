"""Blender builders: neutral scene <-> Blender data (no byte parsing here)."""
