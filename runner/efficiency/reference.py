"""A task's baseline run and its references' costs, measured once and cached by content.

The key holds everything they depend on: the task's content hash, its reference and graded references, the
perf inputs' pickle, the entry point, the harness Python and its version, valgrind's version and the
measure's own code (`Tools.key`), so a changed task, input, interpreter, valgrind or harness measures again.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, replace

from runner.caches.content import Cache, content_key
from runner.efficiency.cost import MEASURED, Cost
from runner.efficiency.cost_runs import RunOutcome
from runner.efficiency.solution import Measured, Setting, baseline_run, measure
from runner.tasks.model import Task

NAMESPACE = "efficiency_reference"
REFERENCE_CPU_S = 120.0
"""The CPU limit of a reference's counted run (a reference is trusted; this only bounds a mistake)."""


@dataclass(frozen=True)
class References:
    """The baseline run's outcome, the reference's measure, and the graded references' (slow to fast)."""

    baseline: RunOutcome
    reference: Measured
    graded: tuple[Measured, ...] = ()


def _to_json(measured: Measured) -> dict:
    return {"cost": asdict(measured.cost), "cpu_s": measured.cpu_s, "canonical": list(measured.canonical)}


def _from_json(data: dict) -> Measured:
    return Measured(Cost(**data["cost"]), float(data["cpu_s"]), tuple(data["canonical"]))


def _key(task: Task, setting: Setting) -> str:
    inputs = hashlib.sha256(setting.inputs).hexdigest()
    return content_key(NAMESPACE, task.content_hash(), task.reference, list(task.references), inputs,
                       setting.entry_point, setting.tools.key())  # fmt: skip


def _measure_all(task: Task, setting: Setting) -> dict:
    baseline = baseline_run(setting, task.reference, REFERENCE_CPU_S)
    value = {"baseline": {"status": baseline.status, "detail": baseline.detail,
                          "instructions": baseline.instructions, "cpu_s": baseline.cpu_s}}  # fmt: skip
    if baseline.status != MEASURED:
        failed = Measured(Cost(baseline.status, detail=f"the baseline run: {baseline.detail}"))
        return {**value, "reference": _to_json(failed), "graded": []}
    setting = replace(setting, baseline=baseline)
    reference = measure(setting, task.reference, REFERENCE_CPU_S)
    graded = [measure(setting, source, REFERENCE_CPU_S, expected=reference.canonical) for source in task.references]
    return {**value, "reference": _to_json(reference), "graded": [_to_json(m) for m in graded]}


def references(task: Task, setting: Setting, cache: Cache | None) -> References:
    """The task's baseline and reference costs on `setting.inputs`: from the cache, or measured and stored."""
    key = _key(task, setting)
    value = cache.get(NAMESPACE, key) if cache is not None else None
    if not isinstance(value, dict) or "reference" not in value:
        value = _measure_all(task, setting)
        if cache is not None and value["reference"]["cost"]["status"] == MEASURED:
            value = cache.put(NAMESPACE, key, value)
    base = value["baseline"]
    baseline = RunOutcome(base["status"], base["detail"], base["instructions"], cpu_s=float(base["cpu_s"]))
    return References(baseline, _from_json(value["reference"]), tuple(_from_json(g) for g in value["graded"]))
