"""Signalling NaNs keep their bits (issue 26, finding 9, the codec part).

A float32 read into a Python float turns a signalling NaN quiet (0x7FA00001
comes back 0x7FE00001), so a codec's ``write(read(b))`` differs from ``b``.
Every float header field (a float the codecs read one at a time, not as part
of a numpy array) is written here as a signalling NaN by our own writers, and
must come back bit for bit. A sweep puts one at every offset of small samples
of every binary format, so a float field added later is caught too.
"""

from __future__ import annotations

import struct
import warnings

import numpy as np
import pytest

from rigport.io_formats import registry
from rigport.io_formats.mrtk import recording
from rigport.io_formats.mrtk import samples as mrtk_samples
from rigport.io_formats.renderware import anm, dff, ifp, ifp_samples, txd_samples
from rigport.io_formats.renderware import samples as rw_samples
from rigport.io_formats.renderware.chunks import TARGETS
from rigport.io_formats.unigine import anim, mesh
from rigport.io_formats.unigine import samples as ug_samples
from rigport.io_formats.urho3d import ani, mdl, rbfx_samples, shader
from rigport.io_formats.urho3d import samples as urho_samples

SNAN_BITS = 0x7FA00001
SNAN_BYTES = struct.pack("<I", SNAN_BITS)
SNAN = np.frombuffer(SNAN_BYTES, "<f4")[0]
#: Loaded while the test modules are imported: the formats keep the writer they
#: see then, before any fixture wraps ``mdl.write`` in the engine-rules check.
FORMATS = {f.key: f for f in registry.all_formats()}


def _bits(value) -> int:
    assert isinstance(value, np.float32), type(value)
    return int(np.array(value, "<f4").view("<u4"))


def _anm() -> anm.AnmFile:
    tracks = [
        (np.array([0.0, 1.0]), np.tile([1.0, 0, 0, 0], (2, 1)), np.zeros((2, 3))),
        (np.array([0.0, 0.5, 1.0]), np.tile([1.0, 0, 0, 0], (3, 1)), np.ones((3, 3))),
    ]
    return anm.from_tracks(tracks, TARGETS["SA"][2])


def _anm_duration():
    f = _anm()
    f.duration = SNAN
    return "renderware.anm", anm.write(f), lambda g: [g.duration]


def _ani_fields():
    a = rbfx_samples.uan2_animation()
    a.length = SNAN
    a.tracks[1].weight = SNAN
    v = a.variant_tracks
    v[0].tension = v[1].weight = SNAN
    v[2].times = v[2].times.copy()
    v[2].times[1] = SNAN  # a string track's key times are read one at a time

    def fields(b):
        return [b.length, b.tracks[1].weight, b.variant_tracks[0].tension,
                b.variant_tracks[1].weight, b.variant_tracks[2].times[1]]  # fmt: skip

    return "urho3d.ani", ani.write(a), fields


def _mdl_fields():
    m = rbfx_samples.umd3_model()
    m.morphs[1].weight = SNAN
    m.geometries[0].lods[0].distance = SNAN
    bone = next(b for b in m.bones if b.collision_mask & 1)
    bone.radius = SNAN

    def fields(b):
        return [
            b.morphs[1].weight,
            b.geometries[0].lods[0].distance,
            next(x for x in b.bones if x.collision_mask & 1).radius,
        ]

    return "urho3d.mdl", mdl.write(m), fields


def _dff_surfaces():
    f = rw_samples.static_clump("III", atomics=1)
    geo = f.clump.geometries()[0]
    assert geo.surface is not None  # before RW 3.4: the geometry's surface properties
    geo.surface = (np.float32(1.0), SNAN, np.float32(0.5))
    g = rw_samples.static_clump("SA", atomics=1)
    material = g.clump.geometries()[0].material_list.materials[0]
    assert material.surface is not None
    material.surface = (SNAN, np.float32(1.0), np.float32(1.0))
    data = dff.write(f)
    return "renderware.dff", data, lambda b: [b.clump.geometries()[0].surface[1]], dff.write(g)


def _mrtk_marker():
    rec = mrtk_samples.sample_recording(keys=2, markers=2)
    rec.markers[1] = recording.Marker(SNAN, rec.markers[1].name)
    return "mrtk.input", recording.write(rec), lambda b: [b.markers[1].time]


@pytest.mark.parametrize(
    "build", [_anm_duration, _ani_fields, _mdl_fields, _mrtk_marker], ids=lambda f: f.__name__
)
def test_signalling_nan_in_a_float_header_field_keeps_its_bits(build):
    key, data, fields = build()
    fmt = FORMATS[key]
    assert SNAN_BYTES in data  # our writer wrote it as it is
    got = fmt.read(data)
    assert [_bits(v) for v in fields(got)] == [SNAN_BITS] * len(fields(got))
    assert fmt.write(got) == data


def test_signalling_nan_in_renderware_surface_properties_keeps_its_bits():
    key, geometry, fields, material = _dff_surfaces()
    fmt = FORMATS[key]
    for data in (geometry, material):
        assert SNAN_BYTES in data
        assert fmt.write(fmt.read(data)) == data
    assert _bits(fields(fmt.read(geometry))[0]) == SNAN_BITS
    back = fmt.read(material).clump.geometries()[0].material_list.materials[0]
    assert _bits(back.surface[0]) == SNAN_BITS


def test_anm_duration_from_a_hand_made_file():
    """The finding as filed: 0x7FA00001 in the duration of a file built byte by byte."""
    key, data, _ = _anm_duration()
    raw = bytearray(data)
    struct.pack_into("<I", raw, 28, 0x7FA00001)  # chunk header 12, four int32, the duration
    f = anm.read(bytes(raw))
    assert _bits(f.duration) == 0x7FA00001
    assert anm.write(f) == bytes(raw)
    assert np.isnan(FORMATS[key].summary(f)["duration"])


def _small_samples() -> list[tuple[str, bytes]]:
    """One small file per binary format, from our own writers."""
    model = urho_samples.skinned_model(3, (5, 3), morphs=2)
    umd3 = urho_samples.skinned_model(3, (4, 3), morphs=2)
    umd3.magic, umd3.version = b"UMD3", mdl.MORPH_WEIGHT_VERSION
    for morph in umd3.morphs:
        morph.weight = 0.25  # a zero is not a float-like window for the sweep
    skinned = ug_samples.skinned_mesh(2, 3, 4, 1, ("bulge",), 1, 2)
    skeleton = rw_samples.ped_skeleton(3)
    return [
        ("urho3d.mdl", mdl.write(umd3)),
        ("urho3d.mdl", mdl.write(urho_samples.skinned_model(4, (5, 3), legacy=True, lods=2))),
        ("urho3d.ani", ani.write(rbfx_samples.uan2_animation(umd3))),
        ("urho3d.ani", ani.write(urho_samples.walk_animation(model, 3))),
        ("urho3d.shader", shader.write(rbfx_samples.shader_sm3())),
        ("unigine.mesh", mesh.write(skinned)),
        ("unigine.anim", anim.write(ug_samples.anim_file(skinned, n_frames=2))),
        ("renderware.dff", dff.write(rw_samples.static_clump("III", atomics=1))),
        ("renderware.dff", dff.write(rw_samples.skinned_ped(n_bones=4, rings=3, segments=4))),
        ("renderware.anm", anm.write(_anm())),
        ("renderware.ifp", ifp.write(ifp_samples.walk_package("VC", skeleton, frames=2))),
        ("renderware.ifp", ifp.write(ifp_samples.walk_package("SA", skeleton, frames=2))),
        ("renderware.txd", txd_samples.dictionary([("t", "c8888", 4, 4)], levels=1)),
        ("mrtk.input", recording.write(mrtk_samples.sample_recording(keys=2, hands=False))),
    ]


@pytest.mark.urho3d_engine(skip=True)  # mutants the engine would refuse are written back too
def test_a_signalling_nan_anywhere_comes_back_as_it_was():
    """Wherever a signalling NaN lands, a file the reader accepts is written back as
    it was (only the 4-byte windows that hold a float-like value are tried)."""
    tried = 0
    failures = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key, data in _small_samples():
            fmt = FORMATS[key]
            for at in range(len(data) - 3):
                exponent = (data[at + 3] & 0x7F) << 1 | data[at + 2] >> 7
                if not 0 < exponent < 255 or data[at : at + 4] == SNAN_BYTES:
                    continue  # zeros, denormals (small integers) and non-finite values
                mutant = data[:at] + SNAN_BYTES + data[at + 4 :]
                try:
                    obj = fmt.read(mutant)
                except Exception:  # the mutation test holds readers to FormatError
                    continue
                tried += 1
                if fmt.write(obj) != mutant:
                    failures.append(f"{key} ({len(data)} bytes) at offset {at}")
    assert tried > 1000
    assert not failures, failures[:10]
