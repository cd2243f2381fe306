"""What a finished job adds to its MLflow run for the UI: its dataset, a per-sample table and its traces.

`log_job_views` is called once by the job when its results are in: it writes the job folder's dataset.json
(runner.results.dataset_record) with or without tracking and, on the job's run, logs the dataset as the run's input,
the table SAMPLES_TABLE (one row per task x sample: outcome first and after repair, tokens, seconds,
violations; the run's evaluation view) and, unless `tracking.traces=false`, every attempt as a trace
(runner.tracking.traces). `mlflow_metrics` picks the metrics a run logs: all of a job's summary.json but the
per-outcome counts and rates of outcomes no sample had, which only say 0.
"""

from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from runner.config import Config
from runner.records import AttemptRecord
from runner.results.dataset_record import DATASET_FILE, dataset_info, log_dataset, write_dataset_file

log = logging.getLogger(__name__)

SAMPLES_TABLE = "samples.json"
_OUTCOME_METRIC = re.compile(r"outcome_(first|repair)_([a-z_]+)_(count|rate)")


def mlflow_metrics(metrics: dict[str, float | None]) -> dict[str, float]:
    """The metrics worth logging: every one but the None values and the zero counts / rates of an outcome
    no sample had (`outcome_<stage>_<outcome>_count` / `_rate`); `passed`'s are always kept."""
    out = {}
    for key, value in metrics.items():
        if value is None:
            continue
        match = _OUTCOME_METRIC.fullmatch(key)
        if match and match.group(2) != "passed":
            stage, outcome = match.group(1), match.group(2)
            if not metrics.get(f"outcome_{stage}_{outcome}_count"):
                continue
        out[key] = value
    return out


def sample_rows(records: list[AttemptRecord]) -> list[dict[str, Any]]:
    """One row per (task, sample), in task order: outcome of the first and of the final attempt, attempts,
    tokens and seconds summed over the sample's attempts, the final attempt's gate violations."""
    by_sample: dict[tuple[str, int], dict[int, AttemptRecord]] = defaultdict(dict)
    for r in records:
        by_sample[(r.task_id, r.sample)][r.attempt] = r  # a resumed run's repeat keeps its last record
    rows = []
    for (task_id, sample), attempts in sorted(by_sample.items()):
        ordered = [attempts[a] for a in sorted(attempts)]
        first = attempts.get(0)
        finals = [r for r in ordered if r.final]
        final = finals[-1] if finals else None
        rows.append({
            "task_id": task_id,
            "sample": sample,
            "outcome_first": first.outcome.value if first else None,
            "outcome_repair": final.outcome.value if final else None,
            "passed_first": bool(first and first.passed),
            "passed_repair": bool(final and final.passed),
            "compliant_repair": bool(final and final.compliant),
            "attempts": len(ordered),
            "prompt_tokens": sum(r.prompt_tokens for r in ordered),
            "completion_tokens": sum(r.completion_tokens for r in ordered),
            "generation_s": round(sum(r.generation_s for r in ordered), 4),
            "test_s": round(sum(r.test_s for r in ordered), 4),
            "violations": len(final.violations) if final else 0,
            "violation_rules": ",".join(sorted({v["rule"] for v in final.violations})) if final else "",
            "rejected_rule": (final.rule or "") if final else "",
        })  # fmt: skip
    return rows


def _columns(rows: list[dict[str, Any]]) -> dict[str, list]:
    return {key: [row[key] for row in rows] for key in rows[0]} if rows else {}


def log_job_views(
    cfg: Config, out_dir: Path, tasks: list, excluded: list[dict], records: list[AttemptRecord], run: Any
) -> dict[str, float]:
    """Write dataset.json; with a run (runner.tracking.runs.JobRun, or None): its dataset input, SAMPLES_TABLE
    and the traces. Returns the seconds each part took (`dataset_s`, `samples_table_s`, `traces_s`)."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    info = dataset_info(cfg.task_set, tasks, excluded)
    write_dataset_file(out_dir, info)
    if run is None:
        return timings
    log_dataset(run.client, run.run_id, info)
    run.client.log_artifact(run.run_id, str(Path(out_dir) / DATASET_FILE))
    timings["dataset_s"] = round(time.perf_counter() - started, 3)
    started = time.perf_counter()
    if records:
        run.client.log_table(run.run_id, data=_columns(sample_rows(records)), artifact_file=SAMPLES_TABLE)
    timings["samples_table_s"] = round(time.perf_counter() - started, 3)
    if cfg.tracking.traces and records:
        from runner.tracking.traces import log_traces

        started = time.perf_counter()
        try:
            experiment_id = run.client.get_run(run.run_id).info.experiment_id
            log_traces(cfg.tracking.uri, experiment_id, run.run_id, records, run.started_ms)
        except Exception as exc:  # the results are in the job folder and the run: traces are a view of them
            log.warning("MLflow traces not logged (tracking.traces=false turns them off): %s", exc)
        timings["traces_s"] = round(time.perf_counter() - started, 3)
    return timings
