"""Every RigPort operator follows Blender's conventions and speaks one option vocabulary.

Issue 14, items 1 and 2. The lists below say which operators each rule covers;
an operator added to the add-on must be added to ``OPERATORS`` (a test checks
that the list and the registered operators agree) and to the rule lists that
apply to it. ``draw()`` and ``invoke()`` run without a window, on the recording
stand-ins of ``tests/blender/fake_layout.py``.
"""

from __future__ import annotations

import re

import pytest

from rigport.tests.blender.fake_layout import (
    FakeContext,
    FakeLayout,
    FakeOperator,
    FakeWindowManager,
    Record,
    fake_area,
    operator_properties,
)

#: Every operator of ``operators.format_modules()``: "import" or "export".
OPERATORS = {
    "import_scene.unigine_mesh": "import",
    "export_scene.unigine_mesh": "export",
    "import_anim.unigine_anim": "import",
    "export_anim.unigine_anim": "export",
    "import_scene.urho3d_mdl": "import",
    "export_scene.urho3d_mdl": "export",
    "import_anim.urho3d_ani": "import",
    "export_anim.urho3d_ani": "export",
    "import_scene.urho3d_package": "import",
    "import_scene.rw_dff": "import",
    "export_scene.rw_dff": "export",
    "import_anim.rw_anm": "import",
    "export_anim.rw_anm": "export",
    "import_anim.gta_ifp": "import",
    "export_anim.gta_ifp": "export",
    "import_scene.gta_img": "import",
    "import_scene.rw_txd": "import",
    "import_anim.mrtk_input": "import",
    "export_anim.mrtk_input": "export",
    "import_scene.bonespro_structure": "import",
    "import_anim.bonespro_anim": "import",
    "import_scene.bonespro": "import",
    "export_scene.bonespro_structure": "export",
    "export_anim.bonespro_anim": "export",
}
IMPORTERS = sorted(k for k, v in OPERATORS.items() if v == "import")
EXPORTERS = sorted(k for k, v in OPERATORS.items() if v == "export")

#: Formats with axes of their own (Urho3D and Unity are Y-up and left-handed):
#: ``axis_forward``/``axis_up`` (default: the engine's) and ``global_scale``.
AXES = {
    "import_scene.urho3d_mdl",
    "export_scene.urho3d_mdl",
    "import_anim.urho3d_ani",
    "export_anim.urho3d_ani",
    "import_scene.urho3d_package",
    "import_anim.mrtk_input",
    "export_anim.mrtk_input",
}
#: The engine axes of ``AXES`` (Urho3D and Unity: Z forward, Y up).
ENGINE_AXES = ("Z", "Y")
#: Everything that reads or writes positions has ``global_scale``. Unigine,
#: RenderWare and BonesPro are Z-up and right-handed, as Blender is: axes
#: options are not needed there, and where they are offered they default to
#: Blender's own.
#: The Unigine .anim importer makes no objects: its actions play in their
#: armature's space, which carries the mesh import's transform.
SCALE = set(OPERATORS) - {"import_scene.rw_txd", "import_anim.unigine_anim"}
BLENDER_AXES = ("Y", "Z")

#: Operators that turn key times into frames or back (the file's times are seconds).
FRAME_RATE = {
    "import_scene.unigine_mesh",
    "export_scene.unigine_mesh",
    "import_anim.unigine_anim",
    "export_anim.unigine_anim",
    "import_anim.urho3d_ani",
    "export_anim.urho3d_ani",
    "import_scene.urho3d_package",
    "import_anim.rw_anm",
    "export_anim.rw_anm",
    "import_anim.gta_ifp",
    "export_anim.gta_ifp",
    "import_anim.mrtk_input",
    "export_anim.mrtk_input",
}
#: Exporters that write meshes: "Apply Modifiers".
MESH_EXPORTERS = {
    "export_scene.unigine_mesh",
    "export_scene.urho3d_mdl",
    "export_scene.rw_dff",
    "export_scene.bonespro_structure",
}
#: Animation exporters that write the active armature's actions (or the Collection
#: Exporter's collection's armature): no selection limits.
ACTIVE_ARMATURE_EXPORTERS = {"export_anim.rw_anm", "export_anim.gta_ifp"}
#: Exporters that write animations (issue 14 item 3): ``export_animations``.
ANIMATION_EXPORTERS = {k for k in EXPORTERS if k.startswith("export_anim.")} | {
    "export_scene.unigine_mesh",  # embedded animations
}
#: MRTK exports recordings (a collection each), not actions: the same
#: identifiers with its own labels, and no NLA tracks.
RECORDING_EXPORTERS = {
    "export_anim.mrtk_input": {"ACTIVE": "Active Recording", "ACTIONS": "All Recordings"}
}
#: One animation per file, where the issue asks for files named by action.
ACTION_NAMED_FILES = {"export_anim.urho3d_ani"}
#: Importers that create materials: "Reuse Materials by Name".
MATERIAL_IMPORTERS = {
    "import_scene.unigine_mesh",
    "import_scene.urho3d_mdl",
    "import_scene.urho3d_package",
    "import_scene.rw_dff",
    "import_scene.gta_img",
}

#: Visible properties a ``draw()`` does not draw: the file browser's path field,
#: and the Collection Exporters panel's collection (it sets it; glTF and FBX
#: do not draw it either).
NOT_DRAWN = {"filepath", "collection"}
#: Blender's own enums, whose identifiers are Blender's ("-Z").
BLENDER_ENUMS = {"axis_forward", "axis_up"}
ENUM_IDENTIFIER = re.compile(r"[A-Z0-9_]+")
EXPORT_ANIMATION_ITEMS = {"ACTIVE": "Active Action", "ACTIONS": "All Actions", "NLA": "NLA Tracks"}
#: Exporters may also write each action at the rate it was imported with.
FRAME_RATE_ITEMS = {
    "SCENE": "Scene",
    "CUSTOM": "Custom",
    "FILE": "As in File",
    "AUTO": "As Imported",
}


def _registered(rigport_registered) -> dict:
    import bpy

    from rigport.operators import format_modules
    from rigport.ui import panel

    return {
        cls.bl_idname: cls
        for module in (*format_modules(), panel)
        for cls in module.CLASSES
        if issubclass(cls, bpy.types.Operator)
    }


def _imports_or_exports(idname: str) -> bool:
    return idname.split(".")[0].startswith(("import_", "export_"))


@pytest.fixture(scope="module")
def classes(rigport_registered) -> dict:
    """The registered import and export operator classes by ``bl_idname``."""
    return {k: v for k, v in _registered(rigport_registered).items() if _imports_or_exports(k)}


@pytest.fixture(scope="module")
def other_classes(rigport_registered) -> dict:
    """The add-on's other operators (e.g. the RigPort panel's)."""
    return {k: v for k, v in _registered(rigport_registered).items() if not _imports_or_exports(k)}


@pytest.fixture(scope="module")
def handlers(rigport_registered) -> list:
    import bpy

    from rigport.operators import format_modules

    return [
        cls
        for module in format_modules()
        for cls in module.CLASSES
        if issubclass(cls, bpy.types.FileHandler)
    ]


def _props(cls) -> dict:
    return operator_properties(cls)


def _visible(cls) -> dict:
    return {k: p for k, p in _props(cls).items() if not p.is_hidden}


def _drawable(cls) -> set[str]:
    return set(_visible(cls)) - NOT_DRAWN


def _enum_items(p) -> list:
    return list(getattr(p, "enum_items_static", None) or p.enum_items)


def _own_draw(cls):
    """The class's ``draw`` (its own or a mixin's), None when Blender draws every property."""
    import bpy

    for klass in cls.__mro__:
        if klass in (bpy.types.Operator,) or klass.__module__.startswith("bpy"):
            continue
        if "draw" in klass.__dict__:
            return klass.__dict__["draw"]
    return None


def _shared_definitions() -> dict:
    """Each shared option's (type, label, default or None when a format chooses it)."""
    from rigport.operators import conventions

    out = {}
    for mixin in (
        conventions.ExportScope,
        conventions.FrameRateOptions,
        conventions.ReuseMaterials,
    ):
        for name, deferred in mixin.__annotations__.items():
            if isinstance(deferred, str):  # the module postpones annotations
                deferred = eval(deferred, vars(conventions))
            kw = deferred.keywords
            out[name] = (deferred.function.__name__, kw["name"], kw.get("default"))
    out["set_scene_timing"] = ("BoolProperty", "Set Scene Rate and Range", None)
    out["frame_rate"] = ("EnumProperty", "Frame Rate", None)

    @conventions.transform_options("Y", "Z", export=True)
    class Probe:
        pass

    for name, deferred in Probe.__annotations__.items():
        kw = deferred.keywords
        default = None if name in BLENDER_ENUMS else kw.get("default")
        out[name] = (deferred.function.__name__, kw["name"], default)
    out["export_animations"] = ("EnumProperty", "Animations", None)
    out["use_action_names"] = ("BoolProperty", "Name Files by Action", False)
    return out


RNA_TYPES = {
    "BoolProperty": "BOOLEAN",
    "EnumProperty": "ENUM",
    "FloatProperty": "FLOAT",
    "IntProperty": "INT",
    "StringProperty": "STRING",
}


def _default(p):
    if p.type == "ENUM":
        return p.default
    return p.default


# -- the list -----------------------------------------------------------------------


def test_every_operator_is_listed(classes):
    """``OPERATORS`` is every registered import and export operator: a new one must
    be added to the rule lists of this file."""
    assert set(classes) == set(OPERATORS), (
        f"registered but not listed: {sorted(set(classes) - set(OPERATORS))}; "
        f"listed but not registered: {sorted(set(OPERATORS) - set(classes))}"
    )


#: ``bl_options`` as Blender registered them: an import is undone with Ctrl+Z,
#: an export changes nothing in the blend file; both keep presets.
BL_OPTIONS = {"import": {"REGISTER", "UNDO", "PRESET"}, "export": {"REGISTER", "PRESET"}}


@pytest.mark.parametrize("idname", sorted(OPERATORS))
def test_registered_options(classes, idname):
    import bpy

    group, name = idname.split(".")
    registered = set(getattr(getattr(bpy.ops, group), name).bl_options)
    assert registered == BL_OPTIONS[OPERATORS[idname]], f"{idname}: bl_options {registered}"


# -- tooltips, identifiers, spelling ------------------------------------------------------


@pytest.mark.parametrize("idname", sorted(OPERATORS))
def test_every_visible_property_has_a_tooltip(classes, idname):
    missing = [k for k, p in _visible(classes[idname]).items() if not p.description.strip()]
    assert not missing, f"{idname}: no description (tooltip) on {missing}"


@pytest.mark.parametrize("idname", sorted(OPERATORS))
def test_enum_identifiers_are_upper_case_with_labels(classes, idname):
    bad = []
    for name, p in _props(classes[idname]).items():
        if p.type != "ENUM" or name in BLENDER_ENUMS:
            continue
        for item in _enum_items(p):
            if not ENUM_IDENTIFIER.fullmatch(item.identifier):
                bad.append(f"{name}: identifier {item.identifier!r} is not [A-Z0-9_]+")
            if not item.name.strip():
                bad.append(f"{name}: item {item.identifier!r} has no label")
    assert not bad, f"{idname}: " + "; ".join(bad)


def _texts(cls) -> list[tuple[str, str, bool]]:
    """(where, text, is a label) of every property and enum item of ``cls``."""
    out = []
    for name, p in _props(cls).items():
        out += [(name, p.name, True), (f"{name} (tooltip)", p.description, False)]
        if p.type == "ENUM":
            for item in _enum_items(p):
                out.append((f"{name}.{item.identifier}", item.name, True))
                out.append((f"{name}.{item.identifier} (tooltip)", item.description, False))
    return out


@pytest.mark.parametrize("idname", sorted(OPERATORS))
def test_as_imported_is_spelled_as_imported(classes, idname):
    """Labels say "As Imported"; a tooltip may say "as imported" inside a sentence,
    but not the label's misspelling "As imported"."""
    bad = []
    for where, text, is_label in _texts(classes[idname]):
        found = re.findall(r"\bas imported\b", text, re.IGNORECASE)
        wrong = [f for f in found if f != "As Imported"] if is_label else None
        if not is_label:
            wrong = [f for f in found if f == "As imported"]
        if wrong:
            bad.append(f"{where}: {text!r}")
    assert not bad, f"{idname}: " + "; ".join(bad)


# -- draw() ---------------------------------------------------------------------------------


def _run_draw(cls, open_panels: bool, **values) -> tuple[Record, FakeOperator]:
    record = Record(open_panels=open_panels)
    op = FakeOperator(cls, FakeLayout(record), **values)
    draw = _own_draw(cls)
    draw(op, FakeContext(window=None, space_data=None, area=None))
    return record, op


@pytest.mark.parametrize("idname", sorted(OPERATORS))
def test_draw_shows_every_option_once(classes, idname):
    """More than three options: a ``draw()`` with panels. Any ``draw()`` draws every
    visible property exactly once with its panels open (with default values), and
    nothing else than with them open when they are closed."""
    cls = classes[idname]
    drawable = _drawable(cls)
    draw = _own_draw(cls)
    if draw is None:
        assert len(drawable) <= 3, (
            f"{idname}: {len(drawable)} visible options {sorted(drawable)} and no draw()"
        )
        return
    record, op = _run_draw(cls, True)
    drawn = record.names(op)
    twice = sorted({n for n in drawn if drawn.count(n) > 1})
    assert not twice, f"{idname}: drawn more than once: {twice}"
    missing = drawable - set(drawn)
    lists = sorted(n for n in missing if _props(cls)[n].type == "COLLECTION")
    assert not missing, f"{idname}: not drawn: {sorted(missing)}" + (
        f" (lists {lists}: draw them with template_list, or make them HIDDEN)" if lists else ""
    )
    hidden = set(drawn) - set(_visible(cls))
    assert not hidden, f"{idname}: hidden properties drawn: {sorted(hidden)}"
    if len(drawable) > 3:
        assert record.panels, f"{idname}: {len(drawable)} options drawn without panels"
    assert len(set(record.panels)) == len(record.panels), (
        f"{idname}: panel idnames repeat: {record.panels}"
    )
    closed, op_closed = _run_draw(cls, False)
    assert set(closed.names(op_closed)) <= set(drawn)
    assert not [d for d in closed.drawn if d.panels], f"{idname}: drawn inside a closed panel"


@pytest.mark.parametrize("idname", EXPORTERS)
def test_draw_for_a_collection_exporter(classes, idname):
    """With ``collection`` set (the Collection Exporters panel), ``draw()`` still
    works and draws no option twice."""
    cls = classes[idname]
    if _own_draw(cls) is None or "collection" not in _props(cls):
        pytest.skip(f"{idname}: no draw() or no collection (the tests above say so)")
    record, op = _run_draw(cls, True, collection="Characters")
    drawn = record.names(op)
    assert len(drawn) == len(set(drawn)), f"{idname}: drawn more than once: {drawn}"


def test_other_operators_follow_the_general_rules(other_classes):
    """Operators that neither import nor export: tooltips, identifiers, spelling
    and ``draw()`` as above."""
    rules = (
        test_every_visible_property_has_a_tooltip,
        test_enum_identifiers_are_upper_case_with_labels,
        test_as_imported_is_spelled_as_imported,
        test_draw_shows_every_option_once,
    )
    bad = []
    for idname in sorted(other_classes):
        for rule in rules:
            try:
                rule(other_classes, idname)
            except AssertionError as err:
                bad.append(str(err).splitlines()[0])
    assert not bad, "; ".join(bad)


# -- which options an operator has ---------------------------------------------------------


@pytest.mark.parametrize("idname", EXPORTERS)
def test_exporters_take_a_scope(classes, idname):
    props = _props(classes[idname])
    wanted = ["collection"]
    if idname not in ACTIVE_ARMATURE_EXPORTERS:
        wanted += ["use_selection", "use_visible", "use_active_collection"]
    if idname in MESH_EXPORTERS:
        wanted.append("apply_modifiers")
    missing = [n for n in wanted if n not in props]
    assert not missing, f"{idname}: missing {missing}"


@pytest.mark.parametrize("idname", sorted(SCALE))
def test_axes_and_scale(classes, idname):
    props = _props(classes[idname])
    wanted = ["global_scale"]
    if idname in AXES:
        wanted += ["axis_forward", "axis_up"]
    if OPERATORS[idname] == "export":
        wanted.append("use_transform_as_imported")
    missing = [n for n in wanted if n not in props]
    assert not missing, f"{idname}: missing {missing}"
    assert "axes" not in props, f"{idname}: the old 'axes' option is still there"
    if "axis_forward" in props:
        default = (props["axis_forward"].default, props["axis_up"].default)
        wanted = ENGINE_AXES if idname in AXES else BLENDER_AXES
        assert default == wanted, f"{idname}: axes default to {default}, not the engine's {wanted}"


@pytest.mark.parametrize("idname", sorted(FRAME_RATE))
def test_frame_rate_options(classes, idname):
    props = _props(classes[idname])
    wanted = ["frame_rate", "fps"]
    if OPERATORS[idname] == "import":
        wanted.append("set_scene_timing")
    missing = [n for n in wanted if n not in props]
    assert not missing, f"{idname}: missing {missing}"
    items = {i.identifier: i.name for i in _enum_items(props["frame_rate"])}
    assert {"SCENE", "CUSTOM"} <= set(items), f"{idname}: frame_rate items {items}"
    assert items.items() <= FRAME_RATE_ITEMS.items(), f"{idname}: frame_rate items {items}"
    assert props["fps"].type == "FLOAT"


@pytest.mark.parametrize("idname", sorted(ANIMATION_EXPORTERS))
def test_export_animations_choice(classes, idname):
    props = _props(classes[idname])
    assert "export_animations" in props, f"{idname}: no export_animations"
    items = {i.identifier: i.name for i in _enum_items(props["export_animations"])}
    shared = RECORDING_EXPORTERS.get(idname, EXPORT_ANIMATION_ITEMS)
    wrong = {k: items.get(k) for k, v in shared.items() if items.get(k) != v}
    assert not wrong, f"{idname}: export_animations items {items}, wanted {shared} (and others)"
    if idname in ACTION_NAMED_FILES:
        assert "use_action_names" in props, f"{idname}: no use_action_names"


@pytest.mark.parametrize("idname", sorted(MATERIAL_IMPORTERS))
def test_reuse_materials_option(classes, idname):
    props = _props(classes[idname])
    assert "reuse_materials" in props, f"{idname}: no reuse_materials"
    assert props["reuse_materials"].default is False


@pytest.mark.parametrize("idname", sorted(OPERATORS))
def test_one_vocabulary(classes, idname):
    """A shared option is the shared one: the same type, label and default in every
    format (where it is shown); ``fps`` goes with ``frame_rate``; the shared
    choices of ``export_animations`` and ``frame_rate`` have the shared labels."""
    shared = _shared_definitions()
    props = _props(classes[idname])
    bad = []
    for name, p in props.items():
        if name not in shared or p.is_hidden:
            continue
        kind, label, default = shared[name]
        if p.type != RNA_TYPES[kind]:
            bad.append(f"{name} is {p.type}, not {RNA_TYPES[kind]}")
        if p.name != label:
            bad.append(f"{name} is labelled {p.name!r}, not {label!r}")
        if default is not None and p.type != "ENUM" and _default(p) != default:
            bad.append(f"{name} defaults to {_default(p)!r}, not {default!r}")
    if "fps" in props and "frame_rate" not in props:
        bad.append("fps without frame_rate (Scene or Custom)")
    if "export_animations" in props:
        items = {i.identifier: i.name for i in _enum_items(props["export_animations"])}
        labels = RECORDING_EXPORTERS.get(idname, EXPORT_ANIMATION_ITEMS)
        if any(items[k] != labels[k] for k in items.keys() & labels.keys()):
            bad.append(f"export_animations items {items}")
    if "frame_rate" in props:
        items = {i.identifier: i.name for i in _enum_items(props["frame_rate"])}
        if not items.items() <= FRAME_RATE_ITEMS.items():
            bad.append(f"frame_rate items {items}")
    assert not bad, f"{idname}: " + "; ".join(bad)


# -- the bundled glTF and FBX add-ons' words -------------------------------------------------

#: Our options that are the bundled add-ons' own, as (add-on, its property, its enum
#: item or None, description rule): the add-on's exporter for an exporter, its
#: importer for an importer ("{kind}" in the add-on). The label is the add-on's
#: label in the running Blender; the description is the same ("same"), starts with
#: the add-on's ("starts": ours adds what differs), or is ours (None: the add-on's
#: says something untrue of ours, e.g. glTF's "prevents exporting shape keys").
BUNDLED = {
    ("use_selection", None): ("{kind}_scene.gltf", "use_selection", None, "same"),
    ("use_visible", None): ("{kind}_scene.gltf", "use_visible", None, "same"),
    ("use_active_collection", None): ("{kind}_scene.fbx", "use_active_collection", None, "same"),
    ("apply_modifiers", None): ("{kind}_scene.fbx", "use_mesh_modifiers", None, None),
    ("global_scale", None): ("{kind}_scene.fbx", "global_scale", None, None),
    ("axis_forward", None): ("{kind}_scene.fbx", "axis_forward", None, None),
    ("axis_up", None): ("{kind}_scene.fbx", "axis_up", None, None),
    ("export_animations", None): ("{kind}_scene.gltf", "export_animations", None, None),
    ("export_animations", "ACTIONS"): ("{kind}_scene.fbx", "bake_anim_use_all_actions", None, None),
    ("export_animations", "NLA"): (
        "{kind}_scene.gltf",
        "export_animation_mode",
        "NLA_TRACKS",
        None,
    ),
    ("morph_targets", None): ("{kind}_scene.gltf", "export_morph", None, "starts"),
    ("tangents", None): ("{kind}_scene.gltf", "export_tangents", None, "starts"),
}


@pytest.fixture(scope="module")
def bundled(rigport_registered) -> dict:
    """(label, description) of every property and enum item of the bundled glTF and FBX
    importers and exporters of the running Blender, by (operator, property, item)."""
    import addon_utils
    import bpy

    enabled = []
    for module in ("io_scene_gltf2", "io_scene_fbx"):
        if not addon_utils.check(module)[1]:
            addon_utils.enable(module, default_set=False)
            enabled.append(module)
    out = {}
    try:
        for idname in (
            "import_scene.gltf",
            "export_scene.gltf",
            "import_scene.fbx",
            "export_scene.fbx",
        ):
            group, name = idname.split(".")
            for p in getattr(getattr(bpy.ops, group), name).get_rna_type().properties:
                out[idname, p.identifier, None] = (p.name, p.description)
                if p.type == "ENUM":
                    for item in p.enum_items:
                        out[idname, p.identifier, item.identifier] = (item.name, item.description)
    finally:
        for module in enabled:
            addon_utils.disable(module, default_set=False)
    return out


@pytest.mark.parametrize("idname", sorted(OPERATORS))
def test_labels_are_the_bundled_addons(classes, bundled, idname):
    """An option the glTF or FBX add-on also has carries the add-on's label (and
    description, where ours means the same) of the Blender running the test:
    "Selected Objects", not "Selected Only"."""
    props = _props(classes[idname])
    bad = []
    for (name, item), (addon, prop, addon_item, rule) in BUNDLED.items():
        if name not in props or props[name].is_hidden:
            continue
        if item is not None and idname in RECORDING_EXPORTERS:
            continue  # MRTK's items are recordings, not actions
        key = (addon.format(kind=OPERATORS[idname]), prop, addon_item)
        if key not in bundled:
            continue  # the add-on of this direction has no such option (glTF import)
        label, description = bundled[key]
        p = props[name]
        if item is None:
            ours = (p.name, p.description)
        else:
            items = {i.identifier: (i.name, i.description) for i in _enum_items(p)}
            if item not in items:
                continue
            ours = items[item]
        where = f"{name}.{item}" if item else name
        if ours[0] != label:
            bad.append(f"{where} is labelled {ours[0]!r}, the add-on's {prop} {label!r}")
        if rule == "same" and ours[1] != description:
            bad.append(f"{where}: tooltip {ours[1]!r}, the add-on's {description!r}")
        if rule == "starts" and not ours[1].startswith(description):
            bad.append(f"{where}: tooltip {ours[1]!r} does not start with {description!r}")
    assert not bad, f"{idname}: " + "; ".join(bad)


def test_bundled_addons_are_read(bundled):
    """The comparison above bites: the add-ons' own words are there to compare with."""
    assert bundled["export_scene.gltf", "use_selection", None][0] == "Selected Objects"
    for addon, prop, item, _ in BUNDLED.values():
        kinds = {"import", "export"} if "{kind}" in addon else {None}
        found = [k for k in kinds if (addon.format(kind=k), prop, item) in bundled]
        assert found, f"{addon} {prop} {item}: not in the running Blender's add-ons"


# -- drag and drop ----------------------------------------------------------------------------


def test_file_handlers_accept_the_viewport_and_the_outliner(handlers):
    """``poll_drop`` answers as ``bpy_extras.io_utils.poll_file_object_drop``: the 3D
    viewport and the Outliner's View Layer mode, nothing else."""
    from bpy_extras.io_utils import poll_file_object_drop

    cases = {
        "VIEW_3D": fake_area("VIEW_3D"),
        "OUTLINER (View Layer)": fake_area("OUTLINER", "VIEW_LAYER"),
        "OUTLINER (Scenes)": fake_area("OUTLINER", "SCENES"),
        "PROPERTIES": fake_area("PROPERTIES"),
        "no area": None,
    }
    assert handlers
    for h in handlers:
        for what, area in cases.items():
            context = FakeContext(area=area)
            assert bool(h.poll_drop(context)) == poll_file_object_drop(context), (h, what)
        assert h.poll_drop(FakeContext(area=cases["OUTLINER (View Layer)"])), h.bl_idname


@pytest.mark.parametrize("idname", IMPORTERS)
def test_a_dropped_file_gets_the_options_popup(classes, idname, tmp_path):
    """``invoke`` with the path set (a dropped file) opens the options dialog, as
    ``ImportHelper.invoke_popup`` does; without it, the file browser. An importer
    that lists what the file holds has listed it before the popup shows."""
    cls = classes[idname]
    path = str(tmp_path / f"dropped{getattr(cls, 'filename_ext', '')}")
    wm = FakeWindowManager()
    op = FakeOperator(cls, filepath=path)
    seen = {}

    def dialog(operator, **kw):
        seen["listed"] = getattr(operator, "listed", None)
        wm.calls.append(("invoke_props_dialog", operator, kw))
        return {"RUNNING_MODAL"}

    wm.invoke_props_dialog = dialog
    result = cls.invoke(op, FakeContext(window_manager=wm), None)
    assert wm.names() == ["invoke_props_dialog"], f"{idname}: {wm.names()}"
    assert result == {"RUNNING_MODAL"}
    if "listed" in _props(cls):
        assert seen["listed"] == path, f"{idname}: the list was not filled before the popup"

    wm = FakeWindowManager()
    op = FakeOperator(cls)
    cls.invoke(op, FakeContext(window_manager=wm), None)
    assert wm.names() == ["fileselect_add"], f"{idname}: {wm.names()}"
