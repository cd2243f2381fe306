"""What the verdicts of re-scored samples add up to: pass@k with confidence intervals per outcome and level, as
`runner.evaluate` prints them, and the efficiency table of the passing ones."""

from __future__ import annotations

from collections import Counter

from runner.config import Config
from runner.efficiency.cost import Efficiency
from runner.judging.samples import InputSample
from runner.outcome import Verdict
from runner.records import AttemptRecord
from runner.results.scoring import COMPLIANT, metric_key, summarize

PASS_AT_K = (1, 10, 100)
LEVEL_NAMES = {"base": "base", "base_plus": "base+plus"}
"""EvalPlus's names for its scores (runner.results.scoring.EVALPLUS_LEVELS)."""


def sample_record(sample: InputSample, verdict: Verdict, efficiency: Efficiency | None = None) -> AttemptRecord:
    """A sample's verdict as the attempt record runner.results.scoring reads (one attempt, no generation)."""
    return AttemptRecord(task_id=sample.task_id, sample=sample.completion_id, attempt=0, seed=0, model="",
                         messages=[], options={}, response="", code=sample.code, outcome=verdict.outcome,
                         final=True, suites=verdict.suite_passed(), violations=list(verdict.violations),
                         efficiency=None if efficiency is None else efficiency.to_record())  # fmt: skip


def efficiency_table(samples: list[InputSample], verdicts: list[Verdict], efficiencies: list[Efficiency | None],
                     cfg: Config) -> str:  # fmt: skip
    """The printed efficiency headline and per-task table (runner.results.efficiency_tables) of the measured samples."""
    from runner.results.efficiency_scores import score_records
    from runner.results.efficiency_tables import headline, task_lines

    records = [sample_record(s, v, e) for s, v, e in zip(samples, verdicts, efficiencies, strict=True)]
    e, level = cfg.efficiency, cfg.scoring.ci_level
    metrics, by_task = score_records(records, e.slow_ratio, e.lean_ratio, level, cfg.scoring.bootstrap_resamples,
                                     cfg.scoring.bootstrap_seed)  # fmt: skip
    if not metrics:
        return "efficiency: no sample passed, nothing measured"
    return "\n".join([headline(metrics, e.slow_ratio, e.lean_ratio, level), *task_lines(list(by_task.values()), level)])


def score(samples: list[InputSample], verdicts: list[Verdict], levels: tuple[str, ...] = ()) -> dict[str, float]:
    """runner.results.scoring's metrics of the verdicts: pass@k (k in PASS_AT_K, where every task has k scored
    samples) with bootstrap CIs, also at the extra suite `levels` (e.g. EvalPlus's base, base_plus)."""
    records = [sample_record(s, v) for s, v in zip(samples, verdicts, strict=True)]
    return summarize(records, ks=PASS_AT_K, levels=("all", COMPLIANT, *levels))


def _with_ci(metrics: dict[str, float], key: str) -> str:
    return f"{metrics[key]:.4f} (95% CI {metrics[key + '_ci_low']:.4f}-{metrics[key + '_ci_high']:.4f})"


def summary(samples: list[InputSample], verdicts: list[Verdict], levels: tuple[str, ...] = ()) -> str:
    """Per-outcome counts, pass@k and the `levels`' pass@1 (with CIs), as printed at the end of a run."""
    metrics = score(samples, verdicts, levels)
    outcomes = Counter(v.outcome.value for v in verdicts)
    lines = [f"{len(samples)} samples over {len({s.task_id for s in samples})} tasks"]
    lines += [f"  {name:<20} {count}" for name, count in outcomes.most_common()]
    scored_tasks = metrics.get(metric_key(1, "first") + "_tasks")
    for k in PASS_AT_K:
        if metrics.get(metric_key(k, "first") + "_tasks") == scored_tasks:
            lines.append(f"  {'pass@' + str(k):<20} {_with_ci(metrics, metric_key(k, 'first'))}")
            lines.append(
                f"  {'policy-compliant pass@' + str(k):<20} {_with_ci(metrics, metric_key(k, 'first', COMPLIANT))}"
            )
    lines += [f"  {LEVEL_NAMES[level] + ' pass@1':<20} {_with_ci(metrics, metric_key(1, 'first', level))}"
              for level in levels if metric_key(1, "first", level) in metrics]  # fmt: skip
    violating = sum(bool(v.violations) for v in verdicts)
    if violating:
        lines.append(f"  {violating} sample(s) broke gate rules (reported, not enforced; see `violations`)")
    unscored = sum(not v.outcome.scored for v in verdicts)
    if unscored:
        lines.append(f"  WARNING: {unscored} unscored sample(s) (harness errors) excluded from pass@k")
    return "\n".join(lines)
