"""Stand-ins for what an operator's ``draw()`` and ``invoke()`` touch, without a window.

``FakeLayout`` records every ``prop`` and ``template_list`` of an operator's
``draw()`` (which property, under which panels) and refuses what Blender's
``UILayout`` would refuse: an unknown method or attribute, an unknown keyword,
a property the data does not have. ``panel`` returns ``(header, body)`` with
``body`` None when the panels are closed, as ``UILayout.panel`` does for a
closed panel.

``FakeOperator`` is an operator class's instance as ``draw()``/``invoke()`` see
it: its RNA properties at their defaults (or given values), its methods bound to
the fake, ``properties.is_property_set`` answering for the given values, and a
``layout``. ``FakeWindowManager`` records ``invoke_props_dialog`` and
``fileselect_add``; ``FakeContext`` forwards to ``bpy.context`` except for what
it is given (``window_manager``, ``area``, ``space_data`` ...).
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field

import bpy

#: Keywords ``UILayout.prop`` accepts (Blender 4.2 to 5.2).
PROP_KEYWORDS = {
    "text",
    "text_ctxt",
    "translate",
    "icon",
    "placeholder",
    "expand",
    "slider",
    "toggle",
    "icon_only",
    "event",
    "full_event",
    "emboss",
    "index",
    "icon_value",
    "invert_checkbox",
}
PROP_SEARCH_KEYWORDS = {"text", "text_ctxt", "translate", "icon", "results_are_suggestions"}
LABEL_KEYWORDS = {"text", "text_ctxt", "translate", "icon", "icon_value"}
ROW_KEYWORDS = {"align", "heading", "heading_ctxt", "translate"}
SPLIT_KEYWORDS = {"factor", "align"}
OPERATOR_KEYWORDS = {
    "text",
    "text_ctxt",
    "translate",
    "icon",
    "emboss",
    "depress",
    "icon_value",
}
TEMPLATE_LIST_KEYWORDS = {
    "item_dyntip_propname",
    "rows",
    "maxrows",
    "type",
    "columns",
    "sort_reverse",
    "sort_lock",
}
SEPARATOR_KEYWORDS = {"factor", "type"}

#: Attributes of ``UILayout`` a draw function may set.
ATTRIBUTES = {
    "active": True,
    "active_default": False,
    "activate_init": False,
    "alert": False,
    "alignment": "EXPAND",
    "emboss": "NORMAL",
    "enabled": True,
    "operator_context": "INVOKE_DEFAULT",
    "scale_x": 1.0,
    "scale_y": 1.0,
    "ui_units_x": 0.0,
    "ui_units_y": 0.0,
    "use_property_decorate": True,
    "use_property_split": False,
}
ALIGNMENTS = {"EXPAND", "LEFT", "CENTER", "RIGHT"}


@dataclass
class Drawn:
    """One property drawn: by ``prop`` (or ``template_list``) under ``panels``."""

    data: object
    name: str
    how: str
    panels: tuple[str, ...]


@dataclass
class Record:
    """Everything one ``draw()`` drew, shared by a layout and its children."""

    open_panels: bool = True
    drawn: list[Drawn] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    panels: list[str] = field(default_factory=list)
    operators: list[str] = field(default_factory=list)

    def names(self, data) -> list[str]:
        """The properties of ``data`` drawn, in order, repeats included."""
        return [d.name for d in self.drawn if d.data is data]


def _check_keywords(method: str, given: dict, allowed: set[str]) -> None:
    unknown = set(given) - allowed
    if unknown:
        raise TypeError(f"UILayout.{method}() got unexpected keywords {sorted(unknown)}")


def _has_property(data, name: str) -> bool:
    if isinstance(data, FakeOperator):
        return name in data.rna_properties
    rna = getattr(data, "bl_rna", None)
    if rna is not None:
        return name in rna.properties
    return hasattr(data, name)


class FakeLayout:
    """A recording ``UILayout``: see the module's docstring."""

    def __init__(self, record: Record | None = None, panels: tuple[str, ...] = ()):
        object.__setattr__(self, "_record", record or Record())
        object.__setattr__(self, "_panels", panels)
        object.__setattr__(self, "_attrs", dict(ATTRIBUTES))

    # -- attributes ------------------------------------------------------------

    @property
    def record(self) -> Record:
        return self._record

    def __getattr__(self, name: str):
        attrs = object.__getattribute__(self, "_attrs")
        if name in attrs:
            return attrs[name]
        raise AttributeError(f"'UILayout' object has no attribute {name!r}")

    def __setattr__(self, name: str, value) -> None:
        if name not in ATTRIBUTES:
            raise AttributeError(f"'UILayout' object has no attribute {name!r}")
        if name == "alignment" and value not in ALIGNMENTS:
            raise TypeError(f"UILayout.alignment: {value!r} not in {sorted(ALIGNMENTS)}")
        self._attrs[name] = value

    def _child(self, panels: tuple[str, ...] | None = None) -> FakeLayout:
        child = FakeLayout(self._record, self._panels if panels is None else panels)
        for name in ("use_property_split", "use_property_decorate", "active", "enabled"):
            child._attrs[name] = self._attrs[name]
        return child

    # -- sub-layouts -------------------------------------------------------------

    def row(self, **kw) -> FakeLayout:
        _check_keywords("row", kw, ROW_KEYWORDS)
        return self._child()

    def column(self, **kw) -> FakeLayout:
        _check_keywords("column", kw, ROW_KEYWORDS)
        return self._child()

    def box(self) -> FakeLayout:
        return self._child()

    def split(self, **kw) -> FakeLayout:
        _check_keywords("split", kw, SPLIT_KEYWORDS)
        return self._child()

    def panel(self, idname: str, *, default_closed: bool = False):
        """``(header, body)``; body None when the record's panels are closed."""
        if not isinstance(idname, str) or not idname:
            raise TypeError("UILayout.panel() needs an idname")
        self._record.panels.append(idname)
        header = self._child()
        body = self._child((*self._panels, idname)) if self._record.open_panels else None
        return header, body

    # -- content ---------------------------------------------------------------

    def prop(self, data, property: str, **kw) -> None:  # noqa: A002 (Blender's name)
        _check_keywords("prop", kw, PROP_KEYWORDS)
        if not _has_property(data, property):
            raise TypeError(f"UILayout.prop(): property {property!r} not found on {data!r}")
        self._record.drawn.append(Drawn(data, property, "prop", self._panels))

    def prop_search(self, data, property: str, search_data, search_property: str, **kw) -> None:  # noqa: A002
        _check_keywords("prop_search", kw, PROP_SEARCH_KEYWORDS)
        if not _has_property(data, property):
            raise TypeError(f"UILayout.prop_search(): {property!r} not found on {data!r}")
        if not _has_property(search_data, search_property):
            raise TypeError(f"UILayout.prop_search(): {search_property!r} not on {search_data!r}")
        self._record.drawn.append(Drawn(data, property, "prop_search", self._panels))

    def label(self, **kw) -> None:
        _check_keywords("label", kw, LABEL_KEYWORDS)
        self._record.labels.append(str(kw.get("text", "")))

    def template_list(
        self,
        listtype_name: str,
        list_id: str,
        dataptr,
        propname: str,
        active_dataptr,
        active_propname: str,
        **kw,
    ) -> None:
        _check_keywords("template_list", kw, TEMPLATE_LIST_KEYWORDS)
        if getattr(bpy.types, listtype_name, None) is None:
            raise TypeError(f"UILayout.template_list(): no UIList {listtype_name!r}")
        for data, name in ((dataptr, propname), (active_dataptr, active_propname)):
            if not _has_property(data, name):
                raise TypeError(f"UILayout.template_list(): {name!r} not found on {data!r}")
            self._record.drawn.append(Drawn(data, name, "template_list", self._panels))

    def operator(self, operator: str, **kw):
        _check_keywords("operator", kw, OPERATOR_KEYWORDS)
        category, _, name = operator.partition(".")
        if not name or getattr(getattr(bpy.ops, category), name, None) is None:
            raise TypeError(f"UILayout.operator(): unknown operator {operator!r}")
        self._record.operators.append(operator)
        return types.SimpleNamespace()

    def separator(self, **kw) -> None:
        _check_keywords("separator", kw, SEPARATOR_KEYWORDS)


# -- the operator and its context ---------------------------------------------------


class FakeCollection(list):
    """A CollectionProperty's value: ``add``/``clear`` make items of ``fixed_type``'s
    property defaults."""

    def __init__(self, fixed_type, items: int = 0):
        super().__init__()
        self.fixed_type = fixed_type
        for _ in range(items):
            self.add()

    def add(self):
        item = types.SimpleNamespace(name="")
        if self.fixed_type is not None:
            for p in self.fixed_type.properties:
                if p.identifier != "rna_type":
                    setattr(item, p.identifier, default_value(p))
        self.append(item)
        return item


def default_value(p):
    """The default of an RNA property as Python sees it on an instance."""
    if p.type == "ENUM":
        return set(p.default_flag) if p.is_enum_flag else p.default
    if p.type == "COLLECTION":
        return FakeCollection(p.fixed_type)
    if p.type == "POINTER":
        return None
    if getattr(p, "is_array", False) and p.array_length > 0:
        return tuple(p.default_array)
    return p.default


def operator_properties(cls) -> dict:
    """The RNA properties of registered operator class ``cls`` by identifier."""
    category, _, name = cls.bl_idname.partition(".")
    rna = getattr(getattr(bpy.ops, category), name).get_rna_type()
    return {p.identifier: p for p in rna.properties if p.identifier != "rna_type"}


class FakeProperties:
    """``operator.properties``: which properties were set."""

    def __init__(self, given: set[str]):
        self._given = given

    def is_property_set(self, name: str) -> bool:
        return name in self._given


class FakeOperator:
    """An instance of operator class ``cls`` as ``draw()``/``invoke()`` see it."""

    def __init__(self, cls, layout: FakeLayout | None = None, list_items: int = 1, **values):
        rna = operator_properties(cls)
        unknown = set(values) - set(rna)
        if unknown:
            raise TypeError(f"{cls.__name__} has no properties {sorted(unknown)}")
        state = {"_cls": cls, "rna_properties": rna, "layout": layout or FakeLayout()}
        for name, p in rna.items():
            state[name] = default_value(p)
            if p.type == "COLLECTION":  # a list to draw: one item by default
                state[name] = FakeCollection(p.fixed_type, list_items)
        state.update(values)
        state["properties"] = FakeProperties(set(values))
        self.__dict__.update(state)

    def __getattr__(self, name: str):
        attr = getattr(self.__dict__["_cls"], name)
        if isinstance(attr, types.FunctionType):
            return types.MethodType(attr, self)
        return attr

    def report(self, level, message) -> None:
        self.__dict__.setdefault("reports", []).append((set(level), message))


class FakeWindowManager:
    """Records the dialogs and file browsers an ``invoke`` opens."""

    def __init__(self):
        self.calls: list[tuple[str, object, dict]] = []

    def invoke_props_dialog(self, operator, **kw):
        self.calls.append(("invoke_props_dialog", operator, kw))
        return {"RUNNING_MODAL"}

    def invoke_props_popup(self, operator, event=None):
        self.calls.append(("invoke_props_popup", operator, {}))
        return {"RUNNING_MODAL"}

    def fileselect_add(self, operator):
        self.calls.append(("fileselect_add", operator, {}))

    def names(self) -> list[str]:
        return [c[0] for c in self.calls]


class FakeContext:
    """``bpy.context`` with some members replaced."""

    def __init__(self, **members):
        self.__dict__.update(members)

    def __getattr__(self, name: str):
        return getattr(bpy.context, name)


def fake_area(kind: str, display_mode: str = "VIEW_LAYER"):
    """An area of type ``kind`` whose active space has ``display_mode`` (the Outliner's)."""
    space = types.SimpleNamespace(type=kind, display_mode=display_mode)
    return types.SimpleNamespace(type=kind, spaces=types.SimpleNamespace(active=space))
