"""Files that are valid to RigPort's codecs but nasty to Blender, per format.

Each is one of the project's own sample files (``samples/<format>.py``)
changed in its native form and written with the format's own writer:
degenerate and duplicate triangles, NaN/Inf everywhere, zero normals,
self-parented and looping bones, weights above 1 or negative, empty
geometries, huge bone indices, non-UTF-8 names, duplicate tracks, singular
matrices, and the other causes of issue 11 ("Hostile input", "Exceptions
through Blender"). The crash test (``tests/blender/test_crash.py``) imports
every one in a child process.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rigport.io_formats.bonespro import animation as bp_anim
from rigport.io_formats.bonespro import structure as bp_structure
from rigport.io_formats.mrtk import recording as mrtk_recording
from rigport.io_formats.renderware import dff
from rigport.io_formats.renderware.frames import FrameName
from rigport.io_formats.unigine import anim as ug_anim
from rigport.io_formats.unigine import mesh as ug_mesh
from rigport.io_formats.urho3d import ani, mdl, package
from rigport.samples import bonespro as bp_samples
from rigport.samples import mrtk as mrtk_samples
from rigport.samples import renderware as rw_samples
from rigport.samples import unigine as ug_samples
from rigport.samples import urho3d as u3_samples

NAN, INF = float("nan"), float("inf")
#: A name whose bytes are not UTF-8 (the codecs keep them as surrogate escapes).
BAD_NAME = b"bone\xff\xfe\xe9".decode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class Case:
    """One nasty file: ``kind`` picks the importer (see ``IMPORTERS``)."""

    name: str
    kind: str
    make: Callable[[], bytes]
    #: Why a codec (not Blender code) fails on it, for a case expected to fail.
    xfail: str | None = None

    @property
    def filename(self) -> str:
        return f"{self.name}.{EXTENSIONS[self.kind]}"


EXTENSIONS = {
    "urho3d_mdl": "mdl",
    "urho3d_ani": "ani",
    "urho3d_pak": "pak",
    "unigine_mesh": "mesh",
    "unigine_anim": "anim",
    "rw_dff": "dff",
    "mrtk_bin": "bin",
    "bonespro_structure": "txt",
    "bonespro_anim": "txt",
}

#: The import operator (``bpy.ops`` path) of each kind.
IMPORTERS = {
    "urho3d_mdl": "import_scene.urho3d_mdl",
    "urho3d_ani": "import_anim.urho3d_ani",
    "urho3d_pak": "import_scene.urho3d_package",
    "unigine_mesh": "import_scene.unigine_mesh",
    "unigine_anim": "import_anim.unigine_anim",
    "rw_dff": "import_scene.rw_dff",
    "mrtk_bin": "import_anim.mrtk_input",
    "bonespro_structure": "import_scene.bonespro_structure",
    "bonespro_anim": "import_anim.bonespro_anim",
}


# --- Urho3D ----------------------------------------------------------------------


def urho3d_host() -> mdl.Model:
    """The small skinned model the Urho3D cases start from (and the host armature
    their animations go onto)."""
    return u3_samples.skinned_model(n_bones=4, grid=(8, 6), morphs=1)


def _model(change: Callable[[mdl.Model], None]) -> Callable[[], bytes]:
    def make() -> bytes:
        m = urho3d_host()
        change(m)
        return mdl.write(m)

    return make


def _tris(m: mdl.Model) -> np.ndarray:
    return m.index_buffers[0].indices.reshape(-1, 3)


def _degenerate(m: mdl.Model) -> None:  # like the stock editor gizmo models: 24 of the triangles
    t = _tris(m)
    t[::4, 1] = t[::4, 0]
    t[1::8, 2] = t[1::8, 0]
    t[2::8] = t[2::8, :1]


def _duplicates(m: mdl.Model) -> None:
    t = _tris(m)
    t[1::3] = t[0::3][: len(t[1::3])]
    t[2::5] = t[0::5, ::-1][: len(t[2::5])]  # the same face turned round


def _field(m: mdl.Model, prefix: str) -> np.ndarray:
    vb = m.vertex_buffers[0].data
    return vb[next(f for f in vb.dtype.names if f.startswith(prefix))]


def _nan_everywhere(m: mdl.Model) -> None:
    for prefix, value in (("position", NAN), ("normal", INF), ("texcoord", NAN), ("tangent", NAN)):
        f = _field(m, prefix)
        f[::3] = value
    _field(m, "blendweights")[::2] = NAN
    for b in m.bones:
        b.position[:] = NAN
    m.bbox_min[:] = -INF
    for morph in m.morphs:
        for buf in morph.buffers:
            for name in buf.data.dtype.names[1:]:
                buf.data[name][::2] = NAN


def _zero_normals(m: mdl.Model) -> None:
    _field(m, "normal")[:] = 0


def _weights(m: mdl.Model) -> None:
    w = _field(m, "blendweights")
    w[0::3] = 7.5
    w[1::3] = -2.0


def _huge_bone_indices(m: mdl.Model) -> None:
    _field(m, "blendindices")[::2] = 250


def _looping_bones(m: mdl.Model) -> None:
    m.bones[1].parent, m.bones[2].parent = 2, 1
    m.bones[3].parent = 3  # a second root (Urho3D roots are their own parent)


def _self_parent_chain(m: mdl.Model) -> None:
    for i, b in enumerate(m.bones):
        b.parent = (i + 1) % len(m.bones)  # one loop through every bone


def _singular_offsets(m: mdl.Model) -> None:
    for b in m.bones:
        b.offset_matrix[:] = 0
        b.scale[:] = 0


def _bad_names(m: mdl.Model) -> None:
    for b in m.bones:
        b.name = BAD_NAME + b.name
    for morph in m.morphs:
        morph.name = BAD_NAME


def _empty_geometry(m: mdl.Model) -> None:
    for lod in m.geometries[0].lods:
        lod.index_count = 0


def _out_of_range(m: mdl.Model) -> None:
    _tris(m)[3] = (0, 1, m.vertex_buffers[0].count + 5)


def _everything(m: mdl.Model) -> None:
    for change in (_degenerate, _nan_everywhere, _weights, _looping_bones, _bad_names):
        change(m)


def _gizmo() -> bytes:
    """168 triangles, 24 with a repeated vertex, a static model (as the gizmos are)."""
    m = u3_samples.skinned_model(n_bones=1, grid=(8, 6), morphs=0, uv_sets=1, color=False)
    t = _tris(m)[:168]
    t[::7, 2] = t[::7, 1]
    m.index_buffers[0].indices = np.ascontiguousarray(t.ravel())
    for lod in m.geometries[0].lods:
        lod.index_count = min(lod.index_count, len(t) * 3)
    return mdl.write(m)


def _animation(change: Callable[[ani.Animation], None]) -> Callable[[], bytes]:
    def make() -> bytes:
        a = u3_samples.walk_animation(urho3d_host())
        change(a)
        return ani.write(a)

    return make


def _ani_nan(a: ani.Animation) -> None:
    for t in a.tracks:
        for name in t.keys.dtype.names:
            t.keys[name][1::3] = NAN
        t.keys["time"][2::5] = INF
    a.length = NAN


def _ani_duplicate_tracks(a: ani.Animation) -> None:
    a.tracks = a.tracks + [copy.deepcopy(t) for t in a.tracks]


def _ani_bad_names(a: ani.Animation) -> None:
    a.name = BAD_NAME
    a.tracks[0].name = BAD_NAME


def _ani_zero_rotations(a: ani.Animation) -> None:
    for t in a.tracks:
        if "rotation" in t.keys.dtype.names:
            t.keys["rotation"][:] = 0


def _ani_empty_tracks(a: ani.Animation) -> None:
    for t in a.tracks:
        t.keys = t.keys[:0]


def _ani_signalling_nan(a: ani.Animation) -> None:
    a.length = float(np.array(0x7FA00000, np.uint32).view(np.float32))
    a.tracks[0].weight = a.length


def _ani_no_bone(a: ani.Animation) -> None:
    for t in a.tracks:
        t.name = "NotABone"


def _ani_unsorted(a: ani.Animation) -> None:
    for t in a.tracks:
        t.keys["time"][:] = t.keys["time"][::-1].copy()
        t.keys["time"][1] = t.keys["time"][0]


def _pak(members: list[tuple[str, bytes]]) -> Callable[[], bytes]:
    def make() -> bytes:
        pkg = package.new_package()
        for name, data in members:
            pkg.put(name, data)
        return package.write(pkg)

    return make


def urho3d_cases() -> list[Case]:
    models = [
        ("degenerate_triangles", _degenerate),
        ("duplicate_triangles", _duplicates),
        ("nan_inf_everywhere", _nan_everywhere),
        ("zero_normals", _zero_normals),
        ("weights_above_1_and_negative", _weights),
        ("huge_bone_indices", _huge_bone_indices),
        ("looping_bones", _looping_bones),
        ("one_bone_loop", _self_parent_chain),
        ("zero_offset_matrices", _singular_offsets),
        ("non_utf8_names", _bad_names),
        ("empty_geometry", _empty_geometry),
        ("index_out_of_range", _out_of_range),
        ("everything", _everything),
    ]
    cases = [Case(f"mdl_{n}", "urho3d_mdl", _model(f)) for n, f in models]
    cases.append(Case("mdl_gizmo_like", "urho3d_mdl", _gizmo))
    anims = [
        ("nan_inf_keys", _ani_nan),
        ("duplicate_tracks", _ani_duplicate_tracks),
        ("non_utf8_names", _ani_bad_names),
        ("zero_rotations", _ani_zero_rotations),
        ("empty_tracks", _ani_empty_tracks),
        ("unsorted_times", _ani_unsorted),
        ("signalling_nan_length", _ani_signalling_nan),
        ("tracks_for_no_bone", _ani_no_bone),
    ]
    cases += [Case(f"ani_{n}", "urho3d_ani", _animation(f)) for n, f in anims]
    cases.append(
        Case(
            "pak_nasty_members",
            "urho3d_pak",
            _pak(
                [
                    (f"Models/{BAD_NAME}.mdl", _model(_bad_names)()),
                    ("Models/Everything.mdl", _model(_nan_everywhere)()),
                    ("Models/Gizmo.mdl", _gizmo()),
                    (f"Anims/{BAD_NAME}.ani", _animation(_ani_duplicate_tracks)()),
                    ("Anims/Nan.ani", _animation(_ani_nan)()),
                ]
            ),
        )
    )
    return cases


# --- Unigine ---------------------------------------------------------------------


def unigine_host() -> ug_mesh.Mesh:
    return ug_samples.skinned_mesh(n_bones=4, rings=4, segments=6, surfaces=2, animations=1)


def _mesh(change: Callable[[ug_mesh.Mesh], None]) -> Callable[[], bytes]:
    def make() -> bytes:
        m = unigine_host()
        change(m)
        return ug_mesh.write(m)

    return make


def _ug_degenerate(m: ug_mesh.Mesh) -> None:
    s = m.surfaces[0]
    c = s.coords.reshape(-1, 3)
    t = s.tris.reshape(-1, 3)
    c[::3, 1] = c[::3, 0]
    t[::3, 1] = t[::3, 0]
    c[1::4] = c[0::4][: len(c[1::4])]
    t[1::4] = t[0::4][: len(t[1::4])]


def _ug_nan(m: ug_mesh.Mesh) -> None:
    for s in m.surfaces:
        for target in s.targets:
            target.positions[::2] = NAN
        s.uv0[::3] = INF
    m.bind[:, :3] = NAN


def _ug_zero_bind(m: ug_mesh.Mesh) -> None:
    m.bind[:] = 0


def _ug_bones(m: ug_mesh.Mesh) -> None:
    m.bones[0].parent = 0
    if len(m.bones) > 2:
        m.bones[1].parent, m.bones[2].parent = 2, 1
    m.bones[-1].name = BAD_NAME


def _ug_names(m: ug_mesh.Mesh) -> None:
    for s in m.surfaces:
        s.name = BAD_NAME
    for b in m.bones:
        b.name = BAD_NAME + b.name
    for a in m.animations:
        a.name = BAD_NAME


def _ug_empty(m: ug_mesh.Mesh) -> None:
    s = m.surfaces[0]
    s.coords = s.coords[:0]
    s.tris = s.tris[:0]


def _ug_weights(m: ug_mesh.Mesh) -> None:
    w = m.surfaces[0].weights
    w.bones[::2] = 32000  # far beyond the skeleton
    w.values[1::3] = 65535


def _anim(change: Callable[[ug_anim.AnimFile], None]) -> Callable[[], bytes]:
    def make() -> bytes:
        a = ug_samples.anim_file(unigine_host(), n_frames=6, clips=1)
        change(a)
        return ug_anim.write(a)

    return make


def _ug_anim_nan(a: ug_anim.AnimFile) -> None:
    for c in a.animations:
        c.translation_min[:] = NAN
        c.scale_size[:] = INF
        c.frames.rotation[...] = 0


def _ug_anim_duplicate(a: ug_anim.AnimFile) -> None:
    for c in a.animations:
        c.bones[:] = c.bones[0]


def _ug_anim_bind(a: ug_anim.AnimFile) -> None:
    a.bind[:] = 0
    a.bones[0].name = BAD_NAME


def unigine_cases() -> list[Case]:
    meshes = [
        ("degenerate_and_duplicate_triangles", _ug_degenerate),
        ("nan_inf", _ug_nan),
        ("zero_bind_pose", _ug_zero_bind),
        ("self_parent_and_looping_bones", _ug_bones),
        ("non_utf8_names", _ug_names),
        ("empty_surface", _ug_empty),
        ("weights_huge_bones_and_above_1", _ug_weights),
    ]
    cases = [Case(f"mesh_{n}", "unigine_mesh", _mesh(f)) for n, f in meshes]
    anims = [
        ("nan_inf_boxes_zero_rotations", _ug_anim_nan),
        ("one_bone_many_tracks", _ug_anim_duplicate),
        ("zero_bind_non_utf8", _ug_anim_bind),
    ]
    cases += [Case(f"anim_{n}", "unigine_anim", _anim(f)) for n, f in anims]
    return cases


# --- RenderWare ------------------------------------------------------------------


def _clump(change: Callable[[dff.DffFile], None]) -> Callable[[], bytes]:
    def make() -> bytes:
        d = rw_samples.skinned_ped(n_bones=6, rings=4, segments=6)
        change(d)
        return dff.write(d)

    return make


def _geo(d: dff.DffFile):
    return d.clump.geometries()[0]


def _rw_degenerate(d: dff.DffFile) -> None:
    t = _geo(d).triangles
    t[::3, 1] = t[::3, 0]
    t[1::4] = t[0::4][: len(t[1::4])]


def _rw_nan(d: dff.DffFile) -> None:
    g = _geo(d)
    for mt in g.morph_targets:
        if mt.positions is not None:
            mt.positions[::2] = NAN
        if mt.normals is not None:
            mt.normals[1::2] = 0
        mt.sphere[:] = INF
    for uv in g.uvs:
        uv[::3] = NAN


def _rw_skin(d: dff.DffFile) -> None:
    skin = _geo(d).skin
    skin.weights[::2] = NAN
    skin.weights[1::3] = -3.0
    skin.weights[2::5] = 9.0


def _rw_singular(d: dff.DffFile) -> None:
    _geo(d).skin.matrices[:] = 0  # singular inverse bind matrices


def _rw_huge_bones(d: dff.DffFile) -> None:
    _geo(d).skin.indices[::3] = 255


def _rw_flags(d: dff.DffFile) -> None:
    for a in d.clump.atomics:
        # read back as 2**32 - 1 (the reader takes a uint32; the writer packs an int32)
        a.flags = -1


def _rw_names(d: dff.DffFile) -> None:
    frames = d.clump.frame_list
    for i, ext in enumerate(frames.extensions):
        plugin = ext.find(FrameName)
        if plugin is not None:
            plugin.raw = b"frame\xff\xfe" + bytes([i])


def rw_cases() -> list[Case]:
    changes = [
        ("degenerate_and_duplicate_triangles", _rw_degenerate),
        ("nan_inf_zero_normals", _rw_nan),
        ("skin_nan_negative_above_1", _rw_skin),
        ("skin_singular_matrices", _rw_singular),
        ("skin_huge_bone_indices", _rw_huge_bones),
        ("atomic_flags_2_32", _rw_flags),
        ("non_utf8_frame_names", _rw_names),
    ]
    return [Case(f"dff_{n}", "rw_dff", _clump(f)) for n, f in changes]


# --- MRTK ------------------------------------------------------------------------


def _recording(change: Callable[[mrtk_recording.Recording], None]) -> Callable[[], bytes]:
    def make() -> bytes:
        r = mrtk_samples.sample_recording(keys=6)
        change(r)
        return mrtk_recording.write(r)

    return make


def _mrtk_curves(r: mrtk_recording.Recording):
    yield from r.camera or []
    yield from r.gaze or []
    if r.hands is not None:
        for joint in r.hands.left + r.hands.right:
            yield from joint


def _mrtk_nan(r: mrtk_recording.Recording) -> None:
    for c in _mrtk_curves(r):
        for name in c.keys.dtype.names:
            if c.keys.dtype[name].kind == "f":
                c.keys[name][1::2] = NAN
        c.keys[c.keys.dtype.names[0]][2::3] = INF
    r.markers = [mrtk_recording.Marker(INF, "inf"), mrtk_recording.Marker(-1.0, "before")]


def _mrtk_nan_values(r: mrtk_recording.Recording) -> None:
    for c in _mrtk_curves(r):
        for name in c.keys.dtype.names[1:]:  # every field but the time
            if c.keys.dtype[name].kind == "f":
                c.keys[name][1::2] = NAN
                c.keys[name][2::3] = -INF


def _mrtk_marker_times(r: mrtk_recording.Recording) -> None:
    r.markers = [
        mrtk_recording.Marker(NAN, "nan"),
        mrtk_recording.Marker(INF, "inf"),
        mrtk_recording.Marker(-3e38, "huge"),
    ]


def _mrtk_names(r: mrtk_recording.Recording) -> None:
    r.markers = [mrtk_recording.Marker(0.5, BAD_NAME), mrtk_recording.Marker(1.0, "a\0b")]


def _mrtk_empty(r: mrtk_recording.Recording) -> None:
    for c in _mrtk_curves(r):
        c.keys = c.keys[:0]


def _mrtk_unsorted(r: mrtk_recording.Recording) -> None:
    for c in _mrtk_curves(r):
        t = c.keys.dtype.names[0]
        c.keys[t][:] = 1.0  # every key at one time


def mrtk_cases() -> list[Case]:
    changes = [
        ("nan_inf_keys_and_markers", _mrtk_nan),
        ("non_utf8_marker_names", _mrtk_names),
        ("nan_inf_marker_times", _mrtk_marker_times),
        ("nan_inf_values", _mrtk_nan_values),
        ("empty_curves", _mrtk_empty),
        ("keys_at_one_time", _mrtk_unsorted),
    ]
    return [Case(f"bin_{n}", "mrtk_bin", _recording(f)) for n, f in changes]


# --- BonesPro --------------------------------------------------------------------


def bonespro_host() -> bp_structure.Structure:
    return bp_samples.structure(n_vertices=12)


def _structure(change: Callable[[bp_structure.Structure], None]) -> Callable[[], bytes]:
    def make() -> bytes:
        s = bonespro_host()
        change(s)
        return bp_structure.write(s)

    return make


def _bp_zero(s: bp_structure.Structure) -> None:
    s.bone_transforms[:] = 0
    s.node_transforms[1:] = 0


def _bp_nan(s: bp_structure.Structure) -> None:
    s.positions[::2] = NAN
    s.weights[::3] = INF
    s.weights[1::3] = -1.0
    s.bone_transforms[1, 3] = NAN


def _bp_bones(s: bp_structure.Structure) -> None:
    s.parents[1] = 1
    s.parents[2], s.parents[3] = 3, 2
    s.names[0] = "BADNAME"


def _bp_bad_bytes(make: Callable[[], bytes]) -> Callable[[], bytes]:
    """The text with a name whose bytes are not UTF-8 (a Windows code page)."""
    return lambda: make().replace(b"BADNAME", b"bone\xff\xe9")


def _bp_huge(s: bp_structure.Structure) -> None:
    s.weight_bones[::2] = 10**6


def _bp_anim(change: Callable[[bp_anim.Animation], None]) -> Callable[[], bytes]:
    def make() -> bytes:
        a = bp_samples.animation(bonespro_host(), n_frames=4)
        change(a)
        return bp_anim.write(a)

    return make


def _bp_anim_zero(a: bp_anim.Animation) -> None:
    if a.bone_values is not None:
        a.bone_values[...] = 0


def _bp_anim_nan(a: bp_anim.Animation) -> None:
    if a.bone_values is not None:
        a.bone_values[1::2] = NAN
    if a.node_values is not None:
        a.node_values[::2] = INF


def _bp_huge_frame_count() -> bytes:
    """A frame count of 10**30 and no frames (issue 11: ValueError in the codec)."""
    lines = bp_anim.write(bp_samples.animation(bonespro_host(), n_frames=2)).split(b"\n")
    lines[2] = b"1" + b"0" * 30
    return b"\n".join(lines[:11]) + b"\n"


def _bp_mesh_absolute() -> bytes:
    """A Mesh (absolute) animation of 1000 frames (its import was quadratic in frames)."""
    a = bp_samples.animation(bonespro_host(), mode=bp_anim.MESH_ABSOLUTE, n_frames=1000)
    return bp_anim.write(a)


def bonespro_cases() -> list[Case]:
    structures = [
        (
            "zero_transforms",
            _bp_zero,
            "io_formats/bonespro/convert.py structure_to_scene "
            "inverts the bone transforms with np.linalg.inv: LinAlgError on zero ones (codec side)",
        ),
        ("nan_inf_weights_negative", _bp_nan, None),
        ("self_parent_looping_non_utf8", _bp_bones, None),
        ("huge_bone_indices", _bp_huge, None),
    ]
    cases = [
        Case(f"structure_{n}", "bonespro_structure", _bp_bad_bytes(_structure(f)), why)
        for n, f, why in structures
    ]
    anims = [("zero_transforms", _bp_anim_zero), ("nan_inf", _bp_anim_nan)]
    cases += [Case(f"anim_{n}", "bonespro_anim", _bp_anim(f)) for n, f in anims]
    cases.append(Case("anim_frame_count_1e30", "bonespro_anim", _bp_huge_frame_count))
    cases.append(Case("anim_mesh_absolute_1000_frames", "bonespro_anim", _bp_mesh_absolute))
    return cases


#: Every case per format family (the crash test runs one child process per family).
FAMILIES: dict[str, Callable[[], list[Case]]] = {
    "urho3d": urho3d_cases,
    "unigine": unigine_cases,
    "renderware": rw_cases,
    "mrtk": mrtk_cases,
    "bonespro": bonespro_cases,
}
