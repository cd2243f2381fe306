"""The end-of-job summary: a Markdown table a person can read, from the per-task rows and the metrics."""

from __future__ import annotations

from pathlib import Path

from runner.config import Config
from runner.results.efficiency_tables import summary_block
from runner.results.run_limits import limits_lines
from runner.results.scoring import UNSCORED

WRITTEN_FIRST = ("config.yaml", "attempts.jsonl", "gold.json")  # before the summary, when the job writes them
WRITTEN_WITH_SUMMARY = ("summary.md", "summary.json", "run.json", "dataset.json")


def summary_table(cfg: Config, metrics: dict, rows: list[dict]) -> str:
    """Markdown: per-task outcomes (`rows` from runner.results.scoring.task_table), then the totals first vs after
    repair with pass@1 and its CI, functional and policy-compliant (passed with no gate violation) side by side.

    Pass counts are over scored samples only; the headline names the unscored ones (backend or harness
    errors) apart, as pass@1 excludes them. Where passing answers were measured (`efficiency_...` metrics and
    row columns, runner.results.efficiency_scores), an efficiency block follows.
    """
    lines = [
        f"## {cfg.model.name} (seed {cfg.seed}) on {cfg.task_set.name}",
        "",
        "| task | first attempt | after repair | passed first | passed after repair | attempts | audit |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        audit = "" if r["audit_score"] is None else f"{r['audit_score']:.2f}"
        lines.append(
            f"| {r['task_id']} | {r['outcomes_first']} | {r['outcomes_repair']} "
            f"| {r['passed_first']}/{r['scored_first']} | {r['passed_repair']}/{r['scored_repair']} "
            f"| {r['attempts']} | {audit} |"
        )
    first, final = sum(r["passed_first"] for r in rows), sum(r["passed_repair"] for r in rows)
    scored_first, scored_repair = sum(r["scored_first"] for r in rows), sum(r["scored_repair"] for r in rows)
    compliant_first, compliant_repair = (sum(r[f"compliant_{stage}"] for r in rows) for stage in ("first", "repair"))
    headline = (
        f"**Passed: {first}/{scored_first} first attempt, {final}/{scored_repair} after repair "
        f"(policy-compliant: {compliant_first}/{scored_first}, {compliant_repair}/{scored_repair}; "
        f"gate mode {cfg.gate.mode}).**"
    )
    unscored = {u.value: int(metrics.get(f"outcome_repair_{u.value}_count", 0)) for u in sorted(UNSCORED)}
    if any(unscored.values()):
        counts = ", ".join(f"{k}×{v}" for k, v in unscored.items() if v)
        headline += f" Not scored: {sum(unscored.values())} sample(s) ({counts})."
    lines += ["", headline, _answer_counts(cfg, metrics)]
    for stage in ("first", "repair"):
        key = f"pass_at_1_{stage}"
        if key in metrics:
            lines.append(
                f"pass@1 {stage}: {_with_ci(metrics, key, cfg.scoring.ci_level)}; "
                f"policy-compliant: {_with_ci(metrics, key + '_compliant', cfg.scoring.ci_level)}"
            )
        for level, name in (("_base", "base pass@1"), ("_base_plus", "base+plus pass@1")):
            if key + level in metrics:  # EvalPlus task sets only (runner.results.scoring.EVALPLUS_LEVELS)
                lines.append(f"{name} {stage}: {_with_ci(metrics, key + level, cfg.scoring.ci_level)}")
    eff = cfg.efficiency  # the efficiency block, when passing answers were measured (runner.efficiency)
    lines += summary_block(metrics, rows, eff.slow_ratio, eff.lean_ratio, cfg.scoring.ci_level)
    lines += limits_lines(cfg, metrics, rows)  # ends the summary: runner.results.run_limits
    return "\n".join(lines)


def _answer_counts(cfg: Config, metrics: dict) -> str:
    """How many answers hit the token limit and how many were sanitized, first attempt and final."""
    parts = []
    for stage, name in (("first", "first attempt"), ("repair", "final attempt")):
        present = int(sum(v for k, v in metrics.items() if k.startswith(f"outcome_{stage}_") and k.endswith("_count")))
        at_limit = int(metrics.get(f"answers_at_token_limit_{stage}", 0))
        sanitized = int(metrics.get(f"answers_sanitized_{stage}", 0))
        parts.append(f"{name}: {at_limit}/{present} at the token limit, {sanitized}/{present} sanitized")
    return f"Answers (num_predict {cfg.sampling.num_predict}): " + "; ".join(parts) + "."


def _with_ci(metrics: dict, key: str, level: float) -> str:
    if key not in metrics:
        return "n/a"
    low, high = metrics.get(f"{key}_ci_low"), metrics.get(f"{key}_ci_high")
    ci = f" ({level:.0%} CI {low:.3f}–{high:.3f})" if low is not None else ""
    return f"{metrics[key]:.3f}{ci}"


def files_line(out_dir: Path, figures: list[Path]) -> str:
    """One line naming the files the job wrote into `out_dir`: its records and config, the summary files
    written with this summary, and `figures` (runner.results.job_figures)."""
    out_dir = Path(out_dir)
    names = [n for n in WRITTEN_FIRST if (out_dir / n).is_file()] + list(WRITTEN_WITH_SUMMARY)
    names += [Path(p).relative_to(out_dir).as_posix() for p in figures]
    return f"Files in {out_dir}: " + ", ".join(names)
