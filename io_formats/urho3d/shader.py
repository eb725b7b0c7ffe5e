"""Compiled Urho3D shaders (``USHD``, shader model 3 and 4): lossless read and write.

Urho3D caches compiled Direct3D shaders with their reflection data: the
constant parameters (registers for shader model 3, constant-buffer ranges for
shader model 4) and the texture units, then the bytecode. There is nothing of
this in Blender; the codec is for inspecting and checking files.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..codec import FormatError, Reader, Writer

MAGIC = b"USHD"
VERTEX = 0
PIXEL = 1
TYPE_NAMES = {VERTEX: "vertex", PIXEL: "pixel"}
MODELS = (3, 4)
EXTENSIONS = (".vs3", ".ps3", ".vs4", ".ps4")


@dataclass
class Parameter:
    name: str
    register: int = 0  # SM3: first register; SM4: constant buffer index
    registers: int = 0  # SM3 only: number of registers
    offset: int = 0  # SM4 only: start byte in the constant buffer
    size: int = 0  # SM4 only: byte size


@dataclass
class TextureUnit:
    name: str
    sampler: int


@dataclass
class Shader:
    shader_type: int  # 0 vertex, 1 pixel
    model: int  # 3 or 4
    parameters: list[Parameter] = field(default_factory=list)
    texture_units: list[TextureUnit] = field(default_factory=list)
    bytecode: bytes = b""
    element_hash: int = 0  # SM4 only: vertex element hash (0 for pixel shaders)


def read(data: bytes) -> Shader:
    r = Reader(data)
    magic = r.bytes(4) if r.remaining >= 4 else r.rest()
    if magic != MAGIC:
        raise FormatError(f"not an Urho3D shader: magic {magic!r}, expected USHD", 0)
    shader_type = r.u16()
    if shader_type not in TYPE_NAMES:
        raise r.error(f"shader type {shader_type}, expected 0 (vertex) or 1 (pixel)", 4)
    model = r.u16()
    if model not in MODELS:
        raise r.error(f"unsupported shader model {model}, expected 3 or 4", 6)
    shader = Shader(shader_type, model)
    if model == 4:
        shader.element_hash = r.u32()
    for _ in range(r.count(r.u32(), 3 if model == 3 else 10, "shader parameter")):
        name = r.cstring()
        if model == 3:
            shader.parameters.append(Parameter(name, r.u8(), r.u8()))
        else:
            shader.parameters.append(Parameter(name, r.u8(), 0, r.u32(), r.u32()))
    for _ in range(r.count(r.u32(), 2, "texture unit")):
        shader.texture_units.append(TextureUnit(r.cstring(), r.u8()))
    size_at = r.pos
    size = r.u32()
    if size != r.remaining:
        raise r.error(f"bytecode size {size}, but {r.remaining} bytes follow", size_at)
    shader.bytecode = r.rest()
    return shader


def write(shader: Shader) -> bytes:
    if shader.model not in MODELS:
        raise ValueError(f"cannot write shader model {shader.model}")
    w = Writer()
    w.bytes(MAGIC)
    w.u16(shader.shader_type)
    w.u16(shader.model)
    if shader.model == 4:
        w.u32(shader.element_hash)
    w.u32(len(shader.parameters))
    for p in shader.parameters:
        w.cstring(p.name)
        w.u8(p.register)
        if shader.model == 3:
            w.u8(p.registers)
        else:
            w.u32(p.offset)
            w.u32(p.size)
    w.u32(len(shader.texture_units))
    for t in shader.texture_units:
        w.cstring(t.name)
        w.u8(t.sampler)
    w.u32(len(shader.bytecode))
    w.bytes(shader.bytecode)
    return w.getvalue()


def summarize(shader: Shader) -> dict:
    params = []
    for p in shader.parameters:
        if shader.model == 3:
            params.append({"name": p.name, "register": p.register, "registers": p.registers})
        else:
            params.append(
                {"name": p.name, "cbuffer": p.register, "offset": p.offset, "size": p.size}
            )
    out = {
        "type": TYPE_NAMES[shader.shader_type],
        "model": shader.model,
        "parameters": params,
        "texture_units": [{"name": t.name, "sampler": t.sampler} for t in shader.texture_units],
        "bytecode": len(shader.bytecode),
    }
    if shader.model == 4:
        out["element_hash"] = shader.element_hash
    return out
