"""The end-of-job summary: its headline counts scored samples only and names the unscored ones apart."""

from runner.results.scoring import summarize, task_table
from runner.results.summary import summary_table
from tests.conftest import compose_config
from tests.test_scoring import rec


def test_headline_counts_only_scored_samples_and_names_the_unscored():
    records = [rec("a", "passed"), rec("b", "failed"), rec("c", "backend_error"), rec("d", "harness_error"),
               rec("e", "backend_error")]  # fmt: skip
    table = summary_table(compose_config([]), summarize(records, resamples=20), task_table(records))
    headline = next(line for line in table.splitlines() if line.startswith("**Passed"))
    assert headline == (
        "**Passed: 1/2 first attempt, 1/2 after repair (policy-compliant: 1/2, 1/2; gate mode enforce).** "
        "Not scored: 3 sample(s) (backend_error×2, harness_error×1)."
    )
    assert "| c | backend_error | backend_error | 0/0 | 0/0 |" in table


def test_headline_without_unscored_samples_says_nothing_more():
    records = [rec("a", "passed"), rec("b", "failed")]
    table = summary_table(compose_config([]), summarize(records, resamples=20), task_table(records))
    headline = "**Passed: 1/2 first attempt, 1/2 after repair (policy-compliant: 1/2, 1/2; gate mode enforce).**"
    assert headline in table.splitlines()


def test_the_summary_ends_with_what_the_run_can_and_cannot_say():
    # 12 tasks x 4 samples: t0-t3 always pass, t4-t7 never, t8-t11 pass 2 of 4 (the unstable ones)
    records = [
        rec(f"t{i}", "passed" if i < 4 or (i >= 8 and s < 2) else "failed", sample=s)
        for i in range(12)
        for s in range(4)
    ]
    table = summary_table(compose_config([]), summarize(records, resamples=20), task_table(records))
    section = table.split("### What this run can and cannot say")[1].strip().splitlines()
    assert section[0].startswith("- Score: pass@1 0.500 (95% CI ") and "over 12 tasks × 4 sample(s)" in section[0]
    assert "data noise dominates, so more tasks, not more samples" in section[0]
    assert section[1].startswith("- To be told apart from another run of this size (paired over these 12 tasks")
    assert section[2] == (
        "- Tasks across this run's samples: 4 stable-pass, 4 stable-fail, 4 unstable: t8 (2/4), t9 (2/4), "
        "t10 (2/4), t11 (2/4)."
    )
    assert section[3].startswith("- Verdicts: judged once each (judging.repeats=1)")
    assert section[4].startswith("- Memorisation: not probed (twins=off;")
    probed = summary_table(compose_config(["twins=all"]), summarize(records, resamples=20), task_table(records))
    assert "- Memorisation: probed with twins=all: the drop per family is in the twins table" in probed
