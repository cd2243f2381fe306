"""The gold check: every task's reference, run as the candidate, must pass all of its suites.

The reference goes through exactly the gate its task set uses (profile and mode): in enforce mode a
reference its own gate rejects is `policy_rejected`, never ok; in report mode its violations are named
in the detail of an ok row.

A task whose reference fails is a task or environment defect, never a model failure. Statuses:
ok, env_missing_module, env_import_error, no_tests_collected, test_failed, timeout, flaky (a function task's
reference run judging.repeats times whose result changed), and otherwise
the verdict's own outcome (resource_exceeded, harness_error, signature_mismatch, ...). Repo tasks
(runner.repo.gold_patch) add env_build_failed, fail_to_pass_already_pass, patch_failed and patch_forbidden.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from runner.caches.content import Cache, content_key
from runner.caches.fingerprint import harness_fingerprint
from runner.config import GateConfig, gate_off
from runner.judging.judge import judge
from runner.judging.reference_limits import cpu_limits, with_cpu_limit
from runner.outcome import Outcome, Verdict
from runner.tasks.model import Task

T = TypeVar("T")
R = TypeVar("R")

PIP_NAMES = {
    "yaml": "PyYAML",
    "sklearn": "scikit-learn",
    "cv2": "opencv-python",
    "PIL": "Pillow",
    "bs4": "beautifulsoup4",
    "dateutil": "python-dateutil",
    "attr": "attrs",
    "Crypto": "pycryptodome",
    "skimage": "scikit-image",
    "dotenv": "python-dotenv",
}
"""Import name -> pip distribution name, where they differ."""

_MISSING = re.compile(r"No module named '([\w.]+)'|module missing: ([\w.]+)")
_IMPORT_ERROR = re.compile(r"\bImportError\b|cannot import name")


GOLD_ROWS = "gold row of one task: task_id, status, detail, seconds"
"""What a cached gold-check entry holds; part of its cache key, so entries of an older shape are made again."""


@dataclass(frozen=True)
class GoldResult:
    """One task's gold status; `modules` names missing modules (env_missing_module only)."""

    task_id: str
    status: str
    detail: str = ""
    modules: tuple[str, ...] = ()
    seconds: float = 0.0
    """How long the reference's run took (function tasks that passed): the base of their time limits."""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def pip_name(module: str) -> str:
    """The pip distribution that provides top-level `module`: the table's, else the module's own name with
    `_` written `-` (PyPI treats them alike). A guess for any module the table does not know."""
    top = module.split(".")[0]
    return PIP_NAMES.get(top, top.replace("_", "-"))


def missing_modules(task_id: str, modules: tuple[str, ...]) -> GoldResult:
    """The env_missing_module result naming each module and the pip name that provides it."""
    names = ", ".join(f"{m} (pip install {pip_name(m)})" for m in modules)
    return GoldResult(task_id, "env_missing_module", f"missing module(s): {names}", modules)


def _texts(verdict: Verdict) -> list[str]:
    texts = [verdict.detail]
    for suite in verdict.suites.values():
        texts.append(suite.detail)
        texts.extend(t.message for t in suite.tests)
    return texts


def classify(task_id: str, verdict: Verdict) -> GoldResult:
    """The gold status of a task from the verdict of its reference."""
    if verdict.outcome is Outcome.PASSED:
        return GoldResult(task_id, "ok")
    texts = _texts(verdict)
    found = {a or b for text in texts for a, b in _MISSING.findall(text)}
    modules = tuple(sorted({m.split(".")[0] for m in found}))
    if modules:
        return missing_modules(task_id, modules)
    if any(_IMPORT_ERROR.search(text) for text in texts):
        return GoldResult(task_id, "env_import_error", verdict.detail)
    empty = [name for name, s in verdict.suites.items() if not s.passed and not s.tests]
    if empty and verdict.outcome is not Outcome.TIMEOUT:
        if all("no tests" in verdict.suites[name].detail.lower() for name in empty):
            return GoldResult(task_id, "no_tests_collected", "no tests collected in: " + ", ".join(empty))
    if verdict.outcome is Outcome.TIMEOUT:
        return GoldResult(task_id, "timeout", verdict.detail)
    if verdict.outcome in (Outcome.FAILED, Outcome.ERROR):
        return GoldResult(task_id, "test_failed", verdict.detail)
    return GoldResult(task_id, verdict.outcome.value, verdict.detail)


def gold_rows(tasks: list, cache: Cache, key_parts: tuple, check: Callable[[list], list[GoldResult]],
              task_key: Callable[[Any], Any] = lambda task: None):  # fmt: skip
    """The gold check's rows (task_id, status, detail, seconds) for `tasks`, in their order; and how many came
    from the cache. Each task's row is cached on its own, under the harness, the task's content, `key_parts`
    (limits, gate, ...) and `task_key(task)` (what else of the config decides that task's row: its kind's part),
    so any subset of a checked set (a job's `task_set.ids`, a samples file covering some tasks) reuses it;
    `check` runs on the tasks without one."""
    fingerprint = harness_fingerprint()
    keys = [content_key(fingerprint, task.content_hash(), *key_parts, task_key(task), GOLD_ROWS) for task in tasks]
    rows = [cache.get("gold", key) for key in keys]
    missing = [i for i, row in enumerate(rows) if row is None]
    if missing:
        made = check([tasks[i] for i in missing])
        for i, r in zip(missing, made, strict=True):
            row = {"task_id": r.task_id, "status": r.status, "detail": r.detail, "seconds": r.seconds}
            rows[i] = cache.put("gold", keys[i], row)
    return rows, len(tasks) - len(missing)


def check_each(tasks: Sequence[T], check: Callable[[T], R], threads: int = 4) -> list[R]:
    """`check` on every task, `threads` at a time; results in task order."""
    with ThreadPoolExecutor(max_workers=max(1, threads)) as executor:
        return list(executor.map(check, tasks))


def reference_result(task: Task, pool, gate: GateConfig | None = None, repeats: int = 1) -> GoldResult:
    """The gold result of one function task: its reference through `gate` (None: gate off) and all its suites,
    run `repeats` times; a reference whose result changes from run to run is `flaky` (and so excluded)."""
    verdicts = [judge(task, task.reference, pool, gate if gate is not None else gate_off()) for _ in range(repeats)]
    results = [classify(task.id, v) for v in verdicts]
    if len({r.status for r in results}) > 1:
        seen = ", ".join(f"{status}×{n}" for status, n in Counter(r.status for r in results).items())
        why = next(r.detail for r in results if not r.ok)
        return GoldResult(task.id, "flaky", f"the reference's result changed over {repeats} runs ({seen}): {why}")
    verdict, result = verdicts[0], results[0]
    if result.ok and verdict.violations:
        found = "; ".join(f"rule {v['rule']} at line {v['line']}" for v in verdict.violations)
        result = GoldResult(task.id, "ok", f"gate violations (reported only): {found}")
    return dataclasses.replace(result, seconds=round(verdict.duration_s, 4)) if result.ok else result


def with_reference_limits(tasks: dict[str, Task], pool, gate: GateConfig, cache: Cache, threads: int = 4):
    """Function `tasks` (id -> task) with the CPU limits their references' gold-check times give
    (runner.judging.reference_limits), the gold check cached as a job caches it; and the failing rows."""
    key_parts = (asdict(pool.limits), asdict(gate))

    def check(ts: list[Task]) -> list[GoldResult]:
        return check_each(ts, lambda t: reference_result(t, pool, gate), threads)

    rows, _ = gold_rows(list(tasks.values()), cache, key_parts, check)
    limits = cpu_limits(rows)
    return {i: with_cpu_limit(t, limits) for i, t in tasks.items()}, [r for r in rows if r["status"] != "ok"]
