"""Other people's readers of our formats, for tests: ``from rigport.tests.clients import ...``.

The clients live in ``../shared/clients`` (read-only). Whatever must be built
(librw and ``rwinfo``, MRTK's C# serializer) is built once into a cache folder
shared by every test run and worktree on the machine, under a lock, and
reused while the client's sources are unchanged. A client whose sources or
toolchain are missing makes the test skip with the reason.

Cache folder: ``$RIGPORT_CLIENT_CACHE``, else ``~/.cache/rigport-clients``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLIENTS = Path(os.environ.get("RIGPORT_CLIENTS", ROOT.parent / "shared" / "clients"))
CACHE = Path(os.environ.get("RIGPORT_CLIENT_CACHE", Path.home() / ".cache" / "rigport-clients"))
DRAGONFF = CLIENTS / "dragonff"


def _digest(*folders: Path) -> str:
    """A short hash of every file under ``folders`` (names, sizes and times)."""
    h = hashlib.sha256()
    for folder in folders:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                st = p.stat()
                h.update(f"{p.relative_to(folder)}:{st.st_size}:{int(st.st_mtime)}".encode())
    return h.hexdigest()[:16]


@contextmanager
def _locked(name: str):
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _need(tool: str, why: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{why}: {tool} is not installed")


def rwinfo() -> Path:
    """The ``rwinfo`` executable (librw, null platform), built on first use (~90 s)."""
    src = CLIENTS / "rwinfo"
    if not (src / "build.sh").is_file() or not (CLIENTS / "librw").is_dir():
        pytest.skip(f"librw/rwinfo sources are not in {CLIENTS}")
    _need("g++", "rwinfo needs a C++ compiler")
    _need("cmake", "librw needs cmake")
    out = CACHE / f"rwinfo-{_digest(src, CLIENTS / 'librw' / 'src')}"
    exe = out / "rwinfo"
    with _locked("rwinfo"):
        if not exe.is_file():
            res = subprocess.run(
                ["sh", str(src / "build.sh"), str(out)], capture_output=True, text=True
            )
            if res.returncode != 0 or not exe.is_file():
                pytest.fail(f"building rwinfo failed:\n{res.stdout}\n{res.stderr}")
    return exe


def run_rwinfo(*args: object, gta_raw: bool = False, timeout: float = 120) -> str:
    """``rwinfo ARGS``'s standard output; a non-zero exit fails the test."""
    env = dict(os.environ)
    if gta_raw:
        env["RW_GTA_RAW"] = "1"
    res = subprocess.run(
        [str(rwinfo()), *map(str, args)], capture_output=True, text=True, env=env, timeout=timeout
    )
    assert res.returncode == 0, f"rwinfo {args} failed ({res.returncode}):\n{res.stderr}"
    return res.stdout


def mrtk_harness(version: str = "11") -> Path:
    """MRTK's own serializer harness (``mrtk11.exe`` or ``mrtk10.exe``), built with mono."""
    src = CLIENTS / "mrtk-serializer"
    if not (src / "build.sh").is_file():
        pytest.skip(f"the MRTK serializer is not in {CLIENTS}")
    _need("mcs", "the MRTK serializer needs mono (apt-get install mono-mcs mono-runtime)")
    _need("mono", "the MRTK serializer needs mono (apt-get install mono-mcs mono-runtime)")
    out = CACHE / f"mrtk-{_digest(src / 'src')}"
    exe = out / "bin" / f"mrtk{version}.exe"
    with _locked("mrtk"):
        if not exe.is_file():
            if out.exists():
                shutil.rmtree(out)
            shutil.copytree(src, out)  # build.sh writes bin/ beside itself
            res = subprocess.run(["sh", str(out / "build.sh")], capture_output=True, text=True)
            if res.returncode != 0 or not exe.is_file():
                pytest.fail(f"building the MRTK serializer failed:\n{res.stdout}\n{res.stderr}")
    return exe


def run_mrtk(
    *args: object, version: str = "11", timeout: float = 300
) -> subprocess.CompletedProcess:
    """``mono mrtkNN.exe ARGS`` (verbs: info, compare, dump, write-sample, ...)."""
    return subprocess.run(
        ["mono", str(mrtk_harness(version)), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def dragonff_parent() -> Path:
    """The folder to put on ``sys.path`` so that ``import dragonff`` loads DragonFF."""
    if not (DRAGONFF / "__init__.py").is_file():
        pytest.skip(f"DragonFF is not in {CLIENTS}")
    return DRAGONFF.parent


def rwanim() -> Path:
    """RigPort's own librw harness (``tests/clients/rwanim.cpp``: reads and writes
    ``.anm`` with librw's Animation API), linked against the librw that
    :func:`rwinfo` builds."""
    base = rwinfo().parent
    src = Path(__file__).resolve().parent / "clients" / "rwanim.cpp"
    libs = sorted(base.glob("librw/**/librw*.a"))
    if not libs:
        pytest.skip(f"no librw library under {base}")
    out = base / f"rwanim-{_digest(src.parent)}"
    with _locked("rwanim"):
        if not out.is_file():
            res = subprocess.run(
                [
                    "g++",
                    "-O1",
                    "-std=c++11",
                    "-DRW_NULL",
                    f"-I{CLIENTS / 'librw'}",
                    "-o",
                    str(out),
                    str(src),
                    str(libs[0]),
                ],
                capture_output=True,
                text=True,
            )
            if res.returncode != 0 or not out.is_file():
                pytest.fail(f"building the librw harness failed:\n{res.stderr}")
    return out


def run_rwanim(*args: object, timeout: float = 120) -> str:
    """``rwanim ARGS``'s standard output; a non-zero exit fails the test."""
    res = subprocess.run(
        [str(rwanim()), *map(str, args)], capture_output=True, text=True, timeout=timeout
    )
    assert res.returncode == 0, f"rwanim {args} failed ({res.returncode}):\n{res.stderr}"
    return res.stdout


_DRAGONFF_TXD = r"""
import sys, numpy as np, bpy
sys.path.insert(0, sys.argv[-3])
import dragonff
dragonff.register()
from dragonff.ops import txd_importer
txd_importer.import_txd({"file_name": sys.argv[-2], "skip_mipmaps": True, "pack": False})
out = {}
for image in bpy.data.images:
    w, h = image.size
    px = np.empty(w * h * 4, np.float32)
    image.pixels.foreach_get(px)
    out[image.name] = px.reshape(h, w, 4)
np.savez(sys.argv[-1], **out)
sys.stdout.flush()
import os
os._exit(0)  # bpy 4.2 can crash at interpreter exit
"""


def dragonff_txd_pixels(path: Path, out: Path, timeout: float = 600) -> dict:
    """DragonFF's import of a .txd, in a child bpy process: image name
    (``file.txd/texture/0``) -> (h, w, 4) float pixels, bottom row first."""
    import sys

    import numpy as np

    parent = dragonff_parent()
    res = subprocess.run(
        [sys.executable, "-c", _DRAGONFF_TXD, str(parent), str(path), str(out)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert res.returncode == 0, f"DragonFF's TXD import failed:\n{res.stderr[-3000:]}"
    with np.load(out) as data:
        return {k: data[k] for k in data.files}


_DRAGONFF_IMG = r"""
import hashlib, json, sys
sys.path.insert(0, sys.argv[-2])
from dragonff.gtaLib import img
archive = img.img.open(sys.argv[-1])
rows = []
for i in range(len(archive.directory_entries)):
    name, data = archive.read_entry(i)
    rows.append([name, len(data), hashlib.sha256(data).hexdigest()])
archive.close()
print(json.dumps(rows))
sys.stdout.flush()
import os
os._exit(0)  # bpy 4.2 can crash at interpreter exit
"""


def dragonff_img_members(path: Path, timeout: float = 300) -> list:
    """DragonFF's reading of an IMG archive, in a child process:
    ``[name, size, sha256 of the member's sectors]`` per member."""
    import json
    import sys

    parent = dragonff_parent()
    res = subprocess.run(
        [sys.executable, "-c", _DRAGONFF_IMG, str(parent), str(path)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert res.returncode == 0, f"DragonFF's IMG reader failed:\n{res.stderr[-3000:]}"
    return json.loads(res.stdout.strip().splitlines()[-1])


#: Run in a child interpreter: import one .dff with DragonFF into an empty scene and
#: print a JSON summary of what it built on the last line (prefixed ``DRAGONFF ``).
_DRAGONFF_SCRIPT = r"""
import json, os, sys
import bpy
import numpy as np

parent, path = sys.argv[1], sys.argv[2]
mat_split = sys.argv[3:] == ["mat_split"]
sys.path.insert(0, parent)
bpy.ops.wm.read_factory_settings(use_empty=True)
import dragonff
dragonff.register()
bpy.ops.import_scene.dff(
    filepath=path, remove_doubles=False, load_images=False, read_mat_split=mat_split
)


def rounded(a, digits):
    return np.round(np.asarray(a, np.float64), digits).ravel().tolist()


def mesh_summary(obj):
    me = obj.data
    nv = len(me.vertices)
    pos = np.empty(nv * 3, np.float32)
    me.vertices.foreach_get("co", pos)
    corner = np.empty(len(me.loops), np.int32)
    me.loops.foreach_get("vertex_index", corner)
    mats = np.empty(len(me.polygons), np.int32)
    me.polygons.foreach_get("material_index", mats)
    uvs = []
    for layer in me.uv_layers:
        uv = np.empty(len(me.loops) * 2, np.float32)
        layer.data.foreach_get("uv", uv)
        uvs.append(rounded(uv, 5))
    colors = []
    for attr in me.color_attributes:
        c = np.empty(len(attr.data) * 4, np.float32)
        attr.data.foreach_get("color", c)
        colors.append([attr.name, attr.domain, rounded(c, 3)])
    weights = {}
    names = [g.name for g in obj.vertex_groups]
    for v in me.vertices:
        for g in v.groups:
            if g.weight > 0:
                weights.setdefault(names[g.group], []).append([v.index, round(g.weight, 5)])
    materials = []
    for slot in obj.material_slots:
        m = slot.material
        if m is None:
            materials.append(None)
            continue
        textures = sorted(
            n.label or n.name for n in (m.node_tree.nodes if m.node_tree else [])
            if n.type == "TEX_IMAGE"
        )
        color = [round(c, 4) for c in m.diffuse_color]
        materials.append({"color": color, "textures": textures})
    return {
        "vertices": nv,
        "faces": len(me.polygons),
        "positions": rounded(pos, 4),
        "corners": corner.tolist(),
        "face_materials": mats.tolist(),
        "uvs": uvs,
        "colors": colors,
        "shape_keys": [k.name for k in me.shape_keys.key_blocks] if me.shape_keys else [],
        "groups": names,
        "weights": weights,
        "materials": materials,
    }


objects = {}
for obj in bpy.data.objects:
    entry = {
        "type": obj.type,
        "parent": obj.parent.name if obj.parent else None,
        "parent_bone": obj.parent_bone or None,
        "matrix_world": rounded(obj.matrix_world, 4),
    }
    if obj.type == "MESH":
        entry.update(mesh_summary(obj))
    if obj.type == "ARMATURE":
        entry["bones"] = [b.name for b in obj.data.bones]
        entry["bone_parents"] = [b.parent.name if b.parent else None for b in obj.data.bones]
        entry["bone_heads"] = [rounded(b.head_local, 4) for b in obj.data.bones]
    objects[obj.name] = entry
summary = {
    "objects": objects,
    "counts": {
        "objects": len(bpy.data.objects),
        "meshes": len(bpy.data.meshes),
        "armatures": len(bpy.data.armatures),
        "materials": len(bpy.data.materials),
    },
}
print("DRAGONFF " + json.dumps(summary), flush=True)
os._exit(0)  # bpy 4.5 can hang at interpreter exit after DragonFF ran
"""


def dragonff_import(path: str | os.PathLike, timeout: float = 300, mat_split: bool = False) -> dict:
    """What DragonFF builds from the .dff at ``path``, as a JSON summary: counts, then
    per object (by name) its type, parent, world matrix and for meshes the vertex and
    face counts, positions, corners, face materials, UVs, colour attributes, shape
    keys, vertex groups and weights, materials (colour, texture names); for armatures
    the bone names, parents and heads.

    With ``mat_split`` DragonFF reads the triangles from the Bin Mesh (its "Read
    Material Split" option), else from the geometry's triangle list.

    DragonFF registers operators, properties and handlers that must not reach the
    test process, so it runs in a child interpreter with the same bpy."""
    parent = dragonff_parent()
    res = subprocess.run(
        [sys.executable, "-c", _DRAGONFF_SCRIPT, str(parent), str(path)]
        + (["mat_split"] if mat_split else []),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    line = next((x for x in reversed(res.stdout.splitlines()) if x.startswith("DRAGONFF ")), None)
    if line is None:
        if "No module named 'bpy'" in res.stderr:
            pytest.skip(f"DragonFF needs bpy in {sys.executable}")
        pytest.fail(f"DragonFF failed on {path} ({res.returncode}):\n{res.stderr[-4000:]}")
    return json.loads(line[len("DRAGONFF ") :])
