"""Urho3D's axes, and the axes and scale options as the import and export logic take them."""

from __future__ import annotations

from dataclasses import dataclass

#: Urho3D's own axes (left-handed, Y up, +Z forward), which the codec's
#: conversion turns into Blender's: the axes options' default.
ENGINE_AXES = ("Z", "Y")


@dataclass(frozen=True)
class TransformOptions:
    """The Transform panel of an importer or exporter (``conventions.transform_options``),
    with the operator's names, so ``conventions.option_matrix`` and ``file_matrix``
    read it as they read the operator. An import puts its matrix on the roots it
    makes; an export bakes it into what it writes. Without one (batch, scripts)
    nothing is placed or baked."""

    axis_forward: str = ENGINE_AXES[0]
    axis_up: str = ENGINE_AXES[1]
    global_scale: float = 1.0
    use_transform_as_imported: bool = True
    engine_axes: tuple[str, str] = ENGINE_AXES
    transform_export: bool = False


def export_axes(choice: str | bool | None, kept: object) -> bool:
    """Whether to convert axes: ``choice`` (BLENDER, NONE or a bool), or with
    AUTO/None what the import recorded in ``kept`` (a bool or BLENDER/NONE);
    Blender's axes when nothing was recorded."""
    if choice in (None, "AUTO"):
        choice = kept
    if isinstance(choice, bool):
        return choice
    return choice != "NONE"


def export_convert(transform: TransformOptions | None) -> bool | None:
    """An export's axes choice: None (the axes each model or action was imported
    with, Blender's for new ones) unless the Transform panel turns "As Imported"
    off, which writes the engine's axes."""
    if transform is None or transform.use_transform_as_imported:
        return None
    return True
