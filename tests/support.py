"""Helpers shared by test modules: ``from rigport.tests.support import ...``.

(Test modules cannot import ``conftest`` or each other; the repository is the
package ``rigport``, so this module is importable like the product code.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from rigport.io_formats.transforms import quat_to_matrix
from rigport.io_formats.urho3d import mdl

ROOT = Path(__file__).resolve().parents[1]
BATCH = ROOT / "batch.py"


def run_batch(
    *args: object, timeout: float = 300, env: dict | None = None
) -> subprocess.CompletedProcess:
    """``python batch.py ARGS`` with this interpreter (and so its bpy)."""
    return subprocess.run(
        [sys.executable, str(BATCH), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def assert_same_urho3d_skeleton(a: mdl.Model, b: mdl.Model) -> None:
    """Bone names, parents, bind transforms, offset matrices and collision data agree."""
    assert [x.name for x in a.bones] == [x.name for x in b.bones]
    for x, y in zip(a.bones, b.bones, strict=True):
        assert x.parent == y.parent
        assert np.allclose(x.position, y.position, atol=1e-5)
        assert np.allclose(quat_to_matrix(x.rotation), quat_to_matrix(y.rotation), atol=1e-5)
        assert np.allclose(x.scale, y.scale, atol=1e-5)
        assert np.allclose(x.offset_matrix, y.offset_matrix, atol=1e-5)
        assert x.collision_mask == y.collision_mask
        assert np.isclose(x.radius, y.radius)
        assert np.allclose(x.bbox_min, y.bbox_min) and np.allclose(x.bbox_max, y.bbox_max)
