"""Blender's import/export conventions, once for every RigPort operator.

The options an artist knows from the bundled glTF and FBX add-ons, with the same
names and meanings: what to export (``ExportScope``: selection, visibility, the
active collection, the Collection Exporters' ``collection``, Apply Modifiers),
axes and scale (``transform_options``: ``orientation_helper`` with the engine's
own axes as default and ``global_scale``), frame rate (``FrameRateOptions``),
"Reuse Materials by Name", and the ``draw()`` panels that show them.

Axes and scale never touch the imported data: an import puts the conversion on
the root objects it creates (and records it there), so the data stays the
file's. An export writes the exported objects in the file's space: the root's
recorded import transform ("As Imported", the default) or the options' one,
baked into the data with :mod:`io_formats.global_transform` only where it is
not the identity. Default options therefore change nothing, bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import axis_conversion, orientation_helper

from ..io_formats.codec import FormatError
from .blender import guard
from .blender.armatures import choose_armature
from .blender.build import scene_fps

#: Custom property on an imported root object: its import transform (16 floats,
#: row-major), so an export can write the file's space back ("As Imported").
IMPORT_TRANSFORM = "_rigport_import_transform"

#: Two transforms closer than this (any matrix element) are the same: a matrix
#: Blender stored as float32 against the float64 it was made from.
SAME = 1e-6


def _split(layout):
    """``layout`` drawing options as the bundled add-ons do: the label left of
    each field (property split), no animation decorators."""
    layout.use_property_split = True
    layout.use_property_decorate = False
    return layout


def options_layout(op):
    """The layout an operator's ``draw()`` starts from (see :func:`_split`)."""
    return _split(op.layout)


def section(layout, op, idname: str, label: str, closed: bool = False, props: tuple[str, ...] = ()):
    """A collapsible sub-panel of an operator's options (glTF's Include /
    Transform / Geometry / Animation) showing ``props`` first; the body layout,
    or None when closed."""
    header, body = layout.panel(f"RIGPORT_{type(op).__name__}_{idname}", default_closed=closed)
    header.label(text=label)
    if body is not None:
        draw_props(_split(body), op, props)
    return body


def draw_props(layout, op, names: tuple[str, ...]) -> None:
    for name in names:
        layout.prop(op, name)


# -- what an export takes -------------------------------------------------------


class ExportScope:
    """Mixin for exporters: which objects, and whether modifiers are applied."""

    use_selection: BoolProperty(
        name="Selected Objects",
        default=False,
        description="Export selected objects only",
    )
    use_visible: BoolProperty(
        name="Visible Objects",
        default=False,
        description="Export visible objects only",
    )
    use_active_collection: BoolProperty(
        name="Active Collection",
        default=False,
        description="Export only objects from the active collection (and its children)",
    )
    collection: StringProperty(
        name="Source Collection",
        default="",
        description="Export only objects of this collection and its children "
        "(set by the Collection Exporters panel)",
        options={"HIDDEN"},  # set by Blender, never drawn (draw_include)
    )
    apply_modifiers: BoolProperty(
        name="Apply Modifiers",
        default=True,
        description="Apply modifiers to mesh objects (except Armature ones: the skin is "
        "exported). Shape keys are kept when the modifiers keep the vertex count",
    )

    def scope_objects(self, context, types: tuple[str, ...] = ("MESH",)) -> list:
        """The objects this export takes, of ``types``: the Collection Exporter's
        collection when set (its objects and its children's: the limits below are
        not shown there, so they do not apply), else the scene (or the active
        collection) filtered by selection and visibility."""
        if self.collection:
            return collection_objects(self.collection, types)
        if self.use_active_collection:
            pool = list(context.view_layer.active_layer_collection.collection.all_objects)
        else:
            pool = list(context.view_layer.objects)
        if self.use_selection:
            pool = [o for o in pool if o.select_get()]
        if self.use_visible:
            pool = [o for o in pool if o.visible_get()]
        return [o for o in pool if o.type in types]

    def evaluated_scope(self, context):
        """The mesh objects this export takes, as :func:`evaluated_meshes` gives
        them (with ``apply_modifiers``): a context manager."""
        return evaluated_meshes(context, self.scope_objects(context), self.apply_modifiers)

    def scope_armature(self, context):
        """The armature an animation export writes: of the scope's armatures the
        active one (not for a Collection Exporter, whose collection decides),
        else the only one; a sentence naming the scope otherwise."""
        pool = self.scope_objects(context, ("ARMATURE",))
        if self.collection:
            where = f"collection {self.collection!r}"
            return choose_armature(context, pool=pool, active=False, where=where).required()
        return choose_armature(
            context, pool=pool, active_mesh=True, where="the export's scope"
        ).required()

    def draw_include(self, layout, extra: tuple[str, ...] = ()) -> None:
        """The Include panel: the limits (not for a Collection Exporter, whose
        collection decides) and the format's ``extra`` options."""
        if self.collection and not extra:
            return
        body = section(layout, self, "include", "Include")
        if body is not None:
            if not self.collection:
                col = body.column(heading="Limit to")
                col.prop(self, "use_selection")
                col.prop(self, "use_visible")
                col.prop(self, "use_active_collection")
            draw_props(body, self, extra)


def collection_objects(name: str, types: tuple[str, ...]) -> list:
    """The objects of ``types`` in collection ``name`` and its children (the
    blend file's own collection before a linked one of that name); a sentence
    when there is no such collection."""
    coll = bpy.data.collections.get((name, None)) or bpy.data.collections.get(name)
    if coll is None:
        raise FormatError(f"collection {name!r} does not exist: nothing exported")
    return [o for o in coll.all_objects if o.type in types]


def _live_modifiers(obj) -> list:
    return [m for m in obj.modifiers if m.show_viewport and m.type != "ARMATURE"]


@contextmanager
def evaluated_meshes(
    context, objects: list, apply_modifiers: bool = True
) -> Iterator[tuple[list, list[str]]]:
    """The mesh objects to read an export from, and warnings: with
    ``apply_modifiers``, each object with modifiers other than Armature is
    replaced for the export by a temporary copy of what those modifiers make
    (Armature modifiers off, so the mesh is the bind pose); its shape keys are
    carried over when the vertex count is unchanged. Objects without such
    modifiers are read themselves, so their kept file data still applies.
    The copies take their object's name for the export and are removed after."""
    if not apply_modifiers or not any(_live_modifiers(o) for o in objects if o.type == "MESH"):
        yield objects, []
        return
    out, warnings, temps, renamed = [], [], [], []
    modified = [o for o in objects if o.type == "MESH" and _live_modifiers(o)]
    disabled = [
        m for o in modified for m in o.modifiers if m.type == "ARMATURE" and m.show_viewport
    ]
    # the basis alone through the modifiers (the shape keys are carried as offsets),
    # as the FBX exporter does: not the mix of the keys' current values
    keyed = [
        (o, o.show_only_shape_key, o.active_shape_key_index)
        for o in modified
        if o.data.shape_keys is not None
    ]
    try:
        for m in disabled:
            m.show_viewport = False
        for o, _, _ in keyed:
            o.show_only_shape_key, o.active_shape_key_index = True, 0
        depsgraph = context.evaluated_depsgraph_get()
        for obj in objects:
            if obj not in modified:
                out.append(obj)
                continue
            temp = _evaluated_copy(obj, depsgraph, warnings)
            temps.append(temp)
            context.scene.collection.objects.link(temp)  # evaluated: weights read in bulk
            name = obj.name
            obj.name = f"{name}.rigport-source"
            renamed.append((obj, name))
            temp.name = name
            out.append(temp)
        for m in disabled:
            m.show_viewport = True
        disabled = []
        for o, only, index in keyed:
            o.show_only_shape_key, o.active_shape_key_index = only, index
        keyed = []
        yield out, warnings
    finally:
        for m in disabled:
            m.show_viewport = True
        for o, only, index in keyed:
            o.show_only_shape_key, o.active_shape_key_index = only, index
        for temp in temps:
            me = temp.data
            bpy.data.objects.remove(temp)
            bpy.data.meshes.remove(me)
        for obj, name in renamed:
            obj.name = name


def _evaluated_copy(obj, depsgraph, warnings: list[str]):
    """A temporary object holding ``obj``'s evaluated mesh, vertex groups, shape
    keys (when the vertex count allows), custom properties, transform and
    Armature modifiers."""
    me = bpy.data.meshes.new_from_object(
        obj.evaluated_get(depsgraph), preserve_all_data_layers=True, depsgraph=depsgraph
    )
    if guard.KEPT in me:
        del me[guard.KEPT]  # what the guard kept describes the unmodified mesh
    temp = bpy.data.objects.new(obj.name + ".rigport-export", me)
    temp.matrix_world = obj.matrix_world.copy()
    for key in obj.keys():
        temp[key] = obj[key]
    for mod in obj.modifiers:
        if mod.type == "ARMATURE":
            copy = temp.modifiers.new(mod.name, "ARMATURE")
            copy.object = mod.object
    temp.parent = obj.parent
    temp.parent_type, temp.parent_bone = obj.parent_type, obj.parent_bone
    temp.matrix_world = obj.matrix_world.copy()
    for slot, source in zip(temp.material_slots, obj.material_slots, strict=False):
        if source.link == "OBJECT":  # the mesh holds the data's materials only
            slot.link, slot.material = "OBJECT", source.material
    keys = obj.data.shape_keys
    if keys is not None and len(keys.key_blocks) > 1:
        if len(me.vertices) == len(obj.data.vertices):
            _carry_shape_keys(obj.data, temp)
        else:
            names = [k.name for k in keys.key_blocks[1:]]
            warnings.append(
                f"{obj.name}: its modifiers change the vertex count "
                f"({len(obj.data.vertices)} to {len(me.vertices)}), so its "
                f"{len(names)} shape keys ({', '.join(names[:3])}"
                f"{' ...' if len(names) > 3 else ''}) are not exported: apply the "
                "modifiers first, or turn Apply Modifiers off"
            )
    return temp


def _carry_shape_keys(source: bpy.types.Mesh, temp) -> None:
    """Shape keys of ``source`` onto ``temp``'s evaluated mesh as the same offsets
    from its basis (the modifiers keep the vertex count, not necessarily the
    offsets' meaning: what the FBX exporter also does)."""
    blocks = source.shape_keys.key_blocks
    n = len(source.vertices)
    base = np.empty(3 * n, np.float32)
    temp.data.vertices.foreach_get("co", base)
    ref = np.empty(3 * n, np.float32)
    blocks[0].data.foreach_get("co", ref)
    basis = temp.shape_key_add(name=blocks[0].name, from_mix=False)
    basis.data.foreach_set("co", base)
    co = np.empty(3 * n, np.float32)
    made = {blocks[0].name: basis}
    for kb in blocks[1:]:
        kb.data.foreach_get("co", co)
        new = temp.shape_key_add(name=kb.name, from_mix=False)
        new.data.foreach_set("co", base + (co - ref))
        new.slider_min, new.slider_max = kb.slider_min, kb.slider_max
        new.value = kb.value  # after the range: a value is clamped to it
        new.mute, new.vertex_group, new.interpolation = kb.mute, kb.vertex_group, kb.interpolation
        made[kb.name] = new
    for kb in blocks[1:]:
        if kb.relative_key is not None and kb.relative_key.name in made:
            made[kb.name].relative_key = made[kb.relative_key.name]


# -- axes and scale -------------------------------------------------------------


def scale_property(description: str):
    """A ``global_scale`` option (glTF's and FBX's "Scale" range); ``description``
    says which way it scales."""
    return FloatProperty(
        name="Scale",
        min=0.001,
        max=1000.0,
        soft_min=0.01,
        soft_max=100.0,
        default=1.0,
        description=description,
    )


def transform_options(forward: str, up: str, export: bool = False):
    """Class decorator: ``axis_forward``/``axis_up`` (``orientation_helper``, the
    engine's axes ``forward``/``up`` as default: Blender's own, Y and Z, for a
    format whose axes are Blender's), ``global_scale``, and on an exporter
    ``use_transform_as_imported``."""

    def wrap(cls):
        cls = orientation_helper(axis_forward=forward, axis_up=up)(cls)
        ann = cls.__annotations__
        ann["axis_forward"].keywords["description"] = (
            "The file's forward axis (default: the engine's)"
        )
        ann["axis_up"].keywords["description"] = "The file's up axis (default: the engine's)"
        ann["global_scale"] = scale_property(
            "Blender units per file unit" if not export else "File units per Blender unit"
        )
        if export:
            ann["use_transform_as_imported"] = BoolProperty(
                name="As Imported",
                default=True,
                description="Write the axes and scale the objects were imported with (the "
                "axes and scale below apply to objects RigPort did not import)",
            )
        cls.engine_axes = (forward, up)
        cls.transform_export = export
        return cls

    return wrap


def option_matrix(op, export: bool | None = None) -> np.ndarray:
    """The 4x4 transform from the file's space into Blender's that the axes and
    scale options ask for, relative to the engine's own axes (which each format's
    conversion already turns into Blender's): the identity by default. An
    exporter's ``global_scale`` is file units per Blender unit (the FBX
    exporter's meaning), so its transform from the file into Blender scales by
    the inverse. ``export`` says which it is (default: what ``transform_options``
    was told)."""
    m = np.eye(4)
    forward, up = op.engine_axes
    if (op.axis_forward, op.axis_up) != (forward, up):
        chosen = np.array(axis_conversion(from_forward=op.axis_forward, from_up=op.axis_up))
        engine = np.array(axis_conversion(from_forward=forward, from_up=up))
        m[:3, :3] = chosen @ engine.T
    if op.global_scale != 1.0:
        scale = float(op.global_scale)
        if export is None:
            export = getattr(op, "transform_export", False)
        m[:3, :3] *= 1.0 / scale if export else scale
    return m


def draw_transform(layout, op) -> None:
    body = section(layout, op, "transform", "Transform")
    if body is None:
        return
    if hasattr(op, "use_transform_as_imported"):
        body.prop(op, "use_transform_as_imported")
    col = body.column()
    col.prop(op, "global_scale")
    col.prop(op, "axis_forward")
    col.prop(op, "axis_up")


def place_roots(objects: list, matrix: np.ndarray) -> None:
    """Put an import's transform on its root objects (those whose parent is not
    among ``objects``) and record it there for "As Imported" exports."""
    inside = set(objects)
    flat = [float(v) for v in np.asarray(matrix, np.float64).ravel()]
    identity = np.array_equal(matrix, np.eye(4))
    for obj in objects:
        if obj.parent in inside:
            continue
        if not identity:
            obj.matrix_world = _to_blender(matrix) @ obj.matrix_world
        obj[IMPORT_TRANSFORM] = flat


def _to_blender(matrix: np.ndarray):
    from mathutils import Matrix

    return Matrix([list(row) for row in np.asarray(matrix, np.float64)])


def recorded_transform(obj) -> np.ndarray | None:
    """The transform ``obj`` was imported with, if RigPort imported it as a root."""
    value = obj.get(IMPORT_TRANSFORM) if obj is not None else None
    if value is None:
        return None
    try:
        m = np.array(list(value), np.float64).reshape(4, 4)
    except (TypeError, ValueError):
        return None
    return m if np.all(np.isfinite(m)) else None


def file_matrix(op, root, space_world=None) -> np.ndarray:
    """The 4x4 transform an export bakes into data read in ``root``'s space (an
    armature's, or world space for unparented meshes: ``space_world`` is that
    space's world matrix, a numpy array or Blender's; none: world space itself).
    ``op``: an exporter, anything with its options, or its :class:`ExportTransform`."""
    transform = op if isinstance(op, ExportTransform) else ExportTransform.of(op)
    return transform(root, space_world)


@dataclass(frozen=True)
class ExportTransform:
    """An exporter's axes and scale options apart from the operator (the export
    logic and batch can take it): called with ``(root, space_world=None)`` it
    gives the one matrix an export bakes (:func:`file_matrix`)."""

    engine_axes: tuple[str, str] = ("Y", "Z")
    axis_forward: str = "Y"
    axis_up: str = "Z"
    global_scale: float = 1.0
    use_transform_as_imported: bool = False
    transform_export = True

    @classmethod
    def of(cls, op) -> ExportTransform:
        """The options of an exporter made with ``transform_options(..., export=True)``
        (or of anything with its axes and scale)."""
        return cls(
            tuple(op.engine_axes),
            op.axis_forward,
            op.axis_up,
            float(op.global_scale),
            bool(getattr(op, "use_transform_as_imported", False)),
        )

    def __call__(self, root, space_world=None) -> np.ndarray:
        """The inverse of the file's space (the root's recorded import transform
        with "As Imported", else the options') times the space; exactly the
        identity when they agree."""
        frame = recorded_transform(root) if self.use_transform_as_imported else None
        if frame is None:
            frame = option_matrix(self, export=True)
        space = np.eye(4) if space_world is None else np.asarray(space_world, np.float64)
        out = np.linalg.inv(frame) @ space
        return np.eye(4) if np.allclose(out, np.eye(4), atol=SAME) else out


# -- frame rate -----------------------------------------------------------------

FRAME_RATE_ITEMS = (
    ("SCENE", "Scene", "Convert key times at the scene's frame rate"),
    ("CUSTOM", "Custom", "Convert key times at the frame rate given below"),
)


def frame_rate_property(
    items=FRAME_RATE_ITEMS,
    default: str = "SCENE",
    description: str = "The frame rate key times convert at",
):
    """The ``frame_rate`` choice: the shared items, or a format's (an "As Imported"
    ``AUTO`` added, its own tooltips) with its default."""
    return EnumProperty(name="Frame Rate", items=items, default=default, description=description)


class FrameRateOptions:
    """Mixin: the frame rate key times convert at, and whether an import sets the
    scene's rate and frame range (on by default for animation-only imports: the
    subclass overrides ``set_scene_timing``)."""

    frame_rate: frame_rate_property()
    fps: FloatProperty(
        name="Frames per Second",
        default=30.0,
        min=1.0,
        max=1000.0,
        description="The custom frame rate",
    )
    set_scene_timing: BoolProperty(
        name="Set Scene Rate and Range",
        default=False,
        description="Set the scene's frame rate to the one used and its frame range to "
        "the imported animation's",
    )

    def frames_per_second(self, context, file_fps: float | None = None) -> float:
        """The rate key times convert at: the custom one, the file's (``file_fps``,
        for a format whose ``frame_rate`` has the "As in File" choice ``FILE``),
        else the scene's."""
        if self.frame_rate == "CUSTOM":
            return float(self.fps)
        if self.frame_rate == "FILE" and file_fps:
            return float(file_fps)
        return scene_fps(context)

    def draw_frame_rate(self, layout, importing: bool = True) -> None:
        layout.prop(self, "frame_rate")
        row = layout.row()
        row.active = self.frame_rate == "CUSTOM"
        row.prop(self, "fps")
        if importing:
            layout.prop(self, "set_scene_timing")

    def apply_scene_timing(self, context, actions: list, file_fps: float | None = None) -> None:
        """With ``set_scene_timing``: the scene's rate becomes the one used
        (:meth:`frames_per_second`), its frame range the actions' (from their
        first to their last key)."""
        if not self.set_scene_timing or not actions:
            return
        fps = self.frames_per_second(context, file_fps)
        scene = context.scene
        if self.frame_rate != "SCENE":
            scene.render.fps, scene.render.fps_base = _fps_pair(fps)
        starts, ends = zip(*(a.frame_range for a in actions), strict=True)
        scene.frame_start = int(np.floor(min(starts)))
        scene.frame_end = max(int(np.ceil(max(ends))), scene.frame_start)


#: How close a rate must be to an NTSC rate (24, 30, 60 ... / 1.001) to be one.
NTSC_CLOSE = 0.005


class AnimationFrameRate(FrameRateOptions):
    """:class:`FrameRateOptions` of an animation-only import: it sets the scene's
    rate and frame range by default (the artist imports the animation to play it)."""

    set_scene_timing: BoolProperty(
        name="Set Scene Rate and Range",
        default=True,
        description="Set the scene's frame rate to the one used and its frame range to "
        "the imported animations'",
    )


class ExportFrameRate(FrameRateOptions):
    """:class:`FrameRateOptions` of an exporter: ``set_scene_timing`` (an import's
    option) hidden."""

    set_scene_timing: BoolProperty(
        name="Set Scene Rate and Range",
        default=False,
        options={"HIDDEN"},
        description="Not used: an export leaves the scene's timing alone",
    )


class AnimationExport(ExportScope, ExportFrameRate):
    """Mixin for exporters of animations (no meshes of their own): the export's
    scope and frame rate, with ``apply_modifiers`` hidden (what an animation
    samples is what Blender shows)."""

    apply_modifiers: BoolProperty(
        name="Apply Modifiers",
        default=True,
        options={"HIDDEN"},
        description="Not used: an animation export has no mesh option",
    )


def _fps_pair(fps: float) -> tuple[int, float]:
    """Blender's (fps, fps_base) for a rate, as its frame-rate presets store them:
    29.97 (or 29.97003) is 30 / 1.001, 25 is 25 / 1."""
    whole = max(1, round(fps))
    if whole != fps and abs(fps - whole / 1.001) < NTSC_CLOSE:
        return whole, 1.001
    return whole, whole / fps


# -- import result --------------------------------------------------------------


class ReuseMaterials:
    """Mixin for importers that create materials."""

    reuse_materials: BoolProperty(
        name="Reuse Materials by Name",
        default=False,
        description="Use the blend file's material of the same name instead of creating a new one",
    )


def select_imported(context, objects: list) -> None:
    """Select what an import made and make its root (an armature first) active,
    as the glTF and FBX importers do."""
    layer = context.view_layer
    # Objects linked since the view layer last synced (an import into a new
    # collection, the second model of a package) are not in layer.objects yet.
    # select_set brings its bases up to date first; layer.update() would also
    # evaluate the scene (1.4 s for a 10-minute MRTK recording's actions).
    for o in objects:
        o.select_set(False)
    made = [o for o in objects if o.name in layer.objects]
    if not made:
        return
    for o in layer.objects:
        if o.select_get():
            o.select_set(False)
    for o in made:
        if o.visible_get():
            o.select_set(True)
    inside = set(made)
    roots = [o for o in made if o.parent not in inside]
    # a hidden root (a hidden LOD level) is not made active while a visible one exists
    roots.sort(key=lambda o: not o.visible_get())
    root = next((o for o in roots if o.type == "ARMATURE"), roots[0] if roots else made[0])
    layer.objects.active = root
