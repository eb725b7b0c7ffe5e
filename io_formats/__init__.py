"""Pure-Python codecs (numpy only): never imports bpy."""
