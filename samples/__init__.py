"""Sample writers: files of every format built by RigPort's own writers, for
what the corpus lacks.

Tests, the demo, the benchmarks and ``tools/mutate.py`` use them as
``rigport.samples``; they are not part of the add-on (``blender_manifest.toml``
leaves this folder out of the extension zip).
"""
