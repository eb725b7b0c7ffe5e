"""Urho3D models (.mdl) and animations (.ani)."""
