"""Per-attempt records: what streams to `attempts.jsonl` in a job's output directory.

One line per attempt (first attempt = 0, repairs = 1, 2, ...) of one sample of one task. Scoring,
tracking, reports and the replay backend read these lines back with `read_attempts`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from runner.outcome import Outcome


@dataclass(frozen=True)
class AttemptRecord:
    """Everything about one attempt: the exact request, the response, the code and its verdict.

    `suites` maps each suite that ran to whether it passed; `tests` maps a suite to its per-test
    results (`name`, `status`, `message`). `final` marks the last attempt of a sample, whose outcome
    is the sample's outcome after repair. Unscored outcomes (`backend_error`, `harness_error`) are
    recorded like any other and excluded by scoring. `violations` lists the gate's findings
    (`rule`, `line`, `message`) in report mode, where the outcome stays the functional one.
    `extraction` says what code extraction changed or dropped in the answer's code block (empty: taken
    as written). `server` is the base URL of the server that answered (of a `backend.base_url` list; ""
    for an in-process model or when none answered). `outcome` is an `Outcome` (given as one or as its
    value); a line of attempts.jsonl holds its value. `efficiency` is the cost of a final attempt that passed,
    against the task's reference (`runner.efficiency.cost.Efficiency.to_record`), when `efficiency.enabled`;
    None otherwise (it never changes the outcome).
    """

    task_id: str
    sample: int
    attempt: int
    seed: int
    model: str
    messages: list[dict[str, str]]
    options: dict[str, Any]
    response: str
    code: str | None
    outcome: Outcome
    final: bool
    suites: dict[str, bool] = field(default_factory=dict)
    tests: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    detail: str = ""
    rule: str | None = None
    line: int | None = None
    finish_reason: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    generation_s: float = 0.0
    test_s: float = 0.0
    violations: list[dict[str, Any]] = field(default_factory=list)
    extraction: list[str] = field(default_factory=list)
    server: str = ""
    efficiency: dict[str, Any] | None = None
    rejudged: list[str] = field(default_factory=list)  # the outcomes of the re-runs of judging.repeats > 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "outcome", Outcome(self.outcome))  # a value read back becomes the enum

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASSED

    @property
    def flaky(self) -> bool:
        """Judged again (judging.repeats), the candidate got another outcome: the harness's noise, not the model's."""
        return any(o != self.outcome.value for o in self.rejudged)

    @property
    def compliant(self) -> bool:
        """Passed without breaking any gate rule (policy-compliant pass)."""
        return self.passed and not self.violations

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "outcome": self.outcome.value}, sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AttemptRecord:
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in known})


def read_attempts(path: str | Path) -> list[AttemptRecord]:
    """Read an attempts.jsonl file; a torn last line (from a crash) is skipped.

    Raises ValueError naming the line when a line's outcome is not an `Outcome` value.
    """
    records = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        try:
            records.append(AttemptRecord.from_dict(data))
        except ValueError as err:
            raise ValueError(f"{path}:{number}: {err}") from None
    return records
