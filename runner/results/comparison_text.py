"""Comparisons in words: a sentence per comparison for report.md, and the loud warning when two seeds of one model
differ detectably (runner.results.compare.compare_jobs)."""

from __future__ import annotations

from runner.results.compare import is_seed_check, seeds_label
from runner.results.noise import dominant
from runner.results.verdicts import A_BETTER, B_BETTER, NO_DIFFERENCE

COMPARISONS_NOTE = (
    "Each comparison pairs the tasks both runs scored: p is a paired t-test over tasks (valid with several "
    "samples per task), the verdict is at the CI level, and the SE is split as in eval-arena (Wang 2025): data "
    "noise (which tasks are in the set; only more tasks shrink it) and prediction noise (which answers were "
    "sampled; more samples shrink it), both per one sample per task. Seeds of one model are compared too: they "
    "should show no detectable difference."
)
STAGE_LABELS = {"first": "first attempt", "repair": "after repair"}


def _pts(x: float | None, sign: bool = False) -> str:
    if x is None:
        return "n/a"
    return f"{100 * x:+.1f}" if sign else f"{100 * x:.1f}"


def verdict_words(r: dict) -> str:
    """The verdict of comparison `r` in words: `alpha better`, `no detectable difference`."""
    return {A_BETTER: f"{r['model_a']} better", B_BETTER: f"{r['model_b']} better"}.get(
        r.get("verdict", NO_DIFFERENCE), "no detectable difference"
    )


def side(r: dict, which: str) -> str:
    """`alpha` or, for two seeds of one model, `alpha s1`."""
    if is_seed_check(r):
        return f"{r[f'model_{which}']} s{r[f'seed_{which}']}"
    return r[f"model_{which}"]


def noise_words(r: dict) -> str:
    """`SE 4.1 points (data 3.0, prediction 5.2 per sample; prediction noise dominates at k = 3)`."""
    text = f"SE {_pts(r.get('se_diff'))} points"
    if r.get("se_data") is None:
        return (
            text
            + " (one sample per task: data and prediction noise not split; "
            + f"single-sample SE {_pts(r.get('se_single'))})"
        )
    k = (r["k_a"] + r["k_b"]) / 2
    which = dominant(r["se_data"], r["se_prediction"], k)
    return (
        text + f" (data {_pts(r['se_data'])}, prediction {_pts(r['se_prediction'])} per sample; {which} noise "
        f"dominates at {r['k_a']}/{r['k_b']} samples per task)"
    )


def comparison_sentence(r: dict) -> str:
    """One line for one comparison of compare_jobs: rates, difference, CI, noise, p, MDE, verdict, McNemar."""
    head = f"- {side(r, 'a')} vs {side(r, 'b')} on {r['task_set']}, {seeds_label(r)}"
    if "refused" in r:
        return f"{head}: not paired: {r['refused']}"
    head += f", {STAGE_LABELS[r['stage']]}"
    if not r.get("tasks"):
        return f"{head}: no shared scored tasks"
    level = round(100 * r["ci_level"])
    p = "n/a" if r.get("p") is None else f"{r['p']:.3g}"
    ci = f"[{level}% CI {_pts(r.get('diff_ci_low'), True)}, {_pts(r.get('diff_ci_high'), True)}]"
    return (
        f"{head}: **{verdict_words(r)}**: {_pts(r['pass_rate_a'])} vs {_pts(r['pass_rate_b'])}, difference "
        f"{_pts(r['diff'], True)} points {ci}, {noise_words(r)}, paired t-test over {r['tasks']} tasks p = {p}; "
        f"the smallest difference these {r['tasks']} tasks and samples could detect (80% power) is "
        f"{_pts(r.get('mde'))} points. McNemar on the {r['pairs']} paired samples: {r['b']} / {r['c']} discordant, "
        f"p = {r['mcnemar_p']:.3g} (treats samples of one task as independent)"
    )


def seed_warnings(comparisons: list[dict]) -> list[str]:
    """A loud line per comparison of two seeds of one model whose verdict is not no_detectable_difference."""
    lines = []
    for r in comparisons:
        if is_seed_check(r) and r.get("verdict") not in (None, NO_DIFFERENCE):
            lines.append(
                f"> **WARNING: seeds {r['seed_a']} and {r['seed_b']} of {r['model_a']} on {r['task_set']} "
                f"({STAGE_LABELS[r['stage']]}) differ detectably: {_pts(r['diff'], True)} points, p = {r['p']:.3g}.** "
                "Two seeds of one model should not: the runs differ in more than the sampling (another model "
                "file, harness, prompt or server), or this is the 1-in-20 false alarm of a 95% test. Do not "
                "trust a ranking from these runs before finding out which."
            )
    return lines
