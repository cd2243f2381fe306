"""figures/twins.png: per twin family, the originals' pass rate beside the twins', the drop's CI on the twin's bar."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from runner.results.report_figures import pyplot, save

TWINS = "twins.png"


def twin_figure(scores: Mapping[str, dict], level: float, heading: str):
    """Two bars per family (originals, twins; pass rate in % on the tasks compared); the twin's error bar is the
    original's rate minus the drop's CI, so it spans the twin rates the paired drop allows."""
    plt = pyplot()
    families = [f for f, s in scores.items() if s.get("ci_low") is not None]  # two tasks or more compared
    size = (max(5.5, 1.9 * len(families) + 1.5), 4.6)
    fig, ax = plt.subplots(figsize=size, layout="constrained")
    for x, family in enumerate(families):
        s = scores[family]
        original, twin = 100 * s["passed_original"], 100 * s["passed_twin"]
        low, high = original - 100 * s["ci_high"], original - 100 * s["ci_low"]
        ax.bar(
            x - 0.2,
            original,
            0.38,
            color="#9ecae1",
            edgecolor="black",
            linewidth=0.5,
            label="originals" if x == 0 else None,
        )
        ax.bar(
            x + 0.2,
            twin,
            0.38,
            color="#fdae6b",
            edgecolor="black",
            linewidth=0.5,
            yerr=[[max(0.0, twin - low)], [max(0.0, high - twin)]],
            capsize=5,
            label="twins" if x == 0 else None,
        )
        ax.text(
            x,
            max(original, high) + 2,
            f"drop {100 * s['drop']:+.1f}\n[{100 * s['ci_low']:+.1f}, {100 * s['ci_high']:+.1f}]\np={s['p']:.2g}",
            ha="center",
            va="bottom",
            fontsize=7,
        )
    ax.set_xticks(range(len(families)), [f"{f}\n({scores[f]['tasks']} tasks)" for f in families], fontsize=8)
    ax.set_ylim(0, 125)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("pass rate, first attempt (%)")
    ax.set_xlabel(f"error bar: the twins' rate the paired drop's {level:.0%} bootstrap CI allows", fontsize=8)
    if families:
        ax.legend(fontsize=8, loc="upper right")
    fig.suptitle(heading, fontsize=10)
    return fig


def write_twin_figure(scores: Mapping[str, dict], level: float, heading: str, folder: Path) -> Path:
    """Write figures/twins.png into `folder`; its path."""
    return save(twin_figure(scores, level, heading), Path(folder) / TWINS)
