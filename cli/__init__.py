"""The pieces of ``batch.py``, RigPort's command line, that need no Blender.

``members``: files inside containers (``PACKAGE.pak:path/inside.mdl``);
``inputs``: the file list of a run (folders walked, packages opened, shards);
``outputs``: where ``roundtrip`` and ``convert`` write each file;
``pairing``: which model each animation of a library goes with;
``progress``: per-file results, progress lines, the summary and the JSON report;
``pool``: worker processes for ``--jobs N``; ``journal``: the report as the run
goes, and ``--resume``. Nothing here imports bpy.
"""

import signal


class UsageError(Exception):
    """A bad command line, or an output that cannot be written: exit status 2."""


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGINT stopped the run: a KeyboardInterrupt (so that what catches
    Exception lets it through and atomic writes clean up) naming the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name
