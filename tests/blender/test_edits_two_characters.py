"""Two characters of one rig in a scene (their bone names are the same): "All
Actions" of one exports its own actions only, found from its armature or its mesh
as the active object, and the export says which it wrote."""

from __future__ import annotations

import pytest

from rigport.io_formats.renderware import ifp
from rigport.io_formats.unigine import mesh
from rigport.samples import unigine as samples


def _character(bpy, tmp_path, name: str, clips: int):
    """Import a Unigine character whose embedded clips are ``<name>_<k>``; its
    armature and mesh."""
    m = samples.skinned_mesh(animations=clips)
    for k, a in enumerate(m.animations):
        a.name = f"{name}_{k}"
    path = tmp_path / f"{name}.mesh"
    path.write_bytes(mesh.write(m))
    before = set(bpy.data.objects)
    assert bpy.ops.import_scene.unigine_mesh(filepath=str(path)) == {"FINISHED"}
    new = [o for o in bpy.data.objects if o not in before]
    arm = next(o for o in new if o.type == "ARMATURE")
    body = next(o for o in new if o.type == "MESH")
    arm.name, body.name = f"{name}_rig", f"{name}_body"
    return arm, body


@pytest.fixture
def two(blank_blend, tmp_path):
    bpy = blank_blend
    hero = _character(bpy, tmp_path, "hero", 2)
    villain = _character(bpy, tmp_path, "villain", 3)
    assert {b.name for b in hero[0].data.bones} == {b.name for b in villain[0].data.bones}
    return bpy, hero, villain


def _activate(bpy, obj) -> None:
    for o in bpy.context.view_layer.objects:
        o.select_set(o == obj)
    bpy.context.view_layer.objects.active = obj


#: Exporters of one animation per file: (operator, extension).
ONE_PER_FILE = (
    ("urho3d_ani", ".ani"),
    ("unigine_anim", ".anim"),
    ("rw_anm", ".anm"),
    ("bonespro_anim", ".txt"),
)


@pytest.mark.parametrize("active", ["armature", "mesh"])
@pytest.mark.parametrize(("idname", "ext"), ONE_PER_FILE)
def test_all_actions_are_the_characters_own(two, tmp_path, idname, ext, active):
    bpy, hero, villain = two
    for (arm, body), own in (
        (hero, ["hero_0", "hero_1"]),
        (villain, ["villain_0", "villain_1", "villain_2"]),
    ):
        out = tmp_path / f"{arm.name}_{idname}"
        out.mkdir()
        _activate(bpy, arm if active == "armature" else body)
        op = getattr(bpy.ops.export_anim, idname)
        assert op(filepath=str(out / f"x{ext}"), export_animations="ACTIONS") == {"FINISHED"}
        assert sorted(p.name for p in out.iterdir()) == [f"x_{n}{ext}" for n in own]


@pytest.mark.parametrize("active", ["armature", "mesh"])
def test_ifp_holds_the_characters_own_clips(two, tmp_path, active):
    bpy, hero, _ = two
    _activate(bpy, hero[0] if active == "armature" else hero[1])
    out = tmp_path / "hero.ifp"
    assert bpy.ops.export_anim.gta_ifp(filepath=str(out), export_animations="ACTIONS") == {
        "FINISHED"
    }
    assert sorted(a.name for a in ifp.read(out.read_bytes()).animations) == ["hero_0", "hero_1"]


def test_unigine_mesh_embeds_the_characters_own_clips(two, tmp_path):
    bpy, _, villain = two
    _activate(bpy, villain[1])
    out = tmp_path / "villain.mesh"
    assert bpy.ops.export_scene.unigine_mesh(
        filepath=str(out), use_selection=True, export_animations="ACTIONS"
    ) == {"FINISHED"}
    names = sorted(a.name for a in mesh.read(out.read_bytes()).animations)
    assert names == ["villain_0", "villain_1", "villain_2"]


def test_the_export_says_which_actions_it_wrote(two, tmp_path):
    from rigport.operators.result import Level
    from rigport.operators.unigine.exporter import export_anim_file
    from rigport.operators.unigine.settings import AnimExportOptions

    bpy, hero, _ = two
    options = AnimExportOptions(export_animations="ACTIONS")
    result = export_anim_file(bpy.context, str(tmp_path / "x.anim"), hero[0], options)
    info = [m.text for m in result.messages if m.level == Level.INFO]
    assert "2 actions of armature 'hero_rig' written: hero_0, hero_1" in info


def test_an_action_of_no_object_that_fits_both_goes_with_neither(two):
    """An action no object plays or holds (its NLA track deleted) and no slot names:
    it fits both characters' bones, so neither exports it."""
    from rigport.operators.animation_files import bone_actions

    _, hero, villain = two
    hero_ad = hero[0].animation_data
    track = next(t for t in hero_ad.nla_tracks if t.name == "hero_0")
    action = track.strips[0].action
    action.use_fake_user = True
    if hero_ad.action == action:
        hero_ad.action = None
    hero_ad.nla_tracks.remove(track)
    assert action not in bone_actions(hero[0])
    assert action not in bone_actions(villain[0])
    assert [a.name for a in bone_actions(hero[0])] == ["hero_1"]
