"""The job and sweep figures at their edges: nothing recorded, benchmark size with many samples, one model."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from runner.results.compare import compare_jobs
from runner.results.job_figures import MAX_SAMPLES_SHOWN, pass_at_1_figure, task_outcomes_figure
from runner.results.job_folder import INCOMPLETE, Job
from runner.results.scoring import summarize
from runner.results.sweep_figures import SWEEP_PAIRED, SWEEP_PASS_AT_1, write_sweep_figures
from tests.test_report import rec


def job(records, model="m", seed=1, status="finished") -> Job:
    j = Job(path=Path(f"/x/{model}_{seed}"), model=model, seed=seed, records=records,
            task_set="mbppplus", resamples=50, status=status)  # fmt: skip
    j.metrics = summarize(records, resamples=50)
    return j


def inside(fig, artists) -> bool:
    fig.canvas.draw()
    renderer, frame = fig.canvas.get_renderer(), fig.bbox
    boxes = [a.get_window_extent(renderer) for a in artists]
    return all(frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1 for b in boxes)


def test_a_job_with_no_record_still_gets_both_figures():
    empty = job([], status=INCOMPLETE)
    for make in (pass_at_1_figure, task_outcomes_figure):
        fig = make(empty)
        try:
            assert "incomplete" in (fig._suptitle.get_text() + fig.axes[0].get_xlabel())
            assert inside(fig, [fig._suptitle, *fig.legends])
        finally:
            plt.close(fig)
    fig = pass_at_1_figure(empty)
    try:
        assert [t.get_text() for t in fig.axes[0].texts].count("n/a\n(nothing scored)") == 4
    finally:
        plt.close(fig)


def test_the_outcome_map_fits_164_tasks_with_more_samples_than_it_shows():
    samples = MAX_SAMPLES_SHOWN + 2
    records = [
        replace(rec(f"Mbpp/{i}", "passed" if (i + s) % 3 else "failed", "m", 1), sample=s)
        for i in range(164)
        for s in range(samples)
    ]
    fig = task_outcomes_figure(job(records))
    try:
        width, height = fig.get_size_inches()
        assert width <= 40 and height <= 20
        labels = [t for ax in fig.axes for t in ax.get_yticklabels() if t.get_text()]
        assert [t.get_text() for t in labels] == [f"Mbpp/{i}" for i in range(164)]
        assert len(fig.axes[0].get_xticklabels()) == 2 * MAX_SAMPLES_SHOWN
        assert f"first {MAX_SAMPLES_SHOWN} of {samples} samples shown" in fig._suptitle.get_text()
        assert inside(fig, [*labels, fig._suptitle, *fig.legends])
    finally:
        plt.close(fig)


def test_a_sweep_of_one_model_pairs_its_seeds_and_one_seed_says_why_not(tmp_path):
    jobs = [job([rec("t0", "passed", "m", s), rec("t1", "failed", "m", s)], seed=s) for s in (1, 2)]
    written, notes = write_sweep_figures(jobs, compare_jobs(jobs), tmp_path)
    assert [p.name for p in written] == [SWEEP_PASS_AT_1, SWEEP_PAIRED] and notes == []  # seed 1 against seed 2
    written, notes = write_sweep_figures(jobs[:1], compare_jobs(jobs[:1]), tmp_path)
    assert [p.name for p in written] == [SWEEP_PASS_AT_1]
    assert notes[0] == f"{SWEEP_PAIRED} not written: one job per task set: nothing to pair."


@pytest.mark.parametrize("models", [2, 6])
def test_the_sweep_figures_fit_their_labels(tmp_path, models):
    def name(m: int) -> str:
        return f"qwen2.5_coder_{m}b_instruct_q4_k_m"

    jobs = [
        job([rec(f"t{i}", "passed" if i % (m + 2) else "failed", name(m), s) for i in range(20)], name(m), s)
        for m in range(models)
        for s in (1, 2, 3)
    ]
    written, notes = write_sweep_figures(jobs, compare_jobs(jobs), tmp_path)
    assert [p.name for p in written] == [SWEEP_PASS_AT_1, SWEEP_PAIRED] and notes == []
    from runner.results.sweep_figures import sweep_paired_figure, sweep_pass_at_1_figure

    for fig in (sweep_pass_at_1_figure(jobs), sweep_paired_figure(compare_jobs(jobs), jobs)):
        try:
            labels = [t for ax in fig.axes for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_text()]
            assert inside(fig, [*labels, fig._suptitle, *fig.legends])
            renderer = fig.canvas.get_renderer()
            for ax in fig.axes:  # neighbouring model labels do not overlap
                boxes = sorted(t.get_window_extent(renderer).x0 for t in ax.get_xticklabels() if t.get_text())
                ends = sorted(t.get_window_extent(renderer).x1 for t in ax.get_xticklabels() if t.get_text())
                assert all(start >= end - 0.5 for end, start in zip(ends, boxes[1:], strict=False))
        finally:
            plt.close(fig)


def test_an_evalplus_job_draws_base_and_base_plus():
    from runner.records import AttemptRecord
    from runner.results.scoring import DEFAULT_LEVELS, EVALPLUS_LEVELS

    def answer(task, hidden, plus):
        return AttemptRecord(task_id=task, sample=0, attempt=0, seed=1, model="m", messages=[], options={},
                             response="", code=None, outcome="passed" if hidden and plus else "failed", final=True,
                             suites={"hidden": hidden, "properties": plus})  # fmt: skip

    records = [answer("Mbpp/2", True, True), answer("Mbpp/3", True, False), answer("Mbpp/4", False, False)]
    j = job(records)
    j.metrics = summarize(records, resamples=50, levels=(*DEFAULT_LEVELS, *EVALPLUS_LEVELS))
    fig = pass_at_1_figure(j)
    try:  # repair off: the first attempt's two scores, not four copies of one
        assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == [
            "base\nfirst attempt",
            "base+plus\nfirst attempt",
        ]
        assert [round(p.get_height(), 3) for p in fig.axes[0].patches] == [66.667, 33.333]
    finally:
        plt.close(fig)
