"""Verdict stability (judging.repeats): a candidate or a reference whose verdict changes from run to run is flaky.

The harness's own randomness is made on purpose here: a hidden test that flips a coin (os.urandom(1)[0] < 128;
the sandbox seeds `random` itself).
Judged 12 times, its verdict stays the same with probability 2 / 2**12 (0.05%).
"""

from __future__ import annotations

import json

import yaml

from runner.kinds.base import Bench
from runner.kinds.registry import check_references
from runner.records import read_attempts
from tests.test_gold import pool, task  # noqa: F401 (the pool fixture)
from tests.test_report_real_folders import ROOT, command, run, server  # noqa: F401 (the server fixture)

COIN = "import os\n\ndef test_coin():\n    assert os.urandom(1)[0] < 128\n"
REPEATS = 12


def test_a_reference_whose_result_changes_is_flaky_and_a_steady_one_is_not(pool):  # noqa: F811
    tasks = [task("steady"), task("coin", hidden=COIN)]
    once = {r.task_id: r.status for r in check_references(tasks, Bench(pool))}
    assert once["steady"] == "ok" and once["coin"] in ("ok", "test_failed")  # one run cannot tell
    results = {r.task_id: r for r in check_references(tasks, Bench(pool, gold_repeats=REPEATS))}
    assert results["steady"].status == "ok"
    assert results["coin"].status == "flaky"
    assert results["coin"].detail.startswith(f"the reference's result changed over {REPEATS} runs (")


def test_a_job_judges_each_candidate_k_times_and_reports_the_flaky_apart(tmp_path, server):  # noqa: F811
    spec = yaml.safe_load((ROOT / "tasks" / "seed10" / "two_sum.yaml").read_text())
    spec["suites"] = {"visible": spec["suites"]["visible"], "hidden": COIN}
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "two_sum.yaml").write_text(yaml.safe_dump(spec))
    cmd = [part for part in command(tmp_path, "job", server) if not part.startswith("task_set.ids")]
    out = run([*cmd, f"task_set.path={folder}", "task_set.name=coin", "repair=none", "sampling.n=2", "model.id=coder-a",
               f"judging.repeats={REPEATS}", "tracking=off"])  # fmt: skip
    records = read_attempts(tmp_path / "job" / "attempts.jsonl")
    assert len(records) == 2 and all(len(r.rejudged) == REPEATS - 1 for r in records)
    assert records[0].rejudged == records[1].rejudged  # one distinct candidate: judged 12 times once, not twice
    assert all(r.flaky for r in records)
    summary = json.loads((tmp_path / "job" / "summary.json").read_text())
    assert summary["flaky_verdicts_repair"] == 2
    assert f"each distinct candidate judged {REPEATS} times; 2 final verdict(s) changed" in out.stdout
