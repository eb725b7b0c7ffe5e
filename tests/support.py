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


#: Bit patterns of float32 values a file may hold where Blender cannot keep them
#: as they are: a quiet and a signalling NaN, an infinity, and a negative number
#: (a weight no vertex group takes).
ODD_VALUES = {
    "quiet NaN": 0x7FC00000,
    "signalling NaN": 0x7FA00001,
    "inf": 0x7F800000,
    "negative": 0xBF000000,
}


def group_table(obj, n_groups: int) -> np.ndarray:
    """The (vertex x group index) float32 weights ``obj``'s vertex groups hold,
    read one vertex at a time (a test's small mesh: no bulk path to trust)."""
    table = np.zeros((len(obj.data.vertices), n_groups), np.float32)
    for v in obj.data.vertices:
        for g in v.groups:
            table[v.index, g.group] = g.weight
    return table


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


def unity_eval(keys: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Unity AnimationCurve.Evaluate (clamped outside the keys) at times ``x`` (s):
    an evaluator independent of RigPort's conversion. Cubic Hermite for unweighted
    segments, a weighted Bezier solved for its parameter by bisection otherwise,
    a hold for infinite tangents."""
    t = keys["time"].astype(np.float64)
    v = keys["value"].astype(np.float64)
    x = np.clip(x, t[0], t[-1])
    i = np.clip(np.searchsorted(t, x, "right") - 1, 0, len(t) - 2)
    a, b = keys[i], keys[i + 1]
    dt = t[i + 1] - t[i]
    s = (x - t[i]) / dt
    m0 = a["out_tangent"].astype(np.float64)
    m1 = b["in_tangent"].astype(np.float64)
    out_w = (a["weighted_mode"] & 2) != 0
    in_w = (b["weighted_mode"] & 1) != 0
    wa = np.where(out_w, a["out_weight"], 1 / 3)
    wb = np.where(in_w, b["in_weight"], 1 / 3)
    v0, v1 = v[i], v[i + 1]
    fm0 = np.where(np.isfinite(m0), m0, 0)
    fm1 = np.where(np.isfinite(m1), m1, 0)
    s2, s3 = s * s, s * s * s
    hermite = (
        (2 * s3 - 3 * s2 + 1) * v0
        + (s3 - 2 * s2 + s) * dt * fm0
        + (-2 * s3 + 3 * s2) * v1
        + (s3 - s2) * dt * fm1
    )
    lo, hi = np.zeros_like(s), np.ones_like(s)
    for _ in range(60):
        u = (lo + hi) / 2
        bx = 3 * wa * u * (1 - u) ** 2 + 3 * (1 - wb) * u * u * (1 - u) + u**3
        lo, hi = np.where(bx < s, u, lo), np.where(bx < s, hi, u)
    u = (lo + hi) / 2
    weighted = (
        (1 - u) ** 3 * v0
        + 3 * (1 - u) ** 2 * u * (v0 + fm0 * wa * dt)
        + 3 * (1 - u) * u * u * (v1 - fm1 * wb * dt)
        + u**3 * v1
    )
    y = np.where(out_w | in_w, weighted, hermite)
    step = np.isinf(m0) | np.isinf(m1)
    y = np.where(step, v0, y)
    return np.where(x >= t[-1], v[-1], y)  # at and after the last key: its value
