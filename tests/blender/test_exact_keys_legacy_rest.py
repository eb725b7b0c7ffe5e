"""Records saved by builds before exact-keys version 3: their tracks were hashed
as rebuilt with the LAPACK rest (``rest_relative(legacy=True)``), whose last
bits differ from today's; an export rebuilds such an action with that rest, so
its unedited tracks still come back byte for byte."""

from __future__ import annotations

import numpy as np

from rigport.io_formats import exact_keys as codec
from rigport.io_formats.urho3d import ani, animation_convert
from rigport.tests.legacy_records import as_version, encode_text


def _import_as_an_older_build(bpy, tmp_path, corpus_dir, monkeypatch, version: int = 2):
    """Jack_Walk.ani imported as a build of record ``version`` did it: keyed (for
    versions 1 and 2 with the LAPACK rest), its residues against the tracks read
    back from Blender kept in that version's text record (tests/legacy_records.py).
    Returns the armature and the file's bytes."""
    from rigport.operators.blender import build
    from rigport.operators.blender import exact_keys as blender_exact_keys
    from rigport.operators.blender.extract import read_key_coords, tracks_from_coords

    (tmp_path / "m.mdl").write_bytes((corpus_dir / "urho3d" / "Jack.mdl").read_bytes())
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(tmp_path / "m.mdl")) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    data = (corpus_dir / "urho3d" / "Jack_Walk.ani").read_bytes()
    (tmp_path / "a.ani").write_bytes(data)
    legacy = version in codec.LEGACY_REST
    new_rest = build.rest_relative
    with monkeypatch.context() as m:
        m.setattr(build, "rest_relative", lambda a, legacy=False: new_rest(a, legacy=legacy))
        assert bpy.ops.import_anim.urho3d_ani(filepath=str(tmp_path / "a.ani")) == {"FINISHED"}
    action = arm.animation_data.action
    assert isinstance(action[blender_exact_keys.PROP], bytes)  # today's record: version 4
    rels = new_rest(arm.data, legacy=legacy)
    rebuilt = {
        t.bone: t
        for t in tracks_from_coords(
            arm, read_key_coords(action, rels), rels, float(action["rigport_fps"])
        )
    }
    anim = animation_convert.import_animation(ani.read(data))
    older = []
    for track in anim.tracks:
        k = as_version(codec.residue(track, rebuilt[track.bone]), version)
        if version < 3:  # an all-zero XOR where version 3 names the channel rounded
            for name in k.rounded:
                k.xor[name] = np.zeros(np.shape(getattr(rebuilt[track.bone], name)), np.uint32)
            k.rounded = []
        older.append(k)
    assert any(k.xor for k in older)
    action[blender_exact_keys.PROP] = encode_text(older)
    assert all(k.version == version for k in blender_exact_keys.record(action))
    return arm, data


def _rests_differ(arm) -> bool:
    from rigport.operators.blender.build import rest_relative

    new, old = rest_relative(arm.data), rest_relative(arm.data, legacy=True)
    assert new.keys() == old.keys()
    for name in new:
        for a, b in zip(new[name], old[name], strict=True):
            assert np.allclose(a, b, rtol=1e-5, atol=1e-5), name  # one rest, to float32
    return any(
        a.tobytes() != b.tobytes()
        for name in new
        for a, b in zip(new[name], old[name], strict=True)
    )


def test_version_2_record_with_the_lapack_rest_exports_byte_for_byte(
    blank_blend, tmp_path, corpus_dir, monkeypatch
):
    bpy = blank_blend
    arm, data = _import_as_an_older_build(bpy, tmp_path, corpus_dir, monkeypatch)
    assert _rests_differ(arm)  # else this test would not tell the two rests apart
    out = tmp_path / "out.ani"
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() == data


def test_the_same_record_read_with_todays_rest_is_not_exact(
    blank_blend, tmp_path, corpus_dir, monkeypatch
):
    """What the legacy rest is for: read with today's rest, the version-2 record's
    digests see edits, and Blender's keys (within float32) are written."""
    bpy = blank_blend
    from rigport.operators.blender import exact_keys as blender_exact_keys

    arm, data = _import_as_an_older_build(bpy, tmp_path, corpus_dir, monkeypatch)
    monkeypatch.setattr(blender_exact_keys, "legacy_rest", lambda kept: False)
    out = tmp_path / "out.ani"
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out)) == {"FINISHED"}
    assert out.read_bytes() != data
    a, b = ani.read(data), ani.read(out.read_bytes())
    for x, y in zip(a.tracks, b.tracks, strict=True):
        assert x.name == y.name and x.mask == y.mask
        assert np.allclose(x.keys["time"], y.keys["time"], atol=1e-6)


def test_version_3_record_exports_byte_for_byte(blank_blend, tmp_path, corpus_dir, monkeypatch):
    """A version 3 record (residues against the rebuilt tracks, today's rest, text)
    of a .blend saved before version 4 still gives the file back byte for byte."""
    bpy = blank_blend
    _import_as_an_older_build(bpy, tmp_path, corpus_dir, monkeypatch, version=3)
    out = tmp_path / "out.ani"
    assert bpy.ops.export_anim.urho3d_ani(filepath=str(out)) == {"FINISHED"}
    data = (corpus_dir / "urho3d" / "Jack_Walk.ani").read_bytes()
    assert out.read_bytes() == data
