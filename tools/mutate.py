"""Seeded mutation run over every codec entry point (a tool, not a test).

Each format's seeds (the real files under ``../shared/corpus`` and files our own
sample writers build) are damaged in many small ways: bit flips, bytes set to
0/0xFF/0x7F/0x80, 32-bit fields set to huge or negative integers or to NaN, Inf
and signalling NaN, truncation, duplicated and spliced chunks, inserted random
bytes, and (for text formats) numbers replaced by extreme ones. Every mutant
goes through what an import does: the reader, the writer on what was read, the
registry summary, and the neutral conversion the importer calls. It must either
get through or raise FormatError; anything else, or a mutant that uses more
than its CPU-time budget, is a failure and gets a reproducer file.

Usage (from the repository root)::

    python tools/mutate.py --format all --count 20000 --seed 1 --jobs 2 --out /tmp/mutants

``tests/codec/test_mutation.py`` runs a small fixed budget of the same
mutants in the suite. The time limit counts the process's CPU time
(``ITIMER_PROF``), so a loaded machine does not turn a slow mutant into a
failure; only real work does.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import runpy
import signal
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("RIGPORT_CORPUS", ROOT.parent / "shared" / "corpus"))
OUTCOMES = ("parsed", "FormatError", "other", "timeout")


def _package() -> None:
    """The repository as the package ``rigport`` without running its ``__init__``
    (which imports bpy): the codecs need only ``rigport.io_formats`` (loader.py)."""
    runpy.run_path(str(ROOT / "loader.py"))["package"]()


# ------------------------------------------------------------------ targets
@dataclass
class Target:
    """One codec entry point: its seeds, the extension of its reproducers and
    what an import does with a file (raises on failure)."""

    key: str
    ext: str
    seeds: Callable[[bool], list[tuple[str, bytes]]]
    run: Callable[[bytes], None]
    text: bool = False
    sources: list[tuple[str, bytes]] = field(default_factory=list)
    #: A file the mutant needs beside it to be imported: (extension, bytes).
    beside: Callable[[], tuple[str, bytes]] | None = None


def _corpus(*patterns: str) -> list[tuple[str, bytes]]:
    if not CORPUS.is_dir():
        return []
    out = []
    for pattern in patterns:
        for p in sorted(CORPUS.glob(pattern)):
            out.append((f"corpus/{p.relative_to(CORPUS)}", p.read_bytes()))
    return out


def _small(seeds: list[tuple[str, bytes]], small: bool, limit: int = 40_000):
    """In the suite's budget, only seeds small enough to run thousands of times."""
    return [s for s in seeds if not small or len(s[1]) <= limit]


@functools.cache
def targets() -> dict[str, Target]:
    """Every codec entry point the importers and ``batch.py`` reach, by key."""
    _package()
    from rigport.io_formats import registry
    from rigport.io_formats.bonespro import animation as bp_anim
    from rigport.io_formats.bonespro import convert as bp_convert
    from rigport.io_formats.bonespro import structure as bp_structure
    from rigport.io_formats.mrtk import convert as mrtk_convert
    from rigport.io_formats.mrtk import recording
    from rigport.io_formats.renderware import anim_convert, anm, clump_import, dff, ifp, img, txd
    from rigport.io_formats.unigine import anim, anim_file_convert, mesh, mesh_import
    from rigport.io_formats.urho3d import (
        ani,
        animation_convert,
        mdl,
        model_import,
        package,
        shader,
    )
    from rigport.io_formats.urho3d.formats import member_kind
    from rigport.samples import bonespro as bp_samples
    from rigport.samples import mrtk as mrtk_samples
    from rigport.samples import rbfx as rbfx_samples
    from rigport.samples import renderware as rw_samples
    from rigport.samples import unigine as ug_samples
    from rigport.samples import urho3d as u_samples
    from rigport.samples.renderware import ped_skeleton

    def codec(key: str, data: bytes):
        fmt = registry.by_key(key)
        obj = fmt.read(data)
        fmt.write(obj)
        fmt.summary(obj)
        return obj

    def run_mdl(data: bytes) -> None:
        model = codec("urho3d.mdl", data)
        model_import.import_model(model, "mutant", all_lods=True, convert=True)

    def run_ani(data: bytes) -> None:
        animation_convert.import_animation(codec("urho3d.ani", data), True)

    def run_pak(data: bytes) -> None:
        pkg = codec("urho3d.pak", data)
        for e in pkg.entries:
            kind = member_kind(e.name)
            if kind == "model":
                model_import.import_model(mdl.read(e.data), "mutant", all_lods=True)
            elif kind == "animation":
                animation_convert.import_animation(ani.read(e.data), True)
            elif kind == "shader":
                shader.read(e.data)

    def run_shader(data: bytes) -> None:
        codec("urho3d.shader", data)

    def run_umesh(data: bytes) -> None:
        mesh_import.import_mesh(codec("unigine.mesh", data), "mutant", 30.0)

    def run_uanim(data: bytes) -> None:
        anim_file_convert.import_anim_file(codec("unigine.anim", data), "mutant.anim", 30.0)

    def run_dff(data: bytes) -> None:
        clump_import.import_dff(codec("renderware.dff", data), "mutant")

    def run_mrtk(data: bytes) -> None:
        mrtk_convert.import_recording(codec("mrtk.input", data), True)

    def run_structure(data: bytes) -> None:
        bp_convert.structure_to_scene(codec("bonespro.structure", data), "mutant")

    def run_bp_anim(data: bytes) -> None:
        a = codec("bonespro.animation", data)
        bp_convert.header(a)
        if a.frame_count == 0 or a.mode == bp_anim.MESH_ABSOLUTE:
            return  # the importer refuses no frames; Mesh (absolute) needs no bones
        parents = np.arange(a.bone_count, dtype=np.int32) - 1  # a chain, as on an armature
        names = [f"bone{i}" for i in range(a.bone_count)]
        if a.mode == bp_anim.BONES:
            bp_convert.bones_to_neutral(a, names, parents, 30.0, "mutant")
            bone, node = bp_convert.bone_worlds(a, parents)
            bp_convert.affine_inverse(bone) @ node
        elif a.mode == bp_anim.MESH_BONES:
            worlds = np.broadcast_to(np.eye(4), (a.frame_count, a.bone_count, 4, 4))
            bp_convert.block_world_positions(a, worlds)

    ped = ped_skeleton(32)
    ped_bones = [(n, x["rw_bone_id"]) for n, x in zip(ped.names, ped.extras, strict=True)]

    def convert_ifp(f, bones) -> None:
        """What the IFP importer does with each animation but build the action:
        the neutral animation on the ped's bones, and the one-animation package
        kept with the action."""
        for a in f.animations:
            anim_convert.ifp_to_animation(a, bones)
            anim_convert.pack_source(f, a)

    def run_ifp(data: bytes) -> None:
        convert_ifp(codec("renderware.ifp", data), ped_bones)

    def run_anm(data: bytes) -> None:
        f = codec("renderware.anm", data)
        # The importer takes an armature with as many bones as the animation has nodes.
        bones = [f"bone{i}" for i in range(f.node_count())]
        anim_convert.anm_to_animation(f, bones, "mutant")

    def decode_txd(f) -> None:
        """Every raster and every mipmap level, as the TXD importer's Mipmap Levels."""
        for tex in f.textures():
            for level in range(len(tex.levels)):
                txd.decode(tex, level)

    def run_txd(data: bytes) -> None:
        decode_txd(codec("renderware.txd", data))

    def import_members(archive) -> None:
        """Every member the IMG importer takes, read and converted by its kind:
        models (with their clump's bones for the animations), then texture
        dictionaries, then animation packages."""
        bones = ped_bones
        for e in archive.entries:
            if img.kind_of(e.name) == "model":
                for clump in clump_import.import_dff(dff.read(archive.read(e.name)), "mutant"):
                    skeleton = clump.scene.skeleton
                    if skeleton is not None:
                        bones = [
                            (n, x.get("rw_bone_id"))
                            for n, x in zip(skeleton.names, skeleton.extras, strict=True)
                        ]
        for e in archive.entries:
            if img.kind_of(e.name) == "textures":
                decode_txd(txd.read(archive.read(e.name)))
        for e in archive.entries:
            if img.kind_of(e.name) == "animations":
                convert_ifp(ifp.read(archive.read(e.name)), bones)

    def run_img(data: bytes) -> None:
        import_members(codec("renderware.img", data))

    @functools.cache
    def v1_image() -> tuple[str, bytes]:
        return ".img", bytes(sample_archive(1).body)

    def run_dir(data: bytes) -> None:
        """A damaged ``.dir`` beside an intact version 1 ``.img``."""
        codec("renderware.dir", data)
        import_members(img.read_v1(data, v1_image()[1]))

    def urho_models(small: bool):
        seeds = _corpus("urho3d/*.mdl", "urho3d/*/*.mdl", "rbfx/*.mdl")
        seeds += [
            ("gen/skinned_small.mdl", mdl.write(u_samples.skinned_model(5, (6, 3), morphs=3))),
            ("gen/umd3.mdl", mdl.write(rbfx_samples.umd3_model())),
            (
                "gen/skinned_legacy.mdl",
                mdl.write(u_samples.skinned_model(4, (5, 3), legacy=True, lods=2)),
            ),
            ("gen/legacy_all_bits.mdl", mdl.write(u_samples.legacy_all_bits_model())),
        ]
        return _small(seeds, small)

    def urho_anims(small: bool):
        model = u_samples.skinned_model(n_bones=6)
        seeds = _corpus("urho3d/*.ani", "urho3d/*/*.ani")
        seeds += [
            ("gen/walk.ani", ani.write(u_samples.walk_animation(model, 5))),
            ("gen/uan2.ani", ani.write(rbfx_samples.uan2_animation())),
        ]
        return _small(seeds, small)

    def _small_package() -> bytes:
        pkg = package.new_package()
        for name, data in (("Data/readme.txt", b"RigPort"), ("Data/empty.xml", b"")):
            pkg.put(name, data)
        return package.write(pkg)

    def packages(small: bool):
        seeds = _corpus("rbfx/*.pak")
        seeds += [
            ("gen/plain.pak", rbfx_samples.sample_package()),
            ("gen/rbfx.pak", rbfx_samples.sample_package(rbfx=True)),
            # a package of a few bytes, like the corpus' PackageTest.pak: most mutants
            # then land in its file list (names, offsets, sizes) rather than in member
            # data, whose checksums turn nearly every mutant of a large package into
            # the same FormatError
            ("gen/small.pak", _small_package()),
        ]
        if package._lz4_block() is not None:
            seeds.append(("gen/compressed.pak", rbfx_samples.sample_package(compressed=True)))
        return _small(seeds, small, 200_000)

    def shaders(small: bool):
        return [
            ("gen/sm3.vs3", shader.write(rbfx_samples.shader_sm3())),
            ("gen/sm4.ps4", shader.write(rbfx_samples.shader_sm4())),
        ]

    def unigine_meshes(small: bool):
        skinned = ug_samples.skinned_mesh(4, 4, 6, 2, ("bulge",), 1, 4)
        return [
            ("gen/skinned.mesh", mesh.write(skinned)),
            ("gen/static.mesh", mesh.write(ug_samples.static_mesh(2, 3, 4))),
        ]

    def unigine_anims(small: bool):
        m = ug_samples.skinned_mesh(4, 4, 6, 1, (), 0, 4)
        return [("gen/clips.anim", anim.write(ug_samples.anim_file(m, n_frames=6)))]

    def clumps(small: bool):
        seeds = _corpus("renderware/*.dff")
        seeds += [
            ("gen/ped.dff", dff.write(rw_samples.skinned_ped(n_bones=6, rings=4, segments=5))),
            (
                "gen/ped_split.dff",
                dff.write(
                    rw_samples.skinned_ped(
                        "VC", 5, 3, 4, 2, True, 1, split=True, strips=True, unknown=True
                    )
                ),
            ),
            ("gen/static.dff", dff.write(rw_samples.static_clump(atomics=2))),
        ]
        return _small(seeds, small)

    def recordings(small: bool):
        rec = mrtk_samples.sample_recording
        seeds = [
            ("gen/camera_gaze.bin", recording.write(rec(keys=3, hands=False))),
            ("gen/simple.bin", recording.write(rec(layout="simple", keys=2, hands=False))),
            ("gen/hands.bin", recording.write(rec(keys=1, camera=False, gaze=False))),
        ]
        if not small:  # hands: 364 curves, ten times the time per mutant
            seeds += [
                ("gen/full.bin", recording.write(rec(keys=3))),
                ("gen/v10.bin", recording.write(rec((1, 0), keys=2))),
            ]
        return seeds

    def structures(small: bool):
        s = bp_samples.structure(12, names=["root", "spine", "arm", "leg"], parents=[-1, 0, 1, 0])
        return [
            ("gen/structure.txt", bp_structure.write(s)),
            ("gen/decorated.txt", bp_samples.decorate(bp_structure.write(s), 3)),
        ]

    def bp_anims(small: bool):
        s = bp_samples.structure(6, names=["root", "a", "b"], parents=[-1, 0, 1])
        out = []
        for mode in bp_anim.MODES:
            a = bp_samples.animation(s, mode, n_frames=3)
            out.append((f"gen/{mode}.txt", bp_anim.write(a)))
        euler = bp_samples.animation(
            s, bp_anim.BONES, bp_anim.RELATIVE, bp_anim.EULER, "ZXY", n_frames=2
        )
        out.append(("gen/euler.txt", bp_samples.decorate(bp_anim.write(euler), 1)))
        return out

    def rw_anims(small: bool):
        from rigport.samples import renderware_ifp as ifp_samples

        games = ("III", "SA") if small else ("III", "VC", "SA")
        seeds = [
            (f"gen/{g}.ifp", ifp.write(ifp_samples.walk_package(g, animations=2))) for g in games
        ]
        twins = ifp_samples.walk_package("SA", animations=2, frames=4)
        twins.animations[1].name_raw = twins.animations[0].name_raw
        return [*seeds, ("gen/same_names.ifp", ifp.write(twins))]

    def rw_anm(small: bool):
        from rigport.io_formats.renderware.chunks import TARGETS

        rng = np.random.default_rng(3)
        tracks = []
        for k in (2, 3, 4):
            times = np.concatenate([[0.0], np.sort(rng.uniform(0.1, 1.0, k - 1))])
            q = rng.normal(size=(k, 4))
            q /= np.linalg.norm(q, axis=1, keepdims=True)
            tracks.append((times, q, rng.normal(size=(k, 3))))
        return [("gen/walk.anm", anm.write(anm.from_tracks(tracks, TARGETS["SA"][2])))]

    def rw_txd(small: bool):
        from rigport.samples import renderware_txd as txd_samples

        twins = txd_samples.dictionary([("tex", "c8888", 4, 4), ("tex", "dxt1", 4, 4)])
        return [
            ("gen/every_layout.txd", txd_samples.every_layout("SA", 8 if small else 16)),
            ("gen/same_names.txd", twins),
        ]

    def sample_archive(version: int):
        """An archive holding what the IMG importer takes: a ped, its texture
        dictionary and an IFP whose objects name the ped's bones."""
        from rigport.samples import renderware_ifp as ifp_samples
        from rigport.samples import renderware_txd as txd_samples

        a = img.new_archive(version)
        a.put("ped.dff", dff.write(rw_samples.skinned_ped(n_bones=4, rings=3, segments=4)))
        a.put("ped.txd", txd_samples.every_layout("SA", 4))
        a.put("ped.ifp", ifp.write(ifp_samples.walk_package("SA", ped_skeleton(4), frames=4)))
        return a

    def rw_img(small: bool):
        return [("gen/gta3.img", img.write_image(sample_archive(2)))]

    def rw_dir(small: bool):
        return [("gen/gta3.dir", img.write_directory(sample_archive(1)))]

    found = [
        Target("urho3d.mdl", ".mdl", urho_models, run_mdl),
        Target("urho3d.ani", ".ani", urho_anims, run_ani),
        Target("urho3d.pak", ".pak", packages, run_pak),
        Target("urho3d.shader", ".vs3", shaders, run_shader),
        Target("unigine.mesh", ".mesh", unigine_meshes, run_umesh),
        Target("unigine.anim", ".anim", unigine_anims, run_uanim),
        Target("renderware.dff", ".dff", clumps, run_dff),
        Target("mrtk.input", ".bin", recordings, run_mrtk),
        Target("bonespro.structure", ".txt", structures, run_structure, text=True),
        Target("bonespro.animation", ".txt", bp_anims, run_bp_anim, text=True),
        Target("renderware.ifp", ".ifp", rw_anims, run_ifp),
        Target("renderware.anm", ".anm", rw_anm, run_anm),
        Target("renderware.txd", ".txd", rw_txd, run_txd),
        Target("renderware.img", ".img", rw_img, run_img),
        Target("renderware.dir", ".dir", rw_dir, run_dir, beside=v1_image),
    ]
    out = {t.key: t for t in found}
    missing = [f.key for f in registry.all_formats() if f.key not in out]
    for key in missing:  # a format added later still gets its reader and writer tried
        fmt = registry.by_key(key)
        out[key] = Target(key, fmt.extensions[0], lambda small: [], lambda d, k=key: codec(k, d))
    return out


# ------------------------------------------------------------------ mutations
INT_VALUES = (0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, 0x10000, 0xFFFF, 1_000_000, 0x40000000)
FLOAT_BITS = (0x7FC00000, 0x7F800000, 0xFF800000, 0x7F800001, 0xFFBFFFFF, 0x7F7FFFFF, 0x00000001)
SPECIAL = (0x00, 0xFF, 0x7F, 0x80)
TEXT_NUMBERS = (
    b"nan",
    b"inf",
    b"-inf",
    b"-1",
    b"0",
    b"1e30",
    b"-1e308",
    b"4294967296",
    b"1000000000000000000000000000000",
    b"1e-45",
    b"2147483648",
    b"65536",
)
_NUMBER = re.compile(rb"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")


def _pos(rng: np.random.Generator, n: int, width: int = 1) -> int:
    return int(rng.integers(0, max(n - width, 0) + 1))


def _put32(b: bytearray, at: int, value: int) -> None:
    b[at : at + 4] = (value & 0xFFFFFFFF).to_bytes(4, "little")


def mutate_once(rng: np.random.Generator, data: bytearray, other: bytes, text: bool) -> bytearray:
    """One random damage to ``data`` (``other`` is another seed, for splicing)."""
    n = len(data)
    if n == 0:
        return bytearray(rng.bytes(int(rng.integers(1, 16))))
    kind = int(rng.integers(0, 11 if text else 10))
    if kind == 0:  # bit flips
        for _ in range(int(rng.integers(1, 5))):
            at = _pos(rng, n)
            data[at] ^= 1 << int(rng.integers(0, 8))
    elif kind == 1:  # special bytes
        for _ in range(int(rng.integers(1, 5))):
            data[_pos(rng, n)] = SPECIAL[int(rng.integers(0, len(SPECIAL)))]
    elif kind in (2, 3) and n >= 4:  # an int32 field set huge or negative (aligned or not)
        at = _pos(rng, n, 4)
        if kind == 2:
            at &= ~3
        value = int(rng.choice(INT_VALUES)) if rng.random() < 0.7 else -int(rng.integers(1, 1000))
        _put32(data, at, value)
    elif kind == 4 and n >= 4:  # a float32 field set to NaN, Inf, signalling NaN ...
        _put32(data, _pos(rng, n, 4) & ~3, int(rng.choice(FLOAT_BITS)))
    elif kind == 5:  # truncation
        del data[int(rng.integers(0, n)) :]
    elif kind == 6:  # duplicate a chunk
        a = _pos(rng, n)
        b = min(n, a + int(rng.integers(1, 65)))
        chunk = data[a:b]
        at = a if rng.random() < 0.5 else _pos(rng, n)
        data[at:at] = chunk
    elif kind == 7:  # splice in a piece of another seed
        if other:
            a = _pos(rng, len(other))
            piece = other[a : a + int(rng.integers(1, 257))]
            at = _pos(rng, n)
            data[at : at + len(piece)] = piece
    elif kind == 8:  # insert random bytes
        at = _pos(rng, n)
        data[at:at] = rng.bytes(int(rng.integers(1, 17)))
    elif kind == 9:  # delete a run
        a = _pos(rng, n)
        del data[a : a + int(rng.integers(1, 33))]
    else:  # text: a number replaced by an extreme one
        numbers = list(_NUMBER.finditer(data))
        if numbers:
            m = numbers[int(rng.integers(0, len(numbers)))]
            data[m.start() : m.end()] = TEXT_NUMBERS[int(rng.integers(0, len(TEXT_NUMBERS)))]
    return data


def mutant(seeds: list[tuple[str, bytes]], seed: int, index: int, text: bool) -> tuple[str, bytes]:
    """The ``index``-th mutant of a run: the same seed and index give the same bytes."""
    rng = np.random.default_rng([seed, index])
    name, base = seeds[int(rng.integers(0, len(seeds)))]
    other = seeds[int(rng.integers(0, len(seeds)))][1]
    data = bytearray(base)
    for _ in range(int(rng.choice([1, 1, 1, 2, 3]))):
        data = mutate_once(rng, data, other, text)
    return name, bytes(data)


# ------------------------------------------------------------------ running
class Timeout(BaseException):  # noqa: N818 - not an Exception: codecs must not catch it
    """The mutant used more than its CPU-time budget."""


def _on_prof(signum, frame):
    raise Timeout


@dataclass
class Result:
    outcome: str
    detail: str = ""
    cpu: float = 0.0


def run_one(run: Callable[[bytes], None], data: bytes, cpu_limit: float) -> Result:
    """Run one mutant under a CPU-time limit (the main thread only: it uses SIGPROF)."""
    from rigport.io_formats.codec import FormatError

    previous = signal.signal(signal.SIGPROF, _on_prof)
    start = time.process_time()
    try:
        signal.setitimer(signal.ITIMER_PROF, cpu_limit)
        try:
            run(data)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
    except Timeout:
        return Result("timeout", f"over {cpu_limit} s of CPU time", time.process_time() - start)
    except FormatError:
        return Result("FormatError", cpu=time.process_time() - start)
    except Exception as err:  # noqa: BLE001 - every other exception is what we look for
        where = traceback.extract_tb(err.__traceback__)[-1]
        detail = f"{type(err).__name__}: {err} ({Path(where.filename).name}:{where.lineno})"
        return Result("other", detail, time.process_time() - start)
    finally:
        signal.signal(signal.SIGPROF, previous)
    return Result("parsed", cpu=time.process_time() - start)


def iter_results(
    target: Target, seed: int, start: int, stop: int, cpu_limit: float, small: bool
) -> Iterator[tuple[int, str, bytes, Result]]:
    if not target.sources:
        target.sources = target.seeds(small)
    seeds = target.sources
    for i in range(start, stop):
        name, data = mutant(seeds, seed, i, target.text)
        yield i, name, data, run_one(target.run, data, cpu_limit)


def _work(args: tuple) -> tuple[str, Counter, list, float]:
    warnings.simplefilter("ignore")  # numpy's warnings about NaN in mutants
    key, seed, start, stop, cpu_limit = args
    target = targets()[key]
    counts: Counter = Counter()
    failures = []
    slowest = 0.0
    for i, name, data, res in iter_results(target, seed, start, stop, cpu_limit, False):
        counts[res.outcome] += 1
        slowest = max(slowest, res.cpu)
        if res.outcome in ("other", "timeout"):
            failures.append((i, name, data, res.outcome, res.detail))
    return key, counts, failures, slowest


def _limit_memory(megabytes: int) -> None:
    try:
        import resource

        limit = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--format", default="all", help="a format key (urho3d.mdl ...) or all")
    ap.add_argument("--count", type=int, default=2000, help="mutants per format")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--cpu-limit", type=float, default=10.0, help="CPU seconds per mutant")
    ap.add_argument("--memory-mb", type=int, default=3000, help="address space per worker")
    ap.add_argument("--out", default="mutants", help="folder for reproducers of failures")
    args = ap.parse_args(argv)

    all_targets = targets()
    keys = list(all_targets) if args.format == "all" else args.format.split(",")
    unknown = [k for k in keys if k not in all_targets]
    if unknown:
        ap.error(f"unknown format {', '.join(unknown)}; known: {', '.join(all_targets)}")
    chunk = max(50, args.count // max(1, 8 * args.jobs))
    tasks = [
        (k, args.seed, a, min(a + chunk, args.count), args.cpu_limit)
        for k in keys
        for a in range(0, args.count, chunk)
    ]
    totals = {k: Counter() for k in keys}
    slowest = dict.fromkeys(keys, 0.0)
    failures: list = []
    began = time.monotonic()

    def add(result: tuple) -> None:
        key, counts, fails, slow = result
        totals[key].update(counts)
        slowest[key] = max(slowest[key], slow)
        failures.extend((key, *f) for f in fails)
        done = sum(sum(c.values()) for c in totals.values())
        print(f"{done} of {len(keys) * args.count} mutants", file=sys.stderr, flush=True)

    try:
        if args.jobs > 1:
            import multiprocessing

            ctx = multiprocessing.get_context("fork")
            with ctx.Pool(args.jobs, _limit_memory, (args.memory_mb,)) as pool:
                for result in pool.imap_unordered(_work, tasks):
                    add(result)
        else:
            _limit_memory(args.memory_mb)
            for task in tasks:
                add(_work(task))
    except KeyboardInterrupt:  # report what was done so far
        print("interrupted: the counts below are of the mutants done", file=sys.stderr)

    out = Path(args.out)
    if failures:
        out.mkdir(parents=True, exist_ok=True)
    for key, i, name, data, outcome, detail in failures:
        stem = out / f"{key}-s{args.seed}-{i}-{outcome}"
        (stem.parent / (stem.name + all_targets[key].ext)).write_bytes(data)
        (stem.parent / (stem.name + ".reason")).write_text(
            f"seed file {name}\n{outcome}: {detail}\n"
        )
    print(f"{'format':20} " + " ".join(f"{o:>11}" for o in OUTCOMES) + "  slowest CPU s")
    for k in keys:
        row = " ".join(f"{totals[k][o]:>11}" for o in OUTCOMES)
        print(f"{k:20} {row}  {slowest[k]:.3f}")
    kinds = Counter(
        (key, outcome, detail.split(" (")[0][:100]) for key, _, _, _, outcome, detail in failures
    )
    for (key, outcome, detail), n in kinds.most_common(40):
        print(f"  {n:6} {key} {outcome}: {detail}")
    print(
        f"{sum(sum(c.values()) for c in totals.values())} mutants in "
        f"{time.monotonic() - began:.0f} s; reproducers in {out if failures else '(none)'}"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
