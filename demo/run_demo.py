"""RigPort demo: a character of each format, posed mid-animation with its skeleton,
through Blender and back, and one through glTF.

    make demo      (= .venv/bpy50/bin/python demo/run_demo.py [OUT])

One asset per format: the corpus's real files where ``../shared/corpus`` has
them (Urho3D's Jack walking), else files RigPort's own writers build
(``samples/<format>.py``: a GTA ped with a walk package, a Unigine mesh with
embedded animations, an MRTK hand recording, a BonesPro rig and its
animation). Each is imported into an empty Blender file and exported back to
``OUT/export/``; every exported file must re-encode byte for byte with the
source's codec summary. The verdict of a round trip is "byte-identical", or
else the largest distance between the posed vertices, bones and empties of the
source and of its export (bone heads: the files store no tails), both imported
and posed at the same frame. A sixth
tile takes the Urho3D character to ``.glb`` with Blender's glTF exporter and
back to ``.mdl``/``.ani`` (``cli/bridges.py``), measured the same way.

Each tile shows the imported export, posed at the middle of its animation,
with its skeleton (bones as orange octahedra, drawn in front) and a label with
its verdict; the tiles make one contact sheet, ``OUT/contact_sheet.png``
(Workbench; Cycles at a few samples where Workbench cannot render headless).

Prints one table (format, files, import, export, check, seconds, verdict), a
FAIL line for every step that failed, and exits 1 if any did.
"""

from __future__ import annotations

import os
import runpy
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TILE = (400, 300)
COLUMNS = 3
#: Where ``tests/conftest.py`` finds the corpus (``RIGPORT_CORPUS`` overrides it).
CORPUS = Path(os.environ.get("RIGPORT_CORPUS") or ROOT.parent / "shared" / "corpus")
SKELETON_COLOUR = (1.0, 0.55, 0.1, 1.0)
BODY_COLOUR = (0.62, 0.66, 0.72, 1.0)
LABEL_COLOUR = (0.92, 0.93, 0.95, 1.0)

rigport = runpy.run_path(str(ROOT / "loader.py"))["package"]()
from rigport import batch  # noqa: E402  (the repository's command line)
from rigport.cli import bridges  # noqa: E402
from rigport.cli.leave import leave  # noqa: E402
from rigport.io_formats.bonespro import animation as b_anim  # noqa: E402
from rigport.io_formats.bonespro import structure as b_struct  # noqa: E402
from rigport.io_formats.codec.errors import counted  # noqa: E402
from rigport.io_formats.mrtk import recording as k_rec  # noqa: E402
from rigport.io_formats.renderware import dff as r_dff  # noqa: E402
from rigport.io_formats.renderware import ifp as r_ifp  # noqa: E402
from rigport.io_formats.unigine import mesh as g_mesh  # noqa: E402
from rigport.io_formats.urho3d import ani as u_ani  # noqa: E402
from rigport.io_formats.urho3d import mdl as u_mdl  # noqa: E402
from rigport.samples import bonespro as b_samples  # noqa: E402
from rigport.samples import mrtk as k_samples  # noqa: E402
from rigport.samples import renderware as r_samples  # noqa: E402
from rigport.samples import renderware_ifp as r_ifp_samples  # noqa: E402
from rigport.samples import unigine as g_samples  # noqa: E402
from rigport.samples import urho3d as u_samples  # noqa: E402

FORMATS = ("Urho3D", "Unigine", "RenderWare", "MRTK", "BonesPro", "glTF")


@dataclass
class Asset:
    """One tile's files (the model first, then its animations) and where they come from."""

    fmt: str
    files: list[Path]
    origin: str


class Row:
    def __init__(self, fmt: str, files: list[Path]) -> None:
        self.fmt, self.files = fmt, files
        self.steps: dict[str, str] = {}
        self.verdict = ""
        self.engine = ""
        self.failures: list[str] = []
        self.seconds = 0.0

    def step(self, name: str, fn, *args):
        """Run ``fn(*args)``; its status goes in the table, its failure in a FAIL line."""
        t0 = time.perf_counter()
        try:
            out = fn(*args)
        except Exception as exc:  # every failure is reported, none stops the others
            self.steps[name] = "FAIL"
            self.failures.append(f"{name}: {type(exc).__name__}: {exc}")
            traceback.print_exc(file=sys.stderr)
            out = None
        else:
            self.steps[name] = "ok"
        self.seconds += time.perf_counter() - t0
        return out


def write_assets(folder: Path, corpus: Path = CORPUS) -> list[Asset]:
    """The five formats' assets: the corpus's Jack where it is there, else (and for
    the formats the corpus has no character of) files our writers build in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)

    def made(name: str, data: bytes) -> Path:
        path = folder / name
        path.write_bytes(data)
        return path

    jack = [corpus / "urho3d" / "Jack.mdl", corpus / "urho3d" / "Jack_Walk.ani"]
    if all(p.is_file() for p in jack):
        urho3d = Asset("Urho3D", jack, "corpus")
    else:
        model = u_samples.skinned_model(n_bones=6, grid=(24, 10), morphs=1)
        walk = u_samples.walk_animation(model)
        files = [
            made("character.mdl", u_mdl.write(model)),
            made("character_Walk.ani", u_ani.write(walk)),
        ]
        urho3d = Asset("Urho3D", files, "sample")
    skeleton = r_samples.ped_skeleton(16, identity_root=True)
    ped = made("gta_ped.dff", r_dff.write(r_samples.gta_ped("SA", 16)))
    walk = made("gta_ped.ifp", r_ifp.write(r_ifp_samples.walk_package("SA", skeleton, frames=31)))
    unigine = g_samples.skinned_mesh(n_bones=6, rings=10, n_frames=12)
    rig = b_samples.structure(n_vertices=60, seed=3)
    return [
        urho3d,
        Asset("Unigine", [made("character.mesh", g_mesh.write(unigine))], "sample"),
        Asset("RenderWare", [ped, walk], "sample"),
        Asset(
            "MRTK", [made("hands.bin", k_rec.write(k_samples.sample_recording(keys=12)))], "sample"
        ),
        Asset(
            "BonesPro",
            [
                made("rig.txt", b_struct.write(rig)),
                made("rig_walk.txt", b_anim.write(b_samples.animation(rig, n_frames=9))),
            ],
            "sample",
        ),
    ]


def check_export(src: Path, out: Path) -> bool:
    """The exported file re-encodes losslessly and has the source's summary; whether
    it is the source byte for byte."""
    batch.check_file(str(out))
    fmt = batch.format_of(str(src))
    want = fmt.summary(fmt.read(src.read_bytes()))
    got = fmt.summary(fmt.read(out.read_bytes()))
    differ = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
    if differ:
        raise AssertionError(f"the exported summary of {out.name} differs in {', '.join(differ)}")
    return src.read_bytes() == out.read_bytes()


def import_files(bl, files: list[Path], all_lods: bool = True) -> dict:
    """Import ``files`` into the (empty) scene, glTF through Blender's importer (every
    LOD level with ``all_lods``, those after the first hidden); the state."""
    state: dict = {"actions": []}
    for path in files:
        if bridges.bridge_of(str(path)):
            bridges.import_file(str(path), state, {})
        else:
            bl.import_file(str(path), state, {"all_lods": all_lods})
        if state.get("action") is not None and state["action"] not in state["actions"]:
            state["actions"].append(state["action"])
    return state


def export_files(bl, state: dict, files: list[Path], folder: Path) -> list[Path]:
    """Export the scene as each of ``files`` (same names, in ``folder``)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for src in files:
        path = folder / src.name
        if bridges.bridge_of(str(path)):
            bridges.export_file(str(path), state, {})
        else:
            bl.export_file(str(path), state, {}, batch.format_of(str(src)).kind)
        out.append(path)
    return out


def mid_frame(bpy) -> int:
    """The middle of the active actions' frames (every action's when none is active)."""
    ranges = [
        tuple(o.animation_data.action.frame_range)
        for o in bpy.context.scene.objects
        if o.animation_data is not None and o.animation_data.action is not None
    ] or [tuple(a.frame_range) for a in bpy.data.actions]
    if not ranges:
        return bpy.context.scene.frame_current
    lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
    return int(round((lo + hi) / 2))


def pose(bpy, frame: int) -> None:
    bpy.context.scene.frame_set(frame)
    bpy.context.view_layer.update()


def posed_points(bpy) -> dict[str, np.ndarray]:
    """World positions at the current frame, by kind, objects in name order: every
    evaluated mesh vertex, every pose bone's head (in name order), every empty."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    verts, bones, empties = [], [], []
    for obj in sorted(bpy.context.scene.objects, key=lambda o: o.name):
        m = np.array(obj.matrix_world, np.float64)
        if obj.type == "MESH":
            mesh = obj.evaluated_get(depsgraph).to_mesh()
            co = np.empty(len(mesh.vertices) * 3, np.float64)
            mesh.vertices.foreach_get("co", co)
            obj.evaluated_get(depsgraph).to_mesh_clear()
            verts.append(co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3])
        elif obj.type == "ARMATURE":
            # the joints by bone name (a glTF round trip may reorder the bones);
            # a tail is Blender's own, the files store none
            order = np.argsort([b.name for b in obj.pose.bones], kind="stable")
            bones.append(_bone_ends(obj)[order, 0])
        elif obj.type == "EMPTY":
            empties.append(m[None, :3, 3])

    def cat(chunks):
        return np.concatenate(chunks) if chunks else np.empty((0, 3))

    return {"vertices": cat(verts), "bones": cat(bones), "empties": cat(empties)}


def _bone_ends(armature) -> np.ndarray:
    """(bones, 2, 3): each pose bone's head and tail in world space."""
    n = len(armature.pose.bones)
    head, tail = np.empty(n * 3, np.float64), np.empty(n * 3, np.float64)
    armature.pose.bones.foreach_get("head", head)
    armature.pose.bones.foreach_get("tail", tail)
    m = np.array(armature.matrix_world, np.float64)
    ends = np.stack([head.reshape(-1, 3), tail.reshape(-1, 3)], axis=1)
    return ends @ m[:3, :3].T + m[:3, 3]


def _farthest(a: np.ndarray, b: np.ndarray) -> float:
    """The Hausdorff distance of two point sets (chunked, so memory stays small)."""
    if not len(a) or not len(b):
        return 0.0 if len(a) == len(b) else float("inf")

    def one_way(p, q):
        worst = 0.0
        for i in range(0, len(p), 512):
            d = ((p[i : i + 512, None, :] - q[None, :, :]) ** 2).sum(-1).min(axis=1)
            worst = max(worst, float(d.max()))
        return worst**0.5

    return max(one_way(a, b), one_way(b, a))


def difference(a: dict[str, np.ndarray], b: dict[str, np.ndarray], ordered: bool = True) -> str:
    """The largest distance between two posed scenes, kind by kind: vertex to vertex
    where the counts agree and the order is the file's (``ordered``), else the
    farthest point from the other set (a glTF round trip reorders vertices)."""
    parts = []
    for kind in ("vertices", "bones", "empties"):
        p, q = a[kind], b[kind]
        if not len(p) and not len(q):
            continue
        if p.shape == q.shape and (ordered or kind != "vertices"):
            d = float(np.sqrt(((p - q) ** 2).sum(-1)).max())
            parts.append((d, f"{d:.2g} ({kind})"))
        else:
            d = _farthest(p, q)
            counts = f", {len(p)} vs {len(q)} points" if len(p) != len(q) else ""
            parts.append((d, f"{d:.2g} ({kind}{counts})"))
    if not parts:
        return "nothing to compare"
    return "largest difference " + max(parts)[1]


def verdict(files: list[Path], same: list[bool], posed: str) -> str:
    """Byte-identical when every file is, else how many are and the posed difference."""
    if same and all(same):
        return "byte-identical"
    alike = sum(same)
    return (f"{alike} of {len(files)} files byte-identical; " if alike else "") + posed


def round_trip(bl, asset: Asset, exports: Path, tiles: Path) -> Row:
    """Import, export, check, re-import the export and render it posed, with the verdict."""
    bpy = bl.bpy
    row = Row(asset.fmt, asset.files)
    bl.reset()
    state = row.step("import", import_files, bl, asset.files)
    if state is None:
        return row
    outs = row.step("export", export_files, bl, state, asset.files, exports / asset.fmt.lower())
    frame = mid_frame(bpy)
    pose(bpy, frame)
    before = posed_points(bpy)
    if outs is None:
        return row
    same = row.step(
        "check", lambda: [check_export(s, o) for s, o in zip(asset.files, outs, strict=True)]
    )
    bl.reset()
    if row.step("import", import_files, bl, outs) is None:
        return row
    pose(bpy, frame)
    row.verdict = verdict(asset.files, same or [], difference(before, posed_points(bpy)))
    names = " + ".join(p.name for p in asset.files)
    origin = "the corpus" if asset.origin == "corpus" else "RigPort's sample writer"
    label = f"{asset.fmt}: {names}\nfrom {origin}, frame {frame}\nround trip: {row.verdict}"
    row.engine = row.step("render", render_tile, bpy, label, tiles / f"{asset.fmt.lower()}.png")
    return row


def gltf_bridge(bl, asset: Asset, exports: Path, tiles: Path) -> Row:
    """``asset`` (a model and its animation) to .glb with Blender's exporter, back to
    its own format, re-imported and posed; the verdict against the source."""
    bpy = bl.bpy
    folder = exports / "gltf"
    glb = folder / f"{asset.files[0].stem}.glb"
    back = [folder / p.name for p in asset.files]
    row = Row("glTF", [glb, *back])
    bl.reset()
    state = row.step("import", import_files, bl, asset.files, False)
    if state is None:
        return row
    frame = mid_frame(bpy)
    if row.step("export", export_files, bl, state, [glb], folder) is None:
        return row
    pose(bpy, frame)
    before = posed_points(bpy)
    bl.reset()
    state = row.step("import", import_files, bl, [glb])
    if state is None or row.step("export", export_files, bl, state, asset.files, folder) is None:
        return row
    row.step("check", lambda: [batch.check_file(str(p)) for p in back])
    bl.reset()
    if row.step("import", import_files, bl, back, False) is None:
        return row
    pose(bpy, frame)
    row.verdict = difference(before, posed_points(bpy), ordered=False)
    names = " + ".join(p.name for p in asset.files)
    label = f"glTF bridge: {names}\nto {glb.name} and back, frame {frame}\n{row.verdict}"
    row.engine = row.step("render", render_tile, bpy, label, tiles / "gltf.png")
    return row


def _octahedra(ends: np.ndarray, radius: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and triangles of one octahedral bone per (head, tail) pair, as
    Blender draws bones: widest a tenth of the way from the head."""
    head, tail = ends[:, 0], ends[:, 1]
    axis = tail - head
    length = np.linalg.norm(axis, axis=1, keepdims=True)
    axis = axis / np.maximum(length, 1e-12)
    helper = np.where(np.abs(axis[:, 2:3]) < 0.9, [[0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0]])
    u = np.cross(axis, helper)
    u /= np.maximum(np.linalg.norm(u, axis=1, keepdims=True), 1e-12)
    v = np.cross(axis, u)
    mid = head + axis * length * 0.1
    r = radius[:, None]
    ring = [mid + r * u, mid + r * v, mid - r * u, mid - r * v]
    verts = np.stack([head, *ring, tail], axis=1).reshape(-1, 3)
    one = np.array(
        [[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 1], [5, 2, 1], [5, 3, 2], [5, 4, 3], [5, 1, 4]]
    )
    tris = (one[None] + 6 * np.arange(len(ends))[:, None, None]).reshape(-1, 3)
    return verts, tris


def _links(armature) -> np.ndarray:
    """(links, 2, 3): from each posed bone's parent's head to its head, in world space
    (the joints connected, as a skeleton is drawn; a root bone goes to its tail)."""
    ends = _bone_ends(armature)
    index = {b.name: i for i, b in enumerate(armature.pose.bones)}
    parent = np.array(
        [index[b.parent.name] if b.parent else -1 for b in armature.pose.bones], np.int64
    )
    start = np.where(parent[:, None] >= 0, ends[np.maximum(parent, 0), 0], ends[:, 0])
    end = np.where(parent[:, None] >= 0, ends[:, 0], ends[:, 1])
    return np.stack([start, end], axis=1)


def draw_skeleton(bpy, size: float) -> int:
    """One mesh of the current pose's skeleton (each armature's bones joint to joint,
    and each empty's link to its parent empty); the link count."""
    segments = []
    for obj in bpy.context.scene.objects:
        if obj.type == "ARMATURE" and len(obj.pose.bones):
            segments.append(_links(obj))
        elif obj.type == "EMPTY" and obj.parent is not None and obj.parent.type == "EMPTY":
            pair = [
                np.array(obj.parent.matrix_world.translation),
                np.array(obj.matrix_world.translation),
            ]
            segments.append(np.array(pair, np.float64)[None])
    if not segments:
        return 0
    ends = np.concatenate(segments)
    length = np.linalg.norm(ends[:, 1] - ends[:, 0], axis=1)
    keep = length > size * 1e-4
    ends, length = ends[keep], length[keep]
    verts, tris = _octahedra(ends, np.clip(length * 0.12, size * 0.005, size * 0.02))
    mesh = bpy.data.meshes.new("demo_skeleton")
    mesh.vertices.add(len(verts))
    mesh.vertices.foreach_set("co", verts.astype(np.float32).ravel())
    mesh.loops.add(tris.size)
    mesh.loops.foreach_set("vertex_index", tris.astype(np.int32).ravel())
    mesh.polygons.add(len(tris))
    mesh.polygons.foreach_set("loop_start", np.arange(0, tris.size, 3, dtype=np.int32))
    mesh.polygons.foreach_set("loop_total", np.full(len(tris), 3, np.int32))
    mesh.update()
    obj = bpy.data.objects.new("demo_skeleton", mesh)
    bpy.context.scene.collection.objects.link(obj)
    obj.color = SKELETON_COLOUR
    return len(ends)


def _markers(bpy) -> None:
    """Small spheres where an asset has no surface of its own: on the animated
    empties (MRTK joints, camera, gaze) and on the vertices of a mesh without
    faces (a BonesPro structure's points), so that every asset renders."""
    import bmesh

    def sphere(radius: float):
        mesh = bpy.data.meshes.new("demo_marker")
        bm = bmesh.new()
        bmesh.ops.create_icosphere(bm, subdivisions=2, radius=radius)
        bm.to_mesh(mesh)
        bm.free()
        return mesh

    dot = None
    for obj in list(bpy.context.scene.objects):
        if obj.type == "EMPTY" and obj.animation_data is not None:
            dot = dot or sphere(0.012)
            marker = bpy.data.objects.new(f"dot_{obj.name}", dot)
            bpy.context.scene.collection.objects.link(marker)
            marker.parent = obj
        elif obj.type == "MESH" and len(obj.data.vertices) and not len(obj.data.polygons):
            size = max(obj.dimensions) or 1.0
            marker = bpy.data.objects.new(f"dots_{obj.name}", sphere(size * 0.03))
            bpy.context.scene.collection.objects.link(marker)
            marker.parent = obj
            obj.instance_type = "VERTS"  # the sphere on every vertex


def _world_points(bpy):
    """Every evaluated (deformed, instanced) mesh vertex in world space."""

    depsgraph = bpy.context.evaluated_depsgraph_get()
    chunks = []
    for inst in depsgraph.object_instances:
        obj = inst.object
        if obj.type != "MESH":
            continue
        mesh = obj.to_mesh()
        co = np.empty(len(mesh.vertices) * 3, np.float64)
        mesh.vertices.foreach_get("co", co)
        obj.to_mesh_clear()
        m = np.array(inst.matrix_world, np.float64)
        chunks.append(co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3])
    return np.concatenate(chunks) if chunks else np.empty((0, 3))


def render_tile(bpy, label: str, path: Path) -> str:
    """Render what the scene holds with its skeleton (:func:`draw_skeleton`), framed by
    an orthographic camera, with a label; the render engine used."""
    from mathutils import Vector

    scene = bpy.context.scene
    _markers(bpy)
    bpy.context.view_layer.update()
    points = _world_points(bpy)
    if not len(points):
        raise RuntimeError("nothing to render: the import made no geometry")
    lo, hi = Vector(points.min(axis=0)), Vector(points.max(axis=0))
    centre, size = (lo + hi) / 2, max((hi - lo).length, 1e-3)
    for obj in scene.objects:
        obj.color = BODY_COLOUR
        obj.hide_render = obj.hide_get()  # LOD levels after the first
    if not draw_skeleton(bpy, size):
        raise RuntimeError("no skeleton to draw: the import made no armature or joints")
    aspect = TILE[1] / TILE[0]
    cam_data = bpy.data.cameras.new("demo_camera")
    cam_data.type = "ORTHO"
    cam_data.ortho_scale = scale = size * 1.2 / aspect  # the whole diagonal fits the height
    cam_data.shift_y = -0.07  # the asset above the label
    cam_data.clip_end = size * 10
    cam = bpy.data.objects.new("demo_camera", cam_data)
    scene.collection.objects.link(cam)
    direction = Vector((1.0, -1.4, 0.8)).normalized()
    cam.location = centre + direction * size * 3
    cam.rotation_euler = direction.to_track_quat("Z", "Y").to_euler()
    scene.camera = cam
    text = bpy.data.curves.new("demo_label", type="FONT")
    text.body = label
    text.size = scale * 0.03
    label_obj = bpy.data.objects.new("demo_label", text)
    scene.collection.objects.link(label_obj)
    label_obj.parent = cam
    lines = label.count("\n")
    label_obj.location = (-scale * 0.48, -scale * aspect * 0.46 + lines * text.size * 1.2, -size)
    label_obj.color = LABEL_COLOUR
    if scene.world is None:
        scene.world = bpy.data.worlds.new("demo_world")
    scene.world.color = (0.05, 0.06, 0.08)
    r = scene.render
    r.resolution_x, r.resolution_y = TILE
    r.resolution_percentage = 100
    r.image_settings.file_format = "PNG"
    r.image_settings.color_mode = "RGBA"
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "OBJECT"
    # Two passes, the skeleton over the body (as Blender's "In Front" draws it,
    # which a final render does not): the body and label, then the skeleton alone.
    skeleton = bpy.data.objects["demo_skeleton"]
    others = [o for o in scene.objects if o is not skeleton and not o.hide_render]
    body, bones = path.with_suffix(".body.png"), path.with_suffix(".bones.png")
    skeleton.hide_render = True
    engine = _render(bpy, body)
    skeleton.hide_render = False
    for obj in others:
        obj.hide_render = True
    r.film_transparent = True
    _render(bpy, bones, engine)
    _over(bpy, body, bones, path)
    body.unlink()
    bones.unlink()
    return engine


def _render(bpy, path: Path, engine: str | None = None) -> str:
    """Render the scene to ``path`` with Workbench (``engine`` when given), Cycles on
    the CPU where Workbench has no GPU context; the engine used."""
    r = bpy.context.scene.render
    r.filepath = str(path)
    if engine != "Cycles":
        try:
            r.engine = "BLENDER_WORKBENCH"
            bpy.ops.render.render(write_still=True)
            return "Workbench"
        except RuntimeError:
            pass
    r.engine = "CYCLES"
    bpy.context.scene.cycles.device = "CPU"
    bpy.context.scene.cycles.samples = 8
    bpy.ops.render.render(write_still=True)
    return "Cycles"


def _pixels(bpy, path: Path) -> np.ndarray:
    img = bpy.data.images.load(str(path))
    try:
        px = np.empty(len(img.pixels), np.float32)
        img.pixels.foreach_get(px)
        return px.reshape(-1, 4)
    finally:
        bpy.data.images.remove(img)


def _save(bpy, px: np.ndarray, size: tuple[int, int], out: Path) -> None:
    img = bpy.data.images.new(out.stem, size[0], size[1], alpha=False)
    img.pixels.foreach_set(px.ravel())
    img.filepath_raw = str(out)
    img.file_format = "PNG"
    img.save()
    bpy.data.images.remove(img)


def _over(bpy, base: Path, top: Path, out: Path) -> None:
    """``top`` (with alpha) over ``base``, saved as ``out``."""
    below, above = _pixels(bpy, base), _pixels(bpy, top)
    alpha = above[:, 3:4]
    mixed = above * alpha + below * (1 - alpha)
    mixed[:, 3] = 1.0
    _save(bpy, mixed, TILE, out)


def contact_sheet(bpy, tiles: list[Path], out: Path) -> None:
    """The tiles in a grid of COLUMNS, saved as one PNG."""
    w, h = TILE
    rows = (len(tiles) + COLUMNS - 1) // COLUMNS
    sheet = np.zeros((rows * h, COLUMNS * w, 4), np.float32)
    for i, tile in enumerate(tiles):
        px = _pixels(bpy, tile).ravel()
        if i == 0:
            sheet[:] = px[:4]  # the background of the free cells: a corner of the first tile
        r, c = rows - 1 - i // COLUMNS, i % COLUMNS  # Blender's rows start at the bottom
        sheet[r * h : (r + 1) * h, c * w : (c + 1) * w] = px.reshape(h, w, 4)
    _save(bpy, sheet, (COLUMNS * w, rows * h), out)


def _table_stream():
    """stdout for the table alone: Blender logs to file descriptor 1 whenever it
    likes (colour management, renders), so that descriptor goes to stderr."""
    sys.stdout.flush()
    table = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    return table


def main(out_dir: Path) -> int:
    t0 = time.perf_counter()
    table_out = _table_stream()
    exports, tiles_dir = out_dir / "export", out_dir / "tiles"
    for d in (exports, tiles_dir):
        d.mkdir(parents=True, exist_ok=True)
    assets = write_assets(out_dir / "samples")
    bl = batch.blender()
    rows = [round_trip(bl, asset, exports, tiles_dir) for asset in assets]
    rows.append(gltf_bridge(bl, assets[0], exports, tiles_dir))
    tiles = [tiles_dir / f"{r.fmt.lower()}.png" for r in rows if r.steps.get("render") == "ok"]
    sheet = out_dir / "contact_sheet.png"
    if sheet.exists():
        sheet.unlink()
    sheet_error = "no PNG was written"
    if tiles:
        try:
            contact_sheet(bl.bpy, tiles, sheet)
        except Exception as exc:  # reported in the table's FAIL lines
            traceback.print_exc(file=sys.stderr)
            sheet_error = f"{type(exc).__name__}: {exc}"

    header = ("format", "files", "import", "export", "check", "seconds", "verdict")
    table = [header] + [
        (
            r.fmt,
            ",".join(p.name for p in r.files),
            r.steps.get("import", "-"),
            r.steps.get("export", "-"),
            r.steps.get("check", "-"),
            f"{r.seconds:.2f}",
            r.verdict or "-",
        )
        for r in rows
    ]
    widths = [max(len(str(line[i])) for line in table) for i in range(len(header) - 1)]
    for line in table:
        cells = [str(c).ljust(w) for c, w in zip(line[:-1], widths, strict=True)]
        print("  ".join(cells + [line[-1]]).rstrip(), file=table_out)
    failures = [(r.fmt, f) for r in rows for f in r.failures]
    if not sheet.is_file():
        failures.append(("contact sheet", sheet_error))
    for fmt, text in failures:
        print(f"FAIL {fmt}: {text}", file=table_out)
    where = sheet.relative_to(ROOT) if sheet.is_relative_to(ROOT) else sheet
    passed = len(rows) - len({f for f, _ in failures if f in FORMATS})
    engines = ", ".join(sorted({r.engine for r in rows if r.engine})) or "none"
    print(
        f"contact sheet: {where} ({counted(len(tiles), 'tile')}, {engines}, "
        f"bpy {bl.bpy.app.version_string}); {passed} of {len(rows)} formats passed "
        f"in {time.perf_counter() - t0:.1f} s",
        file=table_out,
    )
    table_out.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    code = main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "demo" / "out")
    sys.stdout.flush()
    sys.stderr.flush()
    leave(code)  # the bpy module (4.2) can crash at interpreter exit
