"""kept_keys without Blender: hidden names, old names, migration and forgetting
on plain dicts (they have the mapping methods an ID property holder has)."""

from __future__ import annotations

from rigport.operators.blender import kept_keys as K


def test_codec_keys_are_stored_hidden_and_read_back_under_their_name():
    assert K.stored_name("rw_geometry") == "_rw_geometry"
    assert K.stored_name("urho_lod") == "urho_lod"  # the artist's: visible
    assert K.logical_name("_rw_geometry") == "rw_geometry"
    assert K.logical_name("rw_geometry") == "rw_geometry"  # an old file's name
    assert K.logical_name("unigine_source") == "_unigine_source"  # an old constant's
    assert K.logical_name("tracked") == "tracked"


def test_find_prefers_the_hidden_name_and_falls_back_to_the_old_one():
    holder = {"rw_geometry": "old", "_rigport_rest": [1.0]}
    assert K.find(holder, "rw_geometry") == "rw_geometry"
    holder["_rw_geometry"] = "new"
    assert K.get(holder, "rw_geometry") == "new"
    assert K.get({"rigport_rest": [2.0]}, "_rigport_rest") == [2.0]
    assert K.get({}, "_rigport_rest", "none") == "none"
    assert not K.has({"tracked": True}, "_tracked")


def test_extras_keys_give_codec_names_once():
    holder = {"_urho_layout": "{}", "urho_layout": "stale", "urho_lod": 0, "mine": 1}
    assert dict(K.extras_keys(holder)) == {
        "urho_layout": "_urho_layout",
        "urho_lod": "urho_lod",
        "mine": "mine",
    }


def test_migrate_renames_old_names_and_keeps_current_values():
    holder = {"rw_geometry": "{}", "bonespro_index": 3, "_urho_layout": "now", "urho_layout": "x"}
    assert K.migrate([holder]) == 3
    assert holder == {"_rw_geometry": "{}", "_bonespro_index": 3, "_urho_layout": "now"}
    assert K.migrate([holder]) == 0


def test_forget_removes_kept_data_but_not_identity_or_the_artists_properties():
    holder = {
        "_rw_geometry": "{}",
        "rw_skin": "{}",  # an old name
        "_rigport_guard": "x",
        "_rigport_counts": [1, 2, 3],
        "_mrtk_role": "camera",
        "_rigport_name": '"x"',
        "tracked": True,
        "rw_color": [1, 2, 3, 4],
        "_someone_elses": 1,
    }
    assert K.forget([holder]) == 4
    assert holder == {
        "_mrtk_role": "camera",
        "_rigport_name": '"x"',
        "tracked": True,
        "rw_color": [1, 2, 3, 4],
        "_someone_elses": 1,
    }


def test_every_old_name_maps_to_a_hidden_one():
    assert all(new.startswith("_") and new[1:] == old for old, new in K.LEGACY.items())
    assert not (K.HIDDEN & {"urho_lod", "rw_color", "rw_texture_name", "rw_bone_id", "rigport_fps"})
