"""How the codec's cost grows with the sizes an attacker controls (a tool, not a test).

For each case a file with N items and one with 8N are built by our own writers
(or byte by byte), and the codec path an import takes is timed on each (CPU
time of this process, the best of several runs, so a loaded machine does not
change the numbers much). The growth exponent is log2(t(8N) / t(N)) / 3: 1 is
linear, 2 quadratic. Issue 26 wants at most 1.1 up to N = 4,000.

Cases:

* ``package``: a valid UPAK with N files, every other one empty (the empty
  files' layout was quadratic in empty x non-empty files);
* ``package-overlap``: a ULZ4 whose N files all claim the same bytes, N/8 KiB
  of them (each file was unpacked and hashed before the overlap was refused);
* ``img``: an IMG version 2 archive with N members, each looked up by name as
  the IMG importer does (a linear search per lookup).

Usage (from the repository root)::

    .venv/bpy50/bin/python tools/cost.py            # N = 500 and 4,000
    .venv/bpy50/bin/python tools/cost.py --n 1000 --repeat 5 --limit 1.1

The exit status is 1 when an exponent is above ``--limit``.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _package() -> None:
    """The repository as the package ``rigport`` without running its ``__init__``
    (which imports bpy): the codecs need only ``rigport.io_formats``."""
    if "rigport" in sys.modules:
        return
    spec = importlib.util.spec_from_loader("rigport", loader=None, is_package=True)
    module = importlib.util.module_from_spec(spec)
    module.__path__ = [str(ROOT)]
    sys.modules["rigport"] = module


def package_with_empty_files(n: int) -> bytes:
    """A valid UPAK of ``n`` files, every other one empty."""
    from rigport.io_formats.urho3d import package

    pkg = package.new_package()
    for i in range(n):
        pkg.entries.append(package.Entry(f"d/{i:05d}.bin", b"" if i % 2 else b"data %05d" % i))
    return package.write(pkg)


def overlapping_package(n: int) -> bytes:
    """A ULZ4 of ``n`` files that all claim the same stored bytes, whose size grows
    with ``n`` too; each file and the package checksum are right."""
    from rigport.io_formats.urho3d import package

    content = bytes(range(256)) * max(n // 8, 1)
    pkg = package.new_package(compressed=True)
    pkg.entries = [package.Entry(f"f/{i:05d}.bin", content if i == 0 else b"") for i in range(n)]
    data = bytearray(package.write(pkg))
    crc = package.sdbm(content)
    step = pow(package.SDBM_FACTOR, len(content), 1 << 32)
    total = 0
    pos, first = package._URHO_HEADER, None
    for _ in range(n):
        pos = data.index(b"\0", pos) + 1
        first = struct.unpack_from("<I", data, pos)[0] if first is None else first
        struct.pack_into("<III", data, pos, first, len(content), crc)
        total = (total * step + crc) & 0xFFFFFFFF  # the SDBM hash of every file in turn
        pos += 12
    struct.pack_into("<I", data, 8, total)
    return bytes(data)


def img_archive(n: int) -> bytes:
    """An IMG version 2 archive of ``n`` one-sector members sharing one sector."""
    from rigport.io_formats.renderware import img

    head = -(-(8 + img.ENTRY.size * n) // img.SECTOR)
    rows = b"".join(
        img.ENTRY.pack(head, 1, 0, f"m{i:05d}.dff".encode().ljust(img.NAME, b"\0"))
        for i in range(n)
    )
    data = img.MAGIC_V2 + struct.pack("<I", n) + rows
    return data + bytes((head + 1) * img.SECTOR - len(data))


def _read_package(data: bytes) -> None:
    from rigport.io_formats.urho3d import package

    package.read(data)


def _refuse_package(data: bytes) -> None:
    from rigport.io_formats.codec import FormatError
    from rigport.io_formats.urho3d import package

    try:
        package.read(data)
    except FormatError as err:
        if "overlap" in err.message:
            return
        raise
    raise AssertionError("the overlapping package was read")


def _read_every_member(data: bytes) -> None:
    from rigport.io_formats.renderware import img

    a = img.read_v2(data)
    for name in a.names():
        a.read(name)


CASES: dict[str, tuple[Callable[[int], bytes], Callable[[bytes], None]]] = {
    "package": (package_with_empty_files, _read_package),
    "package-overlap": (overlapping_package, _refuse_package),
    "img": (img_archive, _read_every_member),
}


def cpu_time(run: Callable[[bytes], None], data: bytes, repeat: int) -> float:
    """The best CPU time of ``repeat`` runs, in seconds."""
    best = math.inf
    for _ in range(repeat):
        start = time.process_time()
        run(data)
        best = min(best, time.process_time() - start)
    return best


def exponent(small: float, large: float, factor: int = 8) -> float:
    """The growth exponent from the times at N and ``factor`` N."""
    return math.log2(max(large, 1e-9) / max(small, 1e-9)) / math.log2(factor)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=500, help="the smaller size (the larger is 8n)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size (the best counts)")
    parser.add_argument("--limit", type=float, default=1.1, help="the highest exponent allowed")
    parser.add_argument("--case", choices=sorted(CASES), action="append", help="default: all")
    args = parser.parse_args(argv)
    _package()
    worst = 0.0
    print(f"{'case':<16} {'N':>6} {'t(N) s':>9} {'8N':>6} {'t(8N) s':>9} {'exponent':>8}")
    for name in args.case or list(CASES):
        build, run = CASES[name]
        small, large = build(args.n), build(8 * args.n)
        run(small)  # imports and caches outside the timing
        t1, t8 = cpu_time(run, small, args.repeat), cpu_time(run, large, args.repeat)
        e = exponent(t1, t8)
        worst = max(worst, e)
        print(f"{name:<16} {args.n:>6} {t1:>9.4f} {8 * args.n:>6} {t8:>9.4f} {e:>8.2f}")
    print(f"highest exponent {worst:.2f} (limit {args.limit})")
    return 1 if worst > args.limit else 0


if __name__ == "__main__":
    sys.exit(main())
