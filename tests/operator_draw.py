"""An operator's ``draw()`` run without a window: a layout that records what it is
asked to draw, and the check every operator's options must pass (each visible
property has a tooltip and is drawn exactly once)."""

from __future__ import annotations

import inspect
from collections import Counter

ATTRIBUTES = ("active", "enabled", "use_property_split", "use_property_decorate", "alignment")


class RecordingLayout:
    """The parts of ``UILayout`` RigPort's operators may use; every ``prop`` is
    counted in the shared ``drawn``."""

    def __init__(self, drawn: Counter | None = None, labels: list | None = None):
        object.__setattr__(self, "drawn", Counter() if drawn is None else drawn)
        object.__setattr__(self, "labels", [] if labels is None else labels)

    def __setattr__(self, name, value):
        if name not in ATTRIBUTES:
            raise AttributeError(f"a layout has no attribute {name!r}")
        object.__setattr__(self, name, value)

    def _child(self, *args, **kw) -> RecordingLayout:
        return RecordingLayout(self.drawn, self.labels)

    row = column = box = split = _child

    def panel(self, idname: str, default_closed: bool = False):
        return self._child(), self._child()

    def prop(self, data, name: str, **kw) -> None:
        self.drawn[name] += 1

    def label(self, text: str = "", **kw) -> None:
        self.labels.append(text)

    def template_list(self, *args, **kw) -> None:
        return None


def operator_properties(cls) -> list:
    """The registered operator's properties (``rna_type`` left out)."""
    import bpy

    module, _, name = cls.bl_idname.partition(".")
    rna = getattr(getattr(bpy.ops, module), name).get_rna_type()
    return [p for p in rna.properties if p.identifier != "rna_type"]


def fake_operator(cls, **values):
    """An object with ``cls``'s methods and its properties' defaults (``values``
    override them), enough to call ``cls.draw`` without a window."""
    methods = {}
    for base in reversed(cls.__mro__):
        if base.__module__.lstrip("_").startswith("bpy_types") or base is object:
            continue
        methods.update({k: v for k, v in vars(base).items() if inspect.isfunction(v)})
    fake = type(cls.__name__, (), methods)()
    for prop in operator_properties(cls):
        default = getattr(prop, "default", None)
        if getattr(prop, "is_enum_flag", False):
            default = set(prop.default_flag)
        setattr(fake, prop.identifier, default)
    for key, value in values.items():
        setattr(fake, key, value)
    fake.layout = RecordingLayout()
    return fake


def visible_properties(cls) -> dict[str, str]:
    """Visible property name -> tooltip (``collection`` is the Collection Exporters
    panel's and ``filepath`` the file browser's: the operator draws neither)."""
    return {
        p.identifier: p.description
        for p in operator_properties(cls)
        if p.identifier not in ("collection", "filepath") and not p.is_hidden
    }


def check_draw(context, cls, undrawn: tuple[str, ...] = (), **values) -> Counter:
    """Run ``cls.draw`` on a recording layout; assert every visible property has a
    tooltip and is drawn once (but ``undrawn``, which the values hide), and nothing
    else is. Returns the counts."""
    fake = fake_operator(cls, **values)
    cls.draw(fake, context)
    drawn = fake.layout.drawn
    visible = visible_properties(cls)
    assert [n for n, d in visible.items() if not d] == [], "no tooltip"
    assert {n: c for n, c in drawn.items() if c != 1} == {}, "drawn more than once"
    missing = set(visible) - set(drawn) - set(undrawn)
    assert not missing, f"not drawn: {sorted(missing)}"
    extra = set(drawn) - set(visible)
    assert not extra, f"drawn but hidden: {sorted(extra)}"
    return drawn
