"""Urho3D (left-handed, Y up) <-> Blender (right-handed, Z up): swap Y and Z.

The swap is its own inverse and has determinant -1: a mirror. The engine draws
a triangle's front where its corners run clockwise in its left-handed axes,
Blender where they run counter-clockwise in its right-handed ones; both are
the side the cross product (b - a) x (c - a) points to, and the mirror turns
that to the other side. So converting the axes also rewinds every triangle
(:func:`rewind`), or the faces come in inside out against their normals.
"""

from __future__ import annotations

import numpy as np


def _swapped(v: np.ndarray, a: int, b: int, out: np.ndarray | None = None) -> np.ndarray:
    """A C-ordered copy of ``v`` with its last axis' entries ``a`` and ``b`` swapped
    (into ``out`` when given, cast to its type): column copies, several times
    faster than a fancy index over millions of rows (which also leaves its result
    in Fortran order for the next copy)."""
    if out is None:
        out = np.empty(v.shape, v.dtype)
    for i in range(v.shape[-1]):
        out[..., i] = v[..., b if i == a else a if i == b else i]
    return out


def vectors(v: np.ndarray, convert: bool) -> np.ndarray:
    """Points, directions or scales (..., 3)."""
    v = np.asarray(v)
    return _swapped(v, 1, 2) if convert else v


def quats(q: np.ndarray, convert: bool) -> np.ndarray:
    """w x y z rotations: a mirrored rotation turns the other way round its mirrored axis."""
    q = np.asarray(q)
    if not convert:
        return q
    out = np.empty(q.shape, q.dtype)
    out[..., 0] = q[..., 0]
    for to, at in ((1, 1), (2, 3), (3, 2)):  # a column at a time: one long loop each
        np.multiply(q[..., at], -1, out=out[..., to])
    return out


def matrices(m: np.ndarray, convert: bool) -> np.ndarray:
    """4x4 transforms (..., 4, 4), column-vector convention: ``S @ m @ S`` for the
    swap S, done as a row and column permutation so every value (a -0.0 too)
    comes through bit for bit."""
    m = np.asarray(m, np.float64)
    return m[..., [0, 2, 1, 3], :][..., [0, 2, 1, 3]] if convert else m


def tangents(t: np.ndarray, convert: bool) -> np.ndarray:
    """The file's Vector4 tangents as an import keeps them and an export writes
    them back (each undoes the other): xyz like a direction, w negated. Blender's
    own tangents go out through ``model_export._engine_tangents``."""
    t = np.asarray(t)
    if not convert:
        return t
    out = _swapped(t, 1, 2)
    np.negative(out[..., 3], out=out[..., 3])
    return out


def rewind(corners: np.ndarray, convert: bool, out: np.ndarray | None = None) -> np.ndarray:
    """Triangle corners (3n,) with each triangle's second and third corners
    swapped when ``convert``: its own inverse, and each face keeps its first
    corner (Blender's loop start), so a round trip gives the file's order.
    ``out``: a (3n,) array to write them into (cast to its type), returned."""
    corners = np.asarray(corners)
    if out is not None:
        if not convert:
            out[...] = corners
            return out
        _swapped(corners.reshape(-1, 3), 1, 2, out.reshape(-1, 3))
        return out
    return _swapped(corners.reshape(-1, 3), 1, 2).reshape(-1) if convert else corners
