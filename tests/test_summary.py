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
