"""The add-on's own interface: File menu entries and the RigPort panel."""
