"""The pieces of ``batch.py``, RigPort's command line, that need no Blender.

``members``: files inside containers (``PACKAGE.pak:path/inside.mdl``);
``inputs``: the file list of a run (folders walked, packages opened, shards);
``outputs``: where ``roundtrip`` and ``convert`` write each file;
``progress``: per-file results, progress lines, the summary and the JSON report;
``pool``: worker processes for ``--jobs N``. Nothing here imports bpy.
"""


class UsageError(Exception):
    """A bad command line, or an output that cannot be written: exit status 2."""
