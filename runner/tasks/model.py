"""The task: one programming problem with a reference solution and its test suites."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import ClassVar

SUITES = ("visible", "hidden", "properties")
"""Suite names, in the order they run. Only `visible` results ever reach a model's prompt."""


@dataclass(frozen=True)
class EdgeCase:
    """A class of input a task's prompt states, declared so the audit can check that some test exercises it.

    `when` is a Python expression over the entry point's parameter names (e.g. `"\\n" in s`,
    `len(nums) == 0`; builtins and the suites' helper modules in scope), true for the calls that
    belong to the case.
    """

    name: str
    when: str


@dataclass(frozen=True)
class PerfInput:
    """One input that makes a solution's cost visible (the YAML field `perf_inputs`, runner.efficiency).

    Either `args`, the entry point's argument list, or `generator`, trusted task source defining
    `generate(size)` that returns that list (run by the harness, never in the candidate's process; it must be
    deterministic: seed its own `random.Random`), with its `size`.
    """

    args: tuple = ()
    generator: str = ""
    size: int = 0


@dataclass(frozen=True)
class Task:
    """A task as loaded from YAML or imported from a benchmark.

    `suites` maps a suite name (see SUITES) to the source of a pytest module body. Each suite
    module is run with the candidate's `entry_point` already imported by name, `reference`
    importable as a module, and the usual test helpers in scope (see judging.suite_module).
    """

    kind: ClassVar[str] = "function"

    id: str
    entry_point: str
    prompt: str
    reference: str
    suites: Mapping[str, str]
    signature: str = ""
    tags: tuple[str, ...] = ()
    created: date | None = None
    source: str = ""
    extra_entry_points: tuple[str, ...] = field(default=())
    files: Mapping[str, bytes] = field(default_factory=dict)
    """Data files shipped into every job of the task (e.g. the plus inputs' table, tasks.plus_oracle)."""
    time_limit_s: float = 0.0
    """A suite time limit above the sandbox's, for a task whose reference itself is slow (0: none)."""
    cpu_limit_s: float = 0.0
    """CPU seconds per suite, scaled from the reference's time (runner.judging.reference_limits; 0: the sandbox's)."""
    edge_cases: tuple[EdgeCase, ...] = ()
    """Declared edge cases (the YAML field `edge_cases`); only the audit reads them, so not in the content hash."""
    perf_inputs: tuple[PerfInput, ...] = ()
    """Inputs the efficiency measure runs (runner.efficiency); they never change a verdict: not in the content hash."""
    references: tuple[str, ...] = ()
    """Further reference solutions of graded efficiency, slow to fast (runner.efficiency); not in the content hash."""
    twin_of: str = ""
    """The id of the task this one is a twin of (runner.twins; its id is `<twin_of>~<family>`), "" for an original."""
    family: str = ""
    """The twin family that made this task (runner.twins.make.FAMILIES), "" for an original."""

    def content_hash(self) -> str:
        """Hash of everything that determines this task's verdicts (not its file location)."""
        payload = {
            "id": self.id,
            "entry_point": self.entry_point,
            "prompt": self.prompt,
            "reference": self.reference,
            "suites": {k: self.suites[k] for k in sorted(self.suites)},
            "signature": self.signature,
        }
        if self.files or self.time_limit_s:
            payload["files"] = {k: hashlib.sha256(self.files[k]).hexdigest() for k in sorted(self.files)}
            payload["time_limit_s"] = self.time_limit_s
        if self.cpu_limit_s:
            payload["cpu_limit_s"] = self.cpu_limit_s
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def task_set_hash(tasks: Iterable[Task]) -> str:
    """Content hash of a whole task set, independent of task order."""
    digest = hashlib.sha256()
    for h in sorted(t.content_hash() for t in tasks):
        digest.update(h.encode())
    return digest.hexdigest()
