"""Urho3D / rbfx in Blender: models, animations (``operators``) and packages (``package``)."""
