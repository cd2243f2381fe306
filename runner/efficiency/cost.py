"""What a solution cost on a task's perf inputs, and one passing candidate against the task's reference."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

MEASURED, TOO_SLOW, ERROR, NO_PERF_INPUTS = "measured", "too_slow", "error", "no_perf_inputs"


@dataclass(frozen=True)
class Cost:
    """What running one solution on a task's perf inputs cost (the harness's start-up and input loading taken out)."""

    status: str  # MEASURED | TOO_SLOW | ERROR
    instructions: int | None = None  # instructions executed (valgrind), summed over the perf inputs
    peak_bytes: int | None = None  # peak memory the solution allocated above the harness's baseline
    wall_s: float | None = None  # information only
    detail: str = ""  # one line, for TOO_SLOW / ERROR


@dataclass(frozen=True)
class Efficiency:
    """One passing candidate against its task's reference (and graded references, slow to fast, where listed)."""

    status: str  # MEASURED | TOO_SLOW | ERROR | NO_PERF_INPUTS
    candidate: Cost | None = None
    reference: Cost | None = None
    instructions_ratio: float | None = None  # candidate / reference
    memory_ratio: float | None = None  # candidate / reference, both floored at efficiency.memory_floor_kb
    references: tuple[Cost, ...] = field(default_factory=tuple)

    def to_record(self) -> dict:
        """A plain JSON-able dict, stored on the attempt record as `efficiency`."""
        return asdict(self)

    @classmethod
    def from_record(cls, data: dict) -> Efficiency:
        """The inverse of `to_record`."""

        def cost(value: dict | None) -> Cost | None:
            return None if value is None else Cost(**value)

        return cls(
            status=data["status"],
            candidate=cost(data.get("candidate")),
            reference=cost(data.get("reference")),
            instructions_ratio=data.get("instructions_ratio"),
            memory_ratio=data.get("memory_ratio"),
            references=tuple(Cost(**c) for c in data.get("references", ())),
        )
