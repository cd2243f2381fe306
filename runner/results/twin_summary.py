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


def twin_part(cfg, tasks: list, excluded: list[dict], records: list[AttemptRecord], out_dir: Path) -> TwinPart:
    """The twins' share of a job's end. `tasks` may include twins (`twin_of` set); none: only `originals` is set."""
    record_file = Path(out_dir) / "twins.json"
    made = json.loads(record_file.read_text()) if record_file.is_file() else {"twins": [], "skipped": []}
    twins = {t["id"]: (t["twin_of"], t["family"]) for t in made["twins"]}
    if not twins:
        return TwinPart(list(records))
    originals = [r for r in records if r.task_id not in twins]
    scoring = cfg.scoring
    scores = twin_scores(records, twins, scoring.ci_level, scoring.bootstrap_resamples, scoring.bootstrap_seed)
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
