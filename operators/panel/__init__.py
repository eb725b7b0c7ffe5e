"""The RigPort panel: what RigPort knows about an object, and "Forget Kept Data"."""
