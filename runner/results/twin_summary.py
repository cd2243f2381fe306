"""A job's twins at its end: the originals' records apart (the headline pass@k is theirs alone), the probe's score
per family (runner.results.twin_scores) with what was made, skipped and gold-excluded, its table and figure."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from runner.records import AttemptRecord
from runner.results.twin_figure import write_twin_figure
from runner.results.twin_scores import twin_metrics, twin_scores, twin_table

log = logging.getLogger(__name__)


@dataclass
class TwinPart:
    """The originals' records, and the twins' table lines, summary.json section, flat metrics and figures."""

    originals: list[AttemptRecord]
    lines: list[str] = field(default_factory=list)
    nested: dict = field(default_factory=dict)
    flat: dict[str, float] = field(default_factory=dict)
    figures: list[Path] = field(default_factory=list)
    twin_ids: frozenset[str] = frozenset()


TWINS_FILE = "twins.json"
"""A job folder's record of its twins (runner.twins.make.twins_record): each twin's id, original and family."""


def twins_made(job_dir: Path) -> dict:
    """The job folder's twins.json, or an empty record for a job without twins."""
    path = Path(job_dir) / TWINS_FILE
    return json.loads(path.read_text()) if path.is_file() else {"twins": [], "skipped": []}


def twin_map(made: dict) -> dict[str, tuple[str, str]]:
    """Twin id -> (its original's id, its family), from a twins.json record."""
    return {t["id"]: (t["twin_of"], t["family"]) for t in made["twins"]}


def twin_part(cfg, excluded: list[dict], records: list[AttemptRecord], out_dir: Path) -> TwinPart:
    """The twins' share of a job's end (its twins from twins.json; none: only `originals` is set)."""
    made = twins_made(out_dir)
    twins = twin_map(made)
    if not twins:
        return TwinPart(list(records))
    originals = [r for r in records if r.task_id not in twins]
    scoring = cfg.scoring
    scores = twin_scores(records, twins, scoring.ci_level)
    gold_out = {r["task_id"]: f"{r['status']}: {r['detail']}"[:300] for r in excluded if r["task_id"] in twins}
    nested = {}
    for family in {f for _, f in twins.values()}:
        ids = [i for i, (_, f) in twins.items() if f == family]
        score = scores.get(family, {"tasks": 0, "drop": None, "suspects": [], "reverse": []})
        nested[family] = {
            **score,
            "made": len(ids),
            "not_made": sum(s["family"] == family for s in made["skipped"]),
            "gold_excluded": {i: gold_out[i] for i in ids if i in gold_out},
        }
        scores.setdefault(family, score)
    part = TwinPart(originals, twin_table(scores, scoring.ci_level), nested, twin_metrics(scores))
    part.twin_ids = frozenset(twins)
    part.lines.append(
        f"Twins made {len(twins)}, gold-excluded {len(gold_out)}, not made "
        f"{len(made['skipped'])} (reasons: twins.json, gold.json)."
    )
    try:
        heading = f"{cfg.model.name} on {cfg.task_set.name}: originals vs twins (first attempt)"
        part.figures.append(write_twin_figure(scores, scoring.ci_level, heading, Path(out_dir) / "figures"))
    except Exception as exc:  # the job's results stand without the figure
        log.warning("twins figure not written (%s: %s)", type(exc).__name__, exc)
    return part


def report_lines(scored: list[tuple[str, dict]]) -> list[str]:
    """The report's twins section: per family, each job's drop with its CI and p ("A drops 14.0 points [8.0, 20.0]
    on rename twins"); `scored` holds (job label, its twin_scores)."""
    families = list(dict.fromkeys(f for _, scores in scored for f in scores))
    lines = []
    for family in families:
        parts = []
        for label, scores in scored:
            s = scores.get(family)
            if s is None or s.get("ci_low") is None:  # fewer than two tasks compared
                continue
            parts.append(
                f"{label} drops {100 * s['drop']:.1f} points [{100 * s['ci_low']:.1f}, "
                f"{100 * s['ci_high']:.1f}] (p={s['p']:.2g}; {s['tasks']} tasks, "
                f"{100 * s['passed_original']:.1f}% → {100 * s['passed_twin']:.1f}%; "
                f"{len(s['suspects'])} suspect(s))"
            )
        if parts:
            lines.append(f"- **{family}** twins: " + "; ".join(parts))
    return lines
