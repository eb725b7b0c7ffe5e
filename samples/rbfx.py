"""Our own rbfx and package test files, built from the specification: UMD3
models, UAN2 animations, USHD shaders and UPAK/ULZ4/RPAK/RLZ4 packages.

The corpus has one tiny UPAK package and no UMD3, UAN2, USHD or compressed
package, so the tests build these.
"""

from __future__ import annotations

import numpy as np

from ..io_formats.urho3d import ani, mdl, package, shader
from . import urho3d as samples

NON_ASCII_NAME = "Modèles/Ünïcode_模型.mdl"


def umd3_model(version: int = 2, weights: tuple[float, ...] = (0.25, 0.75)) -> mdl.Model:
    """The skinned tentacle with morphs as a UMD3 file; version 2 gives the morphs
    the default weights ``weights`` (repeated if there are more morphs)."""
    model = samples.skinned_model(n_bones=6, grid=(24, 8), morphs=2)
    model.magic = b"UMD3"
    model.version = version
    if version >= mdl.MORPH_WEIGHT_VERSION:
        for i, m in enumerate(model.morphs):
            m.weight = float(np.float32(weights[i % len(weights)]))
    return model


def _variant_tracks(length: float) -> list[ani.VariantTrack]:
    times = np.linspace(0.0, length, 5).astype(np.float32)
    floats = np.sin(times * 3).astype("<f4")
    vec3 = np.stack([times, times * 2, -times], axis=1).astype("<f4")
    tangents = np.repeat(np.array([[0.5, 0, 0], [0, 0.5, 0]], "<f4"), len(times), axis=0)
    return [
        ani.VariantTrack(
            "Light/@Light/Brightness Multiplier",
            3,  # float
            1,  # linear
            0.5,
            times,
            floats.view(np.uint8).reshape(len(times), 4),
            None,
            0.75,
        ),
        ani.VariantTrack(
            "Camera/@Node/Position",
            5,  # Vector3
            ani.INTERPOLATION_TANGENT_SPLINE,
            0.25,
            times,
            vec3.view(np.uint8).reshape(len(times), 12),
            tangents.reshape(-1, 3).view(np.uint8).reshape(2 * len(times), 12),
            1.0,
        ),
        ani.VariantTrack(
            "Sign/@Text3D/Text", ani.VARIANT_STRING, 0, 0.5, times[:3], ["one", "два", "三"]
        ),
    ]


def uan2_animation(model: mdl.Model | None = None, version: int = 3) -> ani.Animation:
    """A walk cycle on ``model``'s bones as UAN2: track weights (version 3) and
    variant tracks of float, Vector3 (tangent spline) and string values (2+)."""
    model = model or umd3_model()
    anim = samples.walk_animation(model, n_keys=13, length=1.0, name="Wave")
    anim.version = version
    if version >= ani.TRACK_WEIGHT_VERSION:
        for i, t in enumerate(anim.tracks):
            t.weight = float(np.float32(1.0 - 0.125 * (i % 4)))
    if version >= ani.VARIANT_TRACK_VERSION:
        anim.variant_tracks = _variant_tracks(anim.length)
    return anim


def _bytecode(n: int, seed: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def shader_sm3(shader_type: int = shader.VERTEX) -> shader.Shader:
    return shader.Shader(
        shader_type,
        3,
        [
            shader.Parameter("ModelViewProj", 0, 4),
            shader.Parameter("SkinMatrices", 12, 192),
            shader.Parameter("AmbientColor", 4, 1),
        ],
        [shader.TextureUnit("DiffMap", 0), shader.TextureUnit("NormalMap", 1)],
        _bytecode(1500, 3),
    )


def shader_sm4(shader_type: int = shader.PIXEL) -> shader.Shader:
    return shader.Shader(
        shader_type,
        4,
        [
            shader.Parameter("cMatDiffColor", 1, 0, 0, 16),
            shader.Parameter("cMatSpecColor", 1, 0, 16, 16),
            shader.Parameter("cLightColor", 2, 0, 64, 16),
        ],
        [shader.TextureUnit("sDiffMap", 0), shader.TextureUnit("sEnvCubeMap", 4)],
        _bytecode(2300, 4),
        element_hash=0 if shader_type == shader.PIXEL else 0x1F3A5C77,
    )


def big_file(size: int = 100_000) -> bytes:
    """Compressible but not trivial content larger than three 32 KiB blocks."""
    words = np.random.default_rng(7).integers(0, 16, size // 4, dtype=np.uint32)
    return (words * 0x01010101).astype("<u4").tobytes()[:size]


def package_files() -> list[tuple[str, bytes]]:
    """What the sample packages hold: a UMD3 model, its UAN2 animation, a big
    file of several blocks, an empty file, shaders and a non-ASCII name."""
    model = umd3_model()
    return [
        ("Models/Tentacle.mdl", mdl.write(model)),
        ("Models/Tentacle_Wave.ani", ani.write(uan2_animation(model))),
        ("Data/Big.bin", big_file()),
        ("Data/Empty.txt", b""),
        ("Shaders/LitSolid.vs3", shader.write(shader_sm3())),
        ("Shaders/LitSolid.ps4", shader.write(shader_sm4())),
        (NON_ASCII_NAME, mdl.write(samples.skinned_model(n_bones=3, grid=(8, 6), morphs=0))),
    ]


def sample_package(compressed: bool = False, rbfx: bool = False) -> bytes:
    pkg = package.new_package(compressed, rbfx)
    for name, data in package_files():
        pkg.entries.append(package.Entry(name, data))
    return package.write(pkg)
