"""The chart of issue 22's targets (docs/benchmarks-load.png) from the figures recorded in
docs/benchmarks-load.json: each figure is a ratio a benchmark command printed (the command is kept
with it), before and after a change, against its target.

    python python/benchmarks/load_chart.py [--figures docs/benchmarks-load.json] [--out docs/benchmarks-load.png]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(argv) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--figures", type=Path, default=ROOT / "docs" / "benchmarks-load.json")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks-load.png")
    args = parser.parse_args(argv)
    figures = json.loads(args.figures.read_text())

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = figures["panels"]
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.8),
                             gridspec_kw={"width_ratios": [max(2, len(p["bars"])) for p in panels]})
    for ax, panel in zip(axes, panels):
        bars = panel["bars"]
        xs = range(len(bars))
        width = 0.38
        before = [b.get("before") for b in bars]
        after = [b["after"] for b in bars]
        ax.bar([x - width / 2 for x in xs], [v or 0 for v in before], width, label="before", color="#b0b0b0")
        ax.bar([x + width / 2 for x in xs], after, width, label="after", color="#3b75af")
        for x, b in zip(xs, bars):
            ax.hlines(b["target"], x - 0.45, x + 0.45, colors="#c03030", linestyles="dashed")
            if b.get("before") is not None:
                ax.annotate(f"{b['before']:.2f}", (x - width / 2, b["before"]), ha="center", va="bottom", fontsize=8)
            ax.annotate(f"{b['after']:.2f}", (x + width / 2, b["after"]), ha="center", va="bottom", fontsize=8)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([b["label"] for b in bars], fontsize=8)
        ax.set_ylabel(panel["unit"])
        ax.set_title(panel["title"], fontsize=10)
        ax.plot([], [], color="#c03030", linestyle="dashed", label="target")
        ax.legend(fontsize=8)
    fig.suptitle(f"Issue 22, loading at decode speed ({figures['machine']}, {figures['date']})", fontsize=11)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
