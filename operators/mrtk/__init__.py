"""MRTK input animation recordings in Blender: operators, build and extract."""
