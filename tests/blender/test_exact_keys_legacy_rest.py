"""Records saved by builds before exact-keys version 3: their tracks were hashed
as rebuilt with the LAPACK rest (``rest_relative(legacy=True)``), whose last
bits differ from today's; an export rebuilds such an action with that rest, so
its unedited tracks still come back byte for byte."""

from __future__ import annotations

import numpy as np

from rigport.io_formats import exact_keys as codec
from rigport.io_formats.urho3d import ani


def _import_as_an_older_build(bpy, tmp_path, corpus_dir, monkeypatch):
    """Jack_Walk.ani imported as a version-2 build did it: keyed and recorded with
    the LAPACK rest, the record marked version 2. Returns the armature and the
    file's bytes."""
    from rigport.operators.blender import build
    from rigport.operators.blender import exact_keys as blender_exact_keys

    (tmp_path / "m.mdl").write_bytes((corpus_dir / "urho3d" / "Jack.mdl").read_bytes())
    assert bpy.ops.import_scene.urho3d_mdl(filepath=str(tmp_path / "m.mdl")) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    data = (corpus_dir / "urho3d" / "Jack_Walk.ani").read_bytes()
    (tmp_path / "a.ani").write_bytes(data)
    new_rest = build.rest_relative
    rebuilt = {}
    residue = codec.residue

    def spy(original, made, settle=None):
        rebuilt[made.bone] = made
        return residue(original, made, settle)

    with monkeypatch.context() as m:
        m.setattr(build, "rest_relative", lambda a, legacy=False: new_rest(a, legacy=True))
        m.setattr(codec, "residue", spy)
        assert bpy.ops.import_anim.urho3d_ani(filepath=str(tmp_path / "a.ani")) == {"FINISHED"}
    action = arm.animation_data.action
    kept = codec.decode(action[blender_exact_keys.PROP])
    assert kept and all(k.version == codec.VERSION == 3 for k in kept)
    assert any(k.rounded for k in kept)
    older = []
    for k in kept:  # SHA-256 digests alike: the rest they hash and the zero XORs differ
        xor = dict(k.xor)
        for name in k.rounded:
            xor[name] = np.zeros(np.shape(getattr(rebuilt[k.bone], name)), np.uint32)
        older.append(codec.KeptTrack(k.bone, k.digests, xor, k.whole, version=2))
    action[blender_exact_keys.PROP] = codec.encode(older)
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
