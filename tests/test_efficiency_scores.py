"""Efficiency scores on hand-built measurements: known geometric means, counts, EvalPerf's DPS, the paired ratio,
and where they show (record round trip, summary block, evaluate's output line, config checks, the figure)."""

import json
import math

import pytest

from runner.efficiency.cost import ERROR, MEASURED, NO_PERF_INPUTS, TOO_SLOW, Cost, Efficiency
from runner.outcome import Outcome
from runner.records import AttemptRecord, read_attempts
from runner.results.efficiency_scores import (
    dps,
    efficiency_metrics,
    geo_mean,
    geo_mean_ci,
    measured_by_task,
    paired_efficiency,
    score_records,
    task_efficiency,
)

REF = 1_000_000


def measured(ratio: float, memory: float = 1.0) -> Efficiency:
    """A measured candidate costing `ratio` times a reference of REF instructions (and `memory` times its peak)."""
    return Efficiency(
        status=MEASURED,
        candidate=Cost(MEASURED, instructions=round(ratio * REF), peak_bytes=round(memory * 65536), wall_s=0.01),
        reference=Cost(MEASURED, instructions=REF, peak_bytes=65536, wall_s=0.01),
        instructions_ratio=ratio,
        memory_ratio=memory,
    )


def stopped(status: str) -> Efficiency:
    return Efficiency(status=status, candidate=Cost(status, detail="stopped"), reference=Cost(MEASURED, REF))


def record(task: str, sample: int, attempt: int, final: bool, outcome=Outcome.PASSED, efficiency=None):
    return AttemptRecord(task_id=task, sample=sample, attempt=attempt, seed=0, model="m", messages=[], options={},
                         response="", code="def f(): pass", outcome=outcome, final=final,
                         efficiency=None if efficiency is None else efficiency.to_record())  # fmt: skip


def test_geo_mean_of_known_values_and_its_bootstrap_ci():
    assert geo_mean([1.0, 4.0]) == pytest.approx(2.0)
    assert geo_mean([0.5, 4.0, 32.0]) == pytest.approx(4.0)
    assert geo_mean_ci([3.0, 3.0, 3.0]) == pytest.approx((3.0, 3.0))
    low, high = geo_mean_ci([0.5, 4.0, 32.0], resamples=500)
    assert 0.5 <= low < 4.0 < high <= 32.0
    with pytest.raises(ValueError):
        geo_mean([1.0, 0.0])


def test_task_efficiency_means_counts_and_leaves_unmeasured_samples_out_of_the_means():
    samples = [measured(0.5, 1.0), measured(4.0, 1.0), measured(32.0, 8.0), stopped(TOO_SLOW), stopped(ERROR),
               Efficiency(status=NO_PERF_INPUTS)]  # fmt: skip
    t = task_efficiency("t", samples, slow_ratio=10.0, lean_ratio=1.0, resamples=300)
    assert t.instructions_ratio == pytest.approx(4.0)  # (0.5 * 4 * 32) ** (1/3)
    assert t.memory_ratio == pytest.approx(2.0)  # (1 * 1 * 8) ** (1/3)
    assert t.instructions_ratio_ci_low <= 4.0 <= t.instructions_ratio_ci_high
    assert (t.passes, t.measured, t.too_slow, t.errors, t.no_perf_inputs) == (6, 3, 1, 1, 1)
    assert t.slow_passes == 2  # 32x, and the too_slow answer (stopped over the budget)
    assert t.lean_passes == 1  # 0.5x
    assert t.samples_ratios == (0.5, 4.0, 32.0)
    row = t.row()
    assert row["efficiency_instructions_ratio"] == pytest.approx(4.0) and "efficiency_samples_ratios" not in row


def test_job_metrics_are_the_geometric_mean_over_tasks():
    tasks = [task_efficiency("a", [measured(2.0), measured(8.0)], resamples=100),  # 4.0
             task_efficiency("b", [measured(1.0)], resamples=100),  # 1.0
             task_efficiency("c", [stopped(TOO_SLOW)], resamples=100)]  # fmt: skip
    m = efficiency_metrics(tasks, resamples=300)
    assert m["efficiency_instructions_ratio"] == pytest.approx(2.0)
    assert m["efficiency_instructions_ratio_tasks"] == 2.0  # c has no measured ratio
    assert m["efficiency_instructions_ratio_ci_low"] <= 2.0 <= m["efficiency_instructions_ratio_ci_high"]
    assert (m["efficiency_passes"], m["efficiency_measured"], m["efficiency_too_slow"]) == (4.0, 3.0, 1.0)
    assert m["efficiency_lean_passes"] == 1.0 and m["efficiency_slow_passes"] == 1.0
    assert "efficiency_dps" not in m  # no task lists graded references
    assert efficiency_metrics([]) == {}


def test_dps_is_evalperfs_percentage_of_graded_references_matched_or_beaten():
    refs = (Cost(MEASURED, 1000), Cost(MEASURED, 500), Cost(MEASURED, 100))  # slow to fast
    assert dps(Cost(MEASURED, 50), refs) == pytest.approx((100.0, 100.0))
    assert dps(Cost(MEASURED, 100), refs) == pytest.approx((100.0, 100.0))  # matching the fastest counts
    assert dps(Cost(MEASURED, 300), refs) == pytest.approx((200 / 3, 200 / 3))
    assert dps(Cost(MEASURED, 800), refs) == pytest.approx((100 / 3, 100 / 3))
    assert dps(Cost(MEASURED, 2000), refs) == (0.0, 0.0)  # slower than the slowest reference
    assert dps(None, refs, too_slow=True) == (0.0, 0.0)
    assert dps(Cost(MEASURED, 50), (Cost(ERROR), *refs)) is None  # a reference not measured: no score
    graded = [dataclass_with(measured(0.3), references=refs, candidate=Cost(MEASURED, 300)),
              dataclass_with(measured(0.05), references=refs, candidate=Cost(MEASURED, 50))]  # fmt: skip
    t = task_efficiency("t", graded, resamples=50)
    assert t.dps == pytest.approx((200 / 3 + 100) / 2)
    assert efficiency_metrics([t], resamples=50)["efficiency_dps"] == pytest.approx(t.dps)


def dataclass_with(efficiency: Efficiency, **changes) -> Efficiency:
    import dataclasses

    return dataclasses.replace(efficiency, **changes)


def test_only_final_passing_attempts_count_and_records_round_trip(tmp_path):
    records = [
        record("a", 0, 0, False, Outcome.FAILED),
        record("a", 0, 1, True, efficiency=measured(3.0)),  # the repaired final attempt
        record("a", 1, 0, True, Outcome.FAILED),
        record("b", 0, 0, True),  # passed, not measured (efficiency off)
    ]
    path = tmp_path / "attempts.jsonl"
    path.write_text("".join(r.to_json() + "\n" for r in records))
    back = read_attempts(path)
    assert back[1].efficiency == json.loads(json.dumps(measured(3.0).to_record()))
    assert Efficiency.from_record(json.loads(json.dumps(back[1].efficiency))) == measured(3.0)
    by_task = measured_by_task(back)
    assert list(by_task) == ["a"] and by_task["a"] == [measured(3.0)]
    metrics, rows = score_records(back, resamples=50)
    assert metrics["efficiency_instructions_ratio"] == pytest.approx(3.0)
    assert rows["a"]["task_id"] == "a" and rows["a"]["efficiency_passes"] == 1


def test_paired_efficiency_compares_the_tasks_both_measured():
    a = [record("x", 0, 0, True, efficiency=measured(4.0)), record("y", 0, 0, True, efficiency=measured(1.0))]
    b = [record("x", 0, 0, True, efficiency=measured(2.0)), record("y", 0, 0, True, efficiency=measured(2.0)),
         record("z", 0, 0, True, efficiency=measured(9.0))]  # fmt: skip
    r = paired_efficiency(a, b, resamples=200)
    assert r["efficiency_tasks"] == 2
    assert r["efficiency_ratio"] == pytest.approx(1.0)  # sqrt(4/2 * 1/2)
    assert r["efficiency_ratio_ci_low"] <= 1.0 <= r["efficiency_ratio_ci_high"]
    assert paired_efficiency(a, [record("z", 0, 0, True, efficiency=measured(1.0))]) == {}


def test_summary_shows_an_efficiency_block_only_when_measured():
    from runner.compose import compose_config
    from runner.results.scoring import summarize, task_table
    from runner.results.summary import summary_table

    cfg = compose_config([])
    plain = [record("a", 0, 0, True), record("b", 0, 0, True, Outcome.FAILED)]
    assert "efficiency" not in summary_table(cfg, summarize(plain, resamples=20), task_table(plain))
    recs = [record("a", 0, 0, True, efficiency=measured(12.0, 2.0)), record("b", 0, 0, True, efficiency=measured(0.5))]
    metrics, by_task = score_records(recs, resamples=50)
    rows = [{**r, **by_task.get(r["task_id"], {})} for r in task_table(recs)]
    table = summary_table(cfg, {**summarize(recs, resamples=20), **metrics}, rows)
    assert f"efficiency: instructions {math.sqrt(6):.3g}x" in table  # sqrt(12 * 0.5)
    assert "1 slow (> 10x" in table and "1 lean (<= 1x)" in table
    assert "| a | 1/1 | 12x" in table and "| b | 1/1 | 0.5x" in table


def test_evaluate_output_line_gains_efficiency_only_when_measured():
    from runner.judging.samples import InputSample, result_row
    from runner.outcome import Verdict

    task = type("T", (), {"suites": {}})()
    sample, verdict = InputSample("t", 0, "code"), Verdict(outcome=Outcome.PASSED)
    assert "efficiency" not in result_row(sample, task, verdict)
    assert result_row(sample, task, verdict, efficiency=None)["efficiency"] is None
    assert result_row(sample, task, verdict, efficiency=measured(2.0))["efficiency"]["instructions_ratio"] == 2.0


@pytest.mark.parametrize(
    ("override", "message"),
    [("efficiency.budget=0.5", "efficiency.budget=0.5 is not allowed"),
     ("efficiency.slow_ratio=80", "exceeds efficiency.budget"),
     ("efficiency.inputs_per_task=0", "efficiency.inputs_per_task=0 is not allowed")],
)  # fmt: skip
def test_bad_efficiency_settings_fail_in_one_line(override, message):
    from runner.compose import compose_config
    from runner.validation import ConfigError, typed_config

    with pytest.raises(ConfigError, match=message):
        typed_config(compose_config([override]))


def test_seed10_turns_efficiency_on_and_the_benchmarks_leave_it_off():
    from runner.compose import compose_config
    from runner.validation import typed_config

    assert typed_config(compose_config([])).efficiency.enabled is True
    assert typed_config(compose_config(["efficiency=off"])).efficiency.enabled is False
    assert typed_config(compose_config(["efficiency.enabled=false"])).efficiency.enabled is False
    assert typed_config(compose_config(["task_set=humanevalplus"])).efficiency.enabled is False
    assert typed_config(compose_config(["task_set=humanevalplus", "efficiency=on"])).efficiency.enabled is True


def test_the_figure_draws_every_task_of_every_run(tmp_path):
    from PIL import Image

    from runner.results.efficiency_figure import efficiency_figure, write_efficiency_figure
    from runner.results.job_folder import Job

    a = Job(tmp_path, "m1", 1, [record("x", 0, 0, True, efficiency=measured(4.0)),
                                record("y", 0, 0, True, efficiency=stopped(TOO_SLOW))], label="m1 s1")  # fmt: skip
    b = Job(tmp_path, "m2", 1, [record("x", 0, 0, True, efficiency=measured(0.5))], label="m2 s1")
    fig = efficiency_figure([a, b])
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y"]
    assert any(line.get_ydata()[0] == 1.0 for line in ax.get_lines())  # the reference line
    assert any("too slow" in t.get_text() for t in ax.texts)
    path = write_efficiency_figure([a, b], tmp_path / "e.png")
    assert Image.open(path).size[0] > 500
