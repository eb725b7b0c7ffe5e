"""RigPort demo: one asset of each format, made by our writers, through Blender and back.

    make demo      (= .venv/bpy50/bin/python demo/run_demo.py [OUT])

For Urho3D, Unigine, RenderWare, MRTK and BonesPro, one sample file built by
the format's own writer (``samples/<format>.py``) is written to
``demo/out/samples/``, imported into an empty Blender file, exported back to
``demo/out/export/`` and checked: the exported file must re-encode byte for
byte, and its codec summary (counts, names, layout) must equal the source's.
Each imported asset is rendered (Workbench; Cycles at a few samples where
Workbench cannot render headless) into one contact sheet,
``demo/out/contact_sheet.png``.

Prints one table (format, file, import, export, check, seconds, detail), a
FAIL line for every step that failed, and exits 1 if any did.
"""

from __future__ import annotations

import os
import runpy
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TILE = (400, 300)
COLUMNS = 3

rigport = runpy.run_path(str(ROOT / "loader.py"))["package"]()
from rigport import batch  # noqa: E402  (the repository's command line)
from rigport.demo import sample_library  # noqa: E402


class Row:
    def __init__(self, fmt: str, path: Path) -> None:
        self.fmt, self.path = fmt, path
        self.steps: dict[str, str] = {}
        self.details: list[str] = []
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


def check_export(src: Path, out: Path) -> str:
    """The exported file re-encodes losslessly and has the source's summary."""
    batch.check_file(str(out))
    fmt = batch.format_of(str(src))
    want = fmt.summary(fmt.read(src.read_bytes()))
    got = fmt.summary(fmt.read(out.read_bytes()))
    differ = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
    if differ:
        raise AssertionError(f"the exported summary differs in {', '.join(differ)}")
    same = "byte-identical" if src.read_bytes() == out.read_bytes() else "same summary"
    return f"{same}, {out.stat().st_size} bytes"


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
    import numpy as np

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
    """Render what the scene holds, framed by an orthographic camera, with a label."""
    from mathutils import Vector

    scene = bpy.context.scene
    _markers(bpy)
    bpy.context.view_layer.update()
    points = _world_points(bpy)
    if not len(points):
        raise RuntimeError("nothing to render: the import made no geometry")
    lo, hi = Vector(points.min(axis=0)), Vector(points.max(axis=0))
    centre, size = (lo + hi) / 2, max((hi - lo).length, 1e-3)
    aspect = TILE[1] / TILE[0]
    cam_data = bpy.data.cameras.new("demo_camera")
    cam_data.type = "ORTHO"
    cam_data.ortho_scale = scale = size * 1.05 / aspect  # the whole diagonal fits the height
    cam_data.clip_end = size * 10
    cam = bpy.data.objects.new("demo_camera", cam_data)
    scene.collection.objects.link(cam)
    direction = Vector((1.0, -1.4, 0.8)).normalized()
    cam.location = centre + direction * size * 3
    cam.rotation_euler = direction.to_track_quat("Z", "Y").to_euler()
    scene.camera = cam
    text = bpy.data.curves.new("demo_label", type="FONT")
    text.body = label
    text.size = scale * 0.045
    label_obj = bpy.data.objects.new("demo_label", text)
    scene.collection.objects.link(label_obj)
    label_obj.parent = cam
    label_obj.location = (-scale * 0.48, -scale * aspect * 0.46, -size)
    if scene.world is None:
        scene.world = bpy.data.worlds.new("demo_world")
    scene.world.color = (0.05, 0.06, 0.08)
    r = scene.render
    r.resolution_x, r.resolution_y = TILE
    r.resolution_percentage = 100
    r.image_settings.file_format = "PNG"
    r.filepath = str(path)
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "RANDOM"
    try:
        r.engine = "BLENDER_WORKBENCH"
        bpy.ops.render.render(write_still=True)
        return "Workbench"
    except RuntimeError:  # no GPU context: Cycles on the CPU renders anywhere
        r.engine = "CYCLES"
        scene.cycles.device = "CPU"
        scene.cycles.samples = 8
        bpy.ops.render.render(write_still=True)
        return "Cycles"


def contact_sheet(bpy, tiles: list[Path], out: Path) -> None:
    """The tiles in a grid of COLUMNS, saved as one PNG."""
    import numpy as np

    w, h = TILE
    rows = (len(tiles) + COLUMNS - 1) // COLUMNS
    sheet = np.zeros((rows * h, COLUMNS * w, 4), np.float32)
    for i, tile in enumerate(tiles):
        img = bpy.data.images.load(str(tile))
        px = np.empty(w * h * 4, np.float32)
        img.pixels.foreach_get(px)
        if i == 0:
            sheet[:] = px[:4]  # the background of the free cells: a corner of the first tile
        r, c = rows - 1 - i // COLUMNS, i % COLUMNS  # Blender's rows start at the bottom
        sheet[r * h : (r + 1) * h, c * w : (c + 1) * w] = px.reshape(h, w, 4)
        bpy.data.images.remove(img)
    img = bpy.data.images.new("contact_sheet", COLUMNS * w, rows * h, alpha=False)
    img.pixels.foreach_set(sheet.ravel())
    img.filepath_raw = str(out)
    img.file_format = "PNG"
    img.save()


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
    samples, exports, tiles_dir = out_dir / "samples", out_dir / "export", out_dir / "tiles"
    for d in (samples, exports, tiles_dir):
        d.mkdir(parents=True, exist_ok=True)
    library = sample_library.write_library(samples, len(sample_library.FORMATS))
    bl = batch.blender()
    rows, tiles, engines = [], [], set()
    for fmt, src in library:
        row = Row(fmt, src)
        rows.append(row)
        out = exports / src.name
        kind = batch.format_of(str(src)).kind
        state: dict = {}
        bl.reset()
        row.details.append(row.step("import", bl.import_file, str(src), state, {}) or "")
        row.step("export", bl.export_file, str(out), state, {}, kind)
        row.details.append(row.step("check", check_export, src, out) or "")
        if row.steps["import"] == "ok":
            tile = tiles_dir / f"{fmt.lower()}.png"
            label = f"{fmt}  {src.name}"
            engine = row.step("render", render_tile, bl.bpy, label, tile)
            if engine:
                engines.add(engine)
                tiles.append(tile)
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

    header = ("format", "file", "import", "export", "check", "seconds", "detail")
    table = [header] + [
        (
            r.fmt,
            r.path.name,
            r.steps.get("import", "-"),
            r.steps.get("export", "-"),
            r.steps.get("check", "-"),
            f"{r.seconds:.2f}",
            "; ".join(d for d in r.details if d),
        )
        for r in rows
    ]
    widths = [max(len(str(line[i])) for line in table[:]) for i in range(len(header) - 1)]
    for line in table:
        cells = [str(c).ljust(w) for c, w in zip(line[:-1], widths, strict=True)]
        print("  ".join(cells + [line[-1]]).rstrip(), file=table_out)
    failures = [(r.fmt, f) for r in rows for f in r.failures]
    if not sheet.is_file():
        failures.append(("contact sheet", sheet_error))
    for fmt, text in failures:
        print(f"FAIL {fmt}: {text}", file=table_out)
    where = sheet.relative_to(ROOT) if sheet.is_relative_to(ROOT) else sheet
    print(
        f"contact sheet: {where} ({len(tiles)} assets, {', '.join(sorted(engines)) or 'none'}, "
        f"bpy {bl.bpy.app.version_string}); {len(rows) - len({f for f, _ in failures})} of "
        f"{len(rows)} formats passed in {time.perf_counter() - t0:.1f} s",
        file=table_out,
    )
    table_out.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    code = main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "demo" / "out")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # the bpy module (4.2) can crash at interpreter exit
