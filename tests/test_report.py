"""Tests for runner.report: two handcrafted job dirs in a fake sweep -> table numbers and valid PNGs."""

from __future__ import annotations

import json

import matplotlib.image
import matplotlib.pyplot as plt
import pytest
from omegaconf import OmegaConf

from runner.records import AttemptRecord
from runner.report import main, make_report
from runner.results.compare import mcnemar_p
from runner.results.job_folder import load_job, natural_key
from runner.results.report_figures import heatmap_figure, pass_counts_figure, scope


def rec(task, outcome, model, seed, attempt=0, final=True) -> AttemptRecord:
    return AttemptRecord(
        task_id=task, sample=0, attempt=attempt, seed=seed, model=model, messages=[], options={},
        response="", code=None, outcome=outcome, final=final,
    )  # fmt: skip


def write_job(path, model, seed, records, task_set="seed10"):
    (path / ".hydra").mkdir(parents=True)
    cfg = {"model": {"name": model}, "seed": seed, "task_set": {"name": task_set}, "scoring": {"k": [1],
           "ci_level": 0.9, "bootstrap_resamples": 300, "bootstrap_seed": 0}}  # fmt: skip
    (path / ".hydra" / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(cfg)))
    (path / "attempts.jsonl").write_text("".join(r.to_json() + "\n" for r in records))


@pytest.fixture
def sweep(tmp_path):
    """Model alpha: 6/10 first, 8/10 after repair, 1 gate rejection. Model beta: 4/10 both, 1 unscored."""
    a = [rec(f"t{i}", "passed", "alpha", 1) for i in range(6)]
    a += [rec("t6", "failed", "alpha", 1, final=False), rec("t6", "passed", "alpha", 1, attempt=1)]
    a += [rec("t7", "policy_rejected", "alpha", 1, final=False), rec("t7", "passed", "alpha", 1, attempt=1)]
    a += [rec("t8", "failed", "alpha", 1, final=False), rec("t8", "timeout", "alpha", 1, attempt=1)]
    a += [rec("t9", "error", "alpha", 1)]
    b = [rec(f"t{i}", "passed", "beta", 1) for i in (0, 1, 2, 9)]
    b += [rec(f"t{i}", "failed", "beta", 1) for i in (3, 4, 5, 6, 7)]
    b += [rec("t8", "harness_error", "beta", 1)]
    root = tmp_path / "multirun" / "2026-11-30" / "12-00-00"
    write_job(root / "0_alpha_s1", "alpha", 1, a)
    write_job(root / "1_beta_s1", "beta", 1, b)
    (root / "multirun.yaml").write_text("not a job\n")
    return root


def test_report_table_numbers_and_figures(sweep, capsys):
    assert main([str(sweep)]) == 0
    text = (sweep / "report.md").read_text()
    assert "## Pass@1 per run" in capsys.readouterr().out
    run_table = text.split("## Pass@1 per run")[1].split("##")[0]
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[1:-1]]
            for line in run_table.splitlines() if line.startswith(("| alpha", "| beta"))}  # fmt: skip
    alpha, beta = rows["alpha"], rows["beta"]
    assert alpha[2] == beta[2] == "seed10"  # the task set, beside model and seed
    alpha, beta = alpha[1:], beta[1:]
    assert alpha[2:4] == ["10", "10"] and alpha[4].startswith("60.0 [") and alpha[5].startswith("80.0 [")
    assert alpha[6] == "2/3" and alpha[7] == "1" and alpha[8] == "0"
    assert beta[2] == "10 (9 scored)" and beta[4].startswith("44.4 [") and beta[5].startswith("44.4 [")
    assert beta[8] == "1"
    assert "passed 8" in alpha[9] and "timeout 1" in alpha[9] and "harness_error 1" in beta[9]
    assert alpha[10] == "60.0 / 80.0"  # policy-compliant: no violation was reported, so equal to pass@1

    data = json.loads((sweep / "report.json").read_text())
    repair = next(c for c in data["comparisons"] if c["stage"] == "repair")
    # shared scored tasks: t0..t7, t9 (t8 is unscored for beta). alpha passes t0..t7; beta t0,t1,t2,t9.
    assert (repair["tasks"], repair["b"], repair["c"]) == (9, 5, 1)
    assert repair["mcnemar_p"] == pytest.approx(mcnemar_p(5, 1))
    assert repair["diff"] == pytest.approx(8 / 9 - 4 / 9)
    assert f"p = {mcnemar_p(5, 1):.3g}" in text and "alpha vs beta on seed10, seed 1, after repair" in text
    assert "beta s1: first: 1 unscored sample(s) excluded" in text

    for name in ("pass_counts.png", "task_heatmap.png"):
        image = matplotlib.image.imread(sweep / name)
        assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
        assert image.std() > 0  # not a blank canvas


def test_report_seed_spread_line(tmp_path):
    jobs = []
    for seed, passing in ((1, 5), (2, 7), (3, 6)):
        recs = [rec(f"t{i}", "passed" if i < passing else "failed", "alpha", seed) for i in range(10)]
        write_job(tmp_path / f"job{seed}", "alpha", seed, recs)
        jobs.append(tmp_path / f"job{seed}")
    text = make_report(jobs, tmp_path / "out").read_text()
    line = next(x for x in text.splitlines() if x.startswith("- **alpha** on seed10 over 3 seeds"))
    assert "first 60.0 (seed std 10.0, min 50.0, max 70.0" in line
    compared = text.split("## Paired comparisons")[1].split("##")[0]  # one model: only its seeds, each pair
    pairs = [x.split(" on ")[0] for x in compared.splitlines() if x.startswith("- ")]
    assert pairs == [f"- alpha s{a} vs alpha s{b}" for a, b in ((1, 2), (1, 2), (1, 3), (1, 3), (2, 3), (2, 3))]


def test_report_without_jobs_fails_loudly(tmp_path):
    assert main([str(tmp_path)]) == 2
    with pytest.raises(ValueError):
        make_report([], tmp_path)


def test_report_from_mlflow_experiment(sweep, tmp_path):
    """Jobs logged to MLflow can be reported back from the store (--experiment)."""
    from runner.records import read_attempts
    from runner.tracking.runs import log_job

    uri = f"sqlite:///{tmp_path}/store/mlflow.db"
    for job in sorted(sweep.glob("*_s1")):
        cfg = OmegaConf.load(job / ".hydra" / "config.yaml")
        cfg.tracking = {"enabled": True, "uri": uri, "experiment": "e", "artifact_root": str(tmp_path / "art")}
        log_job(cfg, job, read_attempts(job / "attempts.jsonl"), {}, {}, [])
    out = tmp_path / "from_mlflow"
    assert main(["--experiment", "e", "--tracking-uri", uri, f"out={out}"]) == 0
    pulled = json.loads((out / "report.json").read_text())
    assert sorted((r["model"], r["metrics"]["pass_at_1_repair"]) for r in pulled["runs"]) == [
        ("alpha", pytest.approx(0.8)),
        ("beta", pytest.approx(4 / 9)),
    ]


def test_natural_sort_orders_numbers_by_value():
    ids = ["HumanEval/10", "HumanEval/2", "Mbpp/100", "HumanEval/1", "Mbpp/11", "humaneval/3"]
    assert sorted(ids, key=natural_key) == [
        "HumanEval/1", "HumanEval/2", "humaneval/3", "HumanEval/10", "Mbpp/11", "Mbpp/100",
    ]  # fmt: skip


def test_output_goes_to_the_folder_given_never_the_current_directory(sweep, tmp_path, monkeypatch):
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    jobs = sorted(sweep.glob("*_s1"))
    assert main([str(jobs[0])]) == 0  # one job folder: the report goes into it
    assert (jobs[0] / "report.md").is_file() and (jobs[0] / "task_heatmap.png").is_file()
    assert main([str(jobs[1]), str(jobs[0])]) == 0  # several: the first one given
    assert "1_beta_s1" in (jobs[1] / "report.md").read_text() and "0_alpha_s1" in (jobs[1] / "report.md").read_text()
    assert main([str(sweep), f"out={tmp_path / 'chosen'}"]) == 0
    assert (tmp_path / "chosen" / "report.md").is_file() and not (sweep / "report.md").exists()
    assert list(elsewhere.iterdir()) == []


def test_extra_pass_at_k_metrics_from_summary_json_are_shown(sweep):
    job = sweep / "0_alpha_s1"
    extra = {"pass_at_1_repair_base": 0.7, "pass_at_1_repair_base_ci_low": 0.4,
             "pass_at_1_repair_base_ci_high": 0.9, "a_new_note": "text is ignored"}  # fmt: skip
    (job / "summary.json").write_text(json.dumps(extra))
    text = make_report(sorted(sweep.glob("*_s1")), sweep / "out").read_text()
    table = text.split("## Every pass@k metric per run")[1].split("##")[0]
    assert "pass@1 repair_base" in table
    row = next(line for line in table.splitlines() if line.startswith("| alpha"))
    assert "70.0 [40.0, 90.0]" in row and "80.0 [" in row
    assert "n/a" in next(line for line in table.splitlines() if line.startswith("| beta"))


def _synthetic_jobs(tmp_path, tasks: int, runs: int):
    outcomes = ("passed", "failed", "error", "timeout", "policy_rejected", "no_code")
    dirs = []
    for k in range(runs):
        records = [
            rec(f"Mbpp/{i}", outcomes[(i * (k + 1)) % len(outcomes)], f"a-rather-long-model-name-{k}", 42)
            for i in range(tasks)
        ]
        write_job(tmp_path / f"job{k}", f"a-rather-long-model-name-{k}", 42, records, task_set="mbppplus")
        dirs.append(tmp_path / f"job{k}")
    jobs = [load_job(d) for d in dirs]
    for j in jobs:
        j.label = f"{j.model} s{j.seed}"
    return jobs


@pytest.mark.parametrize(("tasks", "runs"), [(378, 3), (164, 1), (7, 2)])
def test_heatmap_fits_its_labels_at_benchmark_size(tmp_path, tasks, runs):
    jobs = _synthetic_jobs(tmp_path, tasks, runs)
    fig = heatmap_figure(jobs)
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        frame = fig.bbox
        width_in, height_in = fig.get_size_inches()
        assert height_in <= 20 and width_in <= 40  # a page, not a poster
        seen_ids = []
        for ax in fig.axes:
            labels = [t for t in ax.get_yticklabels() if t.get_text()]
            seen_ids += [t.get_text() for t in labels]
            boxes = [t.get_window_extent(renderer) for t in labels + [t for t in ax.get_xticklabels() if t.get_text()]]
            for box in boxes:  # every tick label wholly inside the figure
                assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
            ys = sorted((b.y0, b.y1) for b in (t.get_window_extent(renderer) for t in labels))
            assert all(lo_next >= hi - 0.5 for (_, hi), (lo_next, _) in zip(ys, ys[1:], strict=False))  # no overlap
        assert seen_ids == [f"Mbpp/{i}" for i in range(tasks)]  # every task labelled, in natural order
        title = fig._suptitle
        assert "mbppplus" in title.get_text() and "seed 42" in title.get_text() and "model" in title.get_text()
        for artist in [title, *fig.legends]:
            box = artist.get_window_extent(renderer)
            assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
        legend_box = fig.legends[0].get_window_extent(renderer)
        for ax in fig.axes:  # the legend covers no axes
            assert not legend_box.overlaps(ax.get_window_extent(renderer))
    finally:
        plt.close(fig)


@pytest.mark.parametrize("runs", [1, 12])
def test_pass_counts_fits_its_labels(tmp_path, runs):
    jobs = _synthetic_jobs(tmp_path, 378, runs)
    for j in jobs:
        j.metrics = {"tasks": 378.0, "pass_at_1_first": 0.5, "pass_at_1_first_tasks": 378.0,
                     "pass_at_1_first_ci_low": 0.45, "pass_at_1_first_ci_high": 0.55}  # fmt: skip
    fig = pass_counts_figure(jobs)
    try:
        fig.canvas.draw()
        renderer, frame = fig.canvas.get_renderer(), fig.bbox
        ax = fig.axes[0]
        artists = [t for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_text()]
        artists += [fig._suptitle, ax.get_legend(), ax.yaxis.label]
        assert len([t for t in ax.get_xticklabels() if t.get_text()]) == runs
        for artist in artists:
            box = artist.get_window_extent(renderer)
            assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
        assert "mbppplus" in fig._suptitle.get_text()
    finally:
        plt.close(fig)


def test_figure_titles_and_tables_name_the_task_set(sweep):
    text = make_report(sorted(sweep.glob("*_s1")), sweep).read_text()
    assert "task set seed10 · model alpha, beta · seed 1" in text
    assert scope([load_job(sweep / "0_alpha_s1")]) == "task set seed10 · model alpha · seed 1"


def test_runs_that_scored_different_data_are_not_paired(sweep, capsys):
    from runner.results.dataset_record import write_dataset_file

    for name, digest in (("0_alpha_s1", "a" * 64), ("1_beta_s1", "b" * 64)):
        write_dataset_file(sweep / name, {"name": "seed10", "digest": digest, "tasks": 10, "subset": ""})
    assert main([str(sweep)]) == 0
    pairs = (sweep / "report.md").read_text().split("## Paired comparisons")[1].split("##")[0]
    (line,) = [line for line in pairs.splitlines() if line.startswith("- ")]
    assert line.startswith("- alpha vs beta on seed10, seed 1: not paired: runs used different datasets:")
    assert "digest aaaaaaaaaaaa" in line and "digest bbbbbbbbbbbb" in line and "McNemar" not in pairs
    assert not (sweep / "figures" / "sweep_paired.png").exists()


def test_runs_that_scored_the_same_data_are_paired(sweep):
    from runner.results.dataset_record import write_dataset_file

    for name in ("0_alpha_s1", "1_beta_s1"):
        write_dataset_file(sweep / name, {"name": "seed10", "digest": "c" * 64, "tasks": 10, "subset": ""})
    assert main([str(sweep)]) == 0
    assert "McNemar" in (sweep / "report.md").read_text()
