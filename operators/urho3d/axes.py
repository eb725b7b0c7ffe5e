"""Urho3D's axes, and the axes and scale options as the import and export logic take them."""

from __future__ import annotations

from dataclasses import dataclass

from ..conventions import ExportTransform

#: Urho3D's own axes (left-handed, Y up, +Z forward), which the codec's
#: conversion turns into Blender's: the axes options' default.
ENGINE_AXES = ("Z", "Y")


@dataclass(frozen=True)
class TransformOptions:
    """An importer's Transform panel (``conventions.transform_options``), with the
    operator's names, so ``conventions.option_matrix`` reads it as it reads the
    operator: the import puts its matrix on the roots it makes (an exporter's is
    a ``conventions.ExportTransform``). Without one (batch, scripts) nothing is
    placed."""

    axis_forward: str = ENGINE_AXES[0]
    axis_up: str = ENGINE_AXES[1]
    global_scale: float = 1.0
    engine_axes: tuple[str, str] = ENGINE_AXES


def export_axes(choice: str | bool | None, kept: object) -> bool:
    """Whether to convert axes: ``choice`` (BLENDER, NONE or a bool), or with
    AUTO/None what the import recorded in ``kept`` (a bool or BLENDER/NONE);
    Blender's axes when nothing was recorded."""
    if choice in (None, "AUTO"):
        choice = kept
    if isinstance(choice, bool):
        return choice
    return choice != "NONE"


def export_convert(transform: ExportTransform | None) -> bool | None:
    """An export's axes choice: None (the axes each model or action was imported
    with, Blender's for new ones) unless the Transform panel turns "As Imported"
    off, which writes the engine's axes."""
    if transform is None or transform.use_transform_as_imported:
        return None
    return True
