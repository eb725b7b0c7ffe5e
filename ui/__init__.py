"""File menu entries and drag-and-drop handlers."""
