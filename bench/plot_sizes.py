"""Draw import time against size (reads the series from stdin as JSON, writes a PNG).

Started by ``bench/sizes_bench.py --plot`` with a Python that has matplotlib::

    {"title": ..., "x": [vertices, ...], "series": {"RigPort": [seconds, ...], ...}}

A series value of null (an importer this Blender lacks) is left out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

STYLE = {
    "RigPort": {"marker": "o", "linewidth": 2.5, "color": "#d62728"},
    "glTF": {"marker": "s", "color": "#1f77b4"},
    "C++ FBX": {"marker": "^", "color": "#2ca02c"},
}


def main() -> None:
    data = json.load(sys.stdin)
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    for name, seconds in data["series"].items():
        points = [(x, s) for x, s in zip(data["x"], seconds, strict=True) if s is not None]
        if points:
            xs, ys = zip(*points, strict=True)
            style = STYLE.get(name, {"marker": "x", "linestyle": "--", "color": "#7f7f7f"})
            ax.plot(xs, ys, label=name, **style)
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.6g}"))
        axis.set_minor_formatter(NullFormatter())
    ax.set_xticks(data["x"])
    ax.set_xlabel("vertices")
    ax.set_ylabel("import time, seconds (log)")
    ax.set_title(data["title"])
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    out = Path(sys.argv[1])
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
