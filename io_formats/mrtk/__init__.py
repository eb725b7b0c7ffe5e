"""Mixed Reality Toolkit input animation recordings."""
