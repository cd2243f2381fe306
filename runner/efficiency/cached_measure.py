"""A passing answer's efficiency, measured once: `runner.efficiency.measure.measure_efficiency` cached by content.

The job (runner.job.attempts, for each sample's final attempt that passed) and `runner.evaluate efficiency=true`
call a `CachedMeasure`. Its key holds everything that decides the measure: the harness, the task (its reference,
suites and perf inputs), the code, the efficiency settings and the sandbox limits; so a resumed or repeated job
measures nothing twice, like verdicts (runner.kinds.base.verdict_key). An `error` is not cached (it may be the
machine's, not the answer's): the next job measures it again. Measuring never changes a verdict.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from runner.caches.content import Cache, content_key
from runner.caches.fingerprint import harness_fingerprint
from runner.config import EfficiencyConfig
from runner.efficiency.cost import ERROR, Efficiency

NAMESPACE = "efficiency"


def efficiency_key(task: Any, code: str, cfg: EfficiencyConfig, limits: dict) -> str:
    """Cache key of one answer's efficiency (`enabled` left out: it decides whether, not what, is measured)."""
    settings = {k: v for k, v in asdict(cfg).items() if k != "enabled"}
    inputs = (getattr(task, "perf_inputs", None), getattr(task, "references", None))
    return content_key(NAMESPACE, harness_fingerprint(), task.content_hash(), inputs, code, settings, limits)


class CachedMeasure:
    """`measure(task, code) -> Efficiency`, cached in `cache` under NAMESPACE; blocking (call it in a thread)."""

    def __init__(self, pool: Any, cfg: EfficiencyConfig, cache: Cache, limits: dict, importer: str = "") -> None:
        """`importer`: the task set's (task_set.importer); HumanEval's tasks borrow HumanEval+'s plus inputs."""
        from runner.efficiency.measure import measure_efficiency  # the sandboxed count (valgrind)

        self._measure = measure_efficiency
        self.pool, self.cfg, self.cache, self.limits = pool, cfg, cache, limits
        self.importer = importer

    def __call__(self, task: Any, code: str) -> Efficiency:
        from runner.efficiency.borrowed_inputs import borrowed_table, with_borrowed_inputs

        task = with_borrowed_inputs(task, borrowed_table(self.importer, task))
        key = efficiency_key(task, code, self.cfg, self.limits)
        cached = self.cache.get(NAMESPACE, key)
        if cached is not None:
            return Efficiency.from_record(cached)
        efficiency = self._measure(task, code, self.pool, self.cfg, self.cache)
        if efficiency.status == ERROR:
            return efficiency
        return Efficiency.from_record(self.cache.put(NAMESPACE, key, efficiency.to_record()))
