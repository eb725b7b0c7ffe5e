"""glTF, FBX and USD for ``batch.py convert``: Blender's own importers and exporters.

RigPort's codecs do not read these formats; the Blender that batch runs in does
(the bundled glTF and FBX add-ons, USD built in). A conversion with one of them
on either side works on one scene: every input imported (models first, then
animations), then one export. Unlike the rest of ``cli``, the functions here
need bpy; they import it when called, so that the codec commands never do.

What each Blender version offers (checked on bpy 4.2, 4.5, 5.0 and 5.2): the
glTF exporter's ``export_animation_mode='ACTIONS'`` writes one glTF animation
per action (the active one and those stashed on NLA tracks, as RigPort's
importers keep them); the FBX exporter writes every action that fits the
armature (``bake_anim_use_all_actions``); the USD exporter writes the scene's
timeline, so one action only. FBX is read by the C++ importer (``wm.fbx_import``,
4.5 and later) where Blender has it, else by the Python add-on.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass

from ..io_formats.codec.errors import counted
from . import UsageError, members

AXES = ("X", "Y", "Z", "-X", "-Y", "-Z")


@dataclass(frozen=True)
class Bridge:
    """One of Blender's own file types: its label, the add-on that provides it
    (None: built in) and the extensions it covers."""

    key: str
    label: str
    extensions: tuple[str, ...]
    addon: str | None


BRIDGES = (
    Bridge("gltf", "glTF 2.0", (".glb", ".gltf"), "io_scene_gltf2"),
    Bridge("fbx", "FBX", (".fbx",), "io_scene_fbx"),
    Bridge("usd", "Universal Scene Description", (".usd", ".usda", ".usdc"), None),
)


def extensions() -> list[str]:
    return [ext for bridge in BRIDGES for ext in bridge.extensions]


def bridge_of(path: str) -> Bridge | None:
    """The bridge that reads and writes ``path`` (by extension), or None."""
    ext = members.ext(path)
    return next((b for b in BRIDGES if ext in b.extensions), None)


def check_options(options: dict, paths: list[str]) -> None:
    """A usage error for an axis or scale flag that none of ``paths`` can use:
    glTF is +Y up in metres by definition; USD and FBX take axes, FBX a scale."""
    forward, up = options.get("axis_forward"), options.get("axis_up")
    axes = forward or up
    if forward and up and forward[-1] == up[-1]:
        raise UsageError(f"--axis-forward {forward} and --axis-up {up}: the same axis")
    keys = {b.key for p in paths if (b := bridge_of(p)) is not None}
    if axes and not keys & {"fbx", "usd"}:
        raise UsageError("--axis-forward and --axis-up apply to .fbx and .usd (glTF is +Y up)")
    if options.get("scale") is not None and "fbx" not in keys:
        raise UsageError("--scale applies to .fbx files (glTF and USD are in metres)")


def _enable(bridge: Bridge) -> None:
    """The add-on of ``bridge`` enabled: the bpy module starts with none."""
    if bridge.addon is None:
        return
    import addon_utils

    loaded, enabled = addon_utils.check(bridge.addon)
    if not (loaded and enabled):
        addon_utils.enable(bridge.addon, default_set=True)


def _has_operator(bpy, name: str) -> bool:
    group, op = name.split(".")
    try:
        getattr(getattr(bpy.ops, group), op).get_rna_type()
    except KeyError:
        return False
    return True


def _run(bpy, name: str, **props) -> None:
    group, op = name.split(".")
    result = getattr(getattr(bpy.ops, group), op)(**props)
    if "FINISHED" not in result:
        raise RuntimeError(f"{name} did not finish ({', '.join(sorted(result))})")


def import_file(path: str, state: dict, options: dict) -> str:
    """Import ``path`` with Blender's importer into the current scene; record the new
    objects, the armature and the actions in ``state``; the summary."""
    import bpy

    bridge = bridge_of(path)
    _enable(bridge)
    before_objects, before_actions = set(bpy.data.objects), set(bpy.data.actions)
    path = os.path.abspath(path)
    if bridge.key == "gltf":
        # no icosphere made to draw the bones: it would be exported as a mesh
        _run(bpy, "import_scene.gltf", filepath=path, disable_bone_shape=True)
    elif bridge.key == "fbx":
        scale = options.get("scale") or 1.0
        if _has_operator(bpy, "wm.fbx_import"):
            _run(bpy, "wm.fbx_import", filepath=path, global_scale=scale)
        else:
            axes = _fbx_axes(options)
            _run(bpy, "import_scene.fbx", filepath=path, global_scale=scale, **axes)
    else:
        _run(bpy, "wm.usd_import", filepath=path)
    new = [o for o in bpy.data.objects if o not in before_objects]
    actions = [a for a in bpy.data.actions if a not in before_actions]
    if bridge.key == "gltf":
        _name_after_animations(actions, _gltf_animation_names(path))
    state.setdefault("objects", []).extend(new)
    armatures = [o for o in new if o.type == "ARMATURE"]
    if armatures and state.get("armature") is None:
        state["armature"] = armatures[0]
    state.setdefault("actions", []).extend(actions)
    if actions:
        state["action"] = actions[0]
    meshes = sum(o.type == "MESH" for o in new)
    bones = sum(len(o.data.bones) for o in armatures)
    return (
        f"{bridge.label}: {_count(meshes, 'mesh', 'meshes')}, {_count(bones, 'bone')}, "
        f"{_count(len(actions), 'action')}"
    )


def _gltf_animation_names(path: str) -> list[str]:
    """The names of the animations in a .glb or .gltf file (its JSON)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] == b"glTF":  # header, then the first chunk: length, b"JSON", the JSON
        length = struct.unpack_from("<I", data, 12)[0]
        data = data[20 : 20 + length]
    doc = json.loads(data)
    return [a.get("name", "") for a in doc.get("animations", [])]


def _name_after_animations(actions: list, names: list[str]) -> None:
    """Give each action the name of the glTF animation it came from: the glTF
    importer of 4.2 calls it ``ANIMATION_OBJECT`` (later versions ``ANIMATION``),
    and RigPort's animation files are named after their actions."""
    for action in actions:
        for name in names:
            if name and action.name.startswith(name + "_") and not _taken(actions, name):
                action.name = name
                break


def _taken(actions: list, name: str) -> bool:
    return any(a.name == name for a in actions)


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return counted(n, noun, plural)


def _fbx_axes(options: dict) -> dict:
    props = {}
    if options.get("axis_forward"):
        props["axis_forward"] = options["axis_forward"]
    if options.get("axis_up"):
        props["axis_up"] = options["axis_up"]
    return props


def chosen_actions(state: dict, names: list[str] | None) -> list:
    """The run's actions, or those ``--action`` names (a usage error names the
    missing ones and lists what there is)."""
    actions = [a for a in state.get("actions", []) if a is not None]
    if not names:
        return actions
    by_name = {a.name: a for a in actions}
    missing = [n for n in names if n not in by_name]
    if missing:
        have = ", ".join(sorted(by_name)) or "none"
        raise UsageError(f"--action {', '.join(missing)}: no such action (the inputs have: {have})")
    return [by_name[n] for n in names]


def _keep_only(bpy, actions: list) -> None:
    """Remove every other action from the file, so that the exporters (which find
    actions by themselves) write only these."""
    for action in list(bpy.data.actions):
        if action not in actions:
            bpy.data.actions.remove(action)


def _play(armature, action) -> None:
    """``armature`` plays ``action`` over the scene's frame range."""
    from ..operators.blender import compat

    compat.assign_action(armature, action)
    start, end = (int(round(f)) for f in action.frame_range)
    scene = armature.users_scene[0] if armature.users_scene else None
    if scene is not None:
        scene.frame_start, scene.frame_end = start, max(end, start + 1)


def export_file(path: str, state: dict, options: dict) -> str:
    """Write the current scene to ``path`` with Blender's exporter; the summary,
    with a warning when the format cannot hold every action."""
    import bpy

    bridge = bridge_of(path)
    _enable(bridge)
    actions = chosen_actions(state, options.get("action"))
    _keep_only(bpy, actions)
    armature = state.get("armature")
    if armature is not None and armature.name in bpy.data.objects and actions:
        _play(armature, actions[0])
    bpy.context.view_layer.update()
    out = os.path.abspath(path)
    warning = ""
    if bridge.key == "gltf":
        _run(
            bpy,
            "export_scene.gltf",
            filepath=out,
            export_format="GLB" if members.ext(path) == ".glb" else "GLTF_SEPARATE",
            export_animations=True,
            export_animation_mode="ACTIONS",
            export_skins=True,
            export_morph=True,
        )
    elif bridge.key == "fbx":
        _run(
            bpy,
            "export_scene.fbx",
            filepath=out,
            global_scale=options.get("scale") or 1.0,
            add_leaf_bones=False,
            bake_anim=True,
            bake_anim_use_all_actions=True,
            bake_anim_use_nla_strips=False,
            **_fbx_axes(options),
        )
    else:
        axes = {}
        if options.get("axis_forward") or options.get("axis_up"):
            axes = {
                "convert_orientation": True,
                "export_global_forward_selection": _usd_axis(options.get("axis_forward") or "-Z"),
                "export_global_up_selection": _usd_axis(options.get("axis_up") or "Y"),
            }
        _run(
            bpy,
            "wm.usd_export",
            filepath=out,
            export_animation=True,
            export_armatures=True,
            export_shapekeys=True,
            **axes,
        )
        if len(actions) > 1:
            warning = (
                f"; warning: USD holds one animation: wrote {actions[0].name}, "
                f"not {', '.join(a.name for a in actions[1:])} (choose with --action)"
            )
    size = os.path.getsize(out)
    return f"wrote {path} ({size} bytes, {_count(len(actions), 'action')}){warning}"


def _usd_axis(axis: str) -> str:
    """The USD exporter's enum item for an axis (``-Z`` is ``NEGATIVE_Z``)."""
    return f"NEGATIVE_{axis[1]}" if axis.startswith("-") else axis
