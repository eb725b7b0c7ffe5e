"""An .anim's skeleton header (bones, parents, bind pose) comes back as the file
had it while it holds, even where it is not the armature's: it may list "Nub"
bones the armature lacks and leave out bones it has."""

from __future__ import annotations

import numpy as np

from rigport.io_formats.unigine import anim
from rigport.io_formats.unigine.anim_file_convert import (
    HEADER_KEY,
    export_anim_file,
    import_anim_file,
    kept_header,
)
from rigport.io_formats.unigine.mesh_export import file_order
from rigport.io_formats.unigine.mesh_import import import_mesh
from rigport.samples import unigine as samples
from rigport.samples import unigine_compare as compare


def _armature_skeleton(m):
    return file_order(import_mesh(m, "c").skeleton)


def test_sample_header_is_not_the_mesh_skeleton():
    m = samples.skinned_mesh(animations=0)
    a = samples.nub_anim_file(m)
    header = {b.name for b in a.bones}
    mesh_bones = {b.name for b in m.bones}
    assert header - mesh_bones == {"Bip01 Nub", "Root Nub"}
    assert len(mesh_bones - header) == 1


def test_header_kept_through_the_neutral_scene():
    m = samples.skinned_mesh(animations=0)
    original = samples.nub_anim_file(m)
    data = anim.write(original)
    anims = import_anim_file(anim.read(data), "n.anim", 30.0)
    back = export_anim_file([(a, 30.0) for a in anims], _armature_skeleton(m))
    assert [(b.name, b.parent) for b in back.bones] == [(b.name, b.parent) for b in original.bones]
    assert back.bind.tobytes() == original.bind.tobytes()
    assert np.array_equal(back.animations[0].bones, original.animations[0].bones)
    assert compare.anim_differences(original, back) == []


def test_header_gives_way_when_it_no_longer_holds():
    m = samples.skinned_mesh(animations=0)
    original = samples.nub_anim_file(m)
    anims = import_anim_file(original, "n.anim", 30.0)
    skeleton = _armature_skeleton(m)
    left_out = next(n for n in skeleton.names if n not in {b.name for b in original.bones})
    track = anims[0].tracks[0]
    track.bone = left_out  # keyed on a bone the header does not list
    assert kept_header(anims) is None
    back = export_anim_file([(a, 30.0) for a in anims], skeleton)
    assert [b.name for b in back.bones] == skeleton.names
    other = import_anim_file(samples.anim_file(m), "o.anim", 30.0)
    assert kept_header([anims[0], other[0]]) is None  # two files' clips: two headers
    for bad in ("", "{}", '{"bones":[["a",5]],"bind":""}', None):
        anims[0].extras[HEADER_KEY] = bad
        assert kept_header(anims[:1]) is None
