"""Application events: what happened, when, and the details that came with it."""

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from typing import Any
from uuid import UUID, uuid4

from recordkit.serialize import to_jsonable


class Severity(Enum):
    """How much attention an event deserves."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True)
class Event:
    """One thing that happened. `payload` holds event-specific details (any convertible data)."""

    kind: str
    payload: dict[str, Any] = field(default_factory=dict)
    severity: Severity = Severity.INFO
    tags: tuple[str, ...] = ()
    id: UUID = field(default_factory=uuid4)
    created: datetime = field(default_factory=lambda: datetime.now(UTC))

    def to_dict(self) -> dict[str, Any]:
        """Return the event as plain JSON data."""
        return to_jsonable(self)


def new_event(kind: str, *, severity: Severity = Severity.INFO, tags=(), **payload: Any) -> Event:
    """Return a new Event of `kind` whose payload is the keyword arguments."""
    if not kind or not kind.replace("_", "").replace(".", "").isalnum():
        raise ValueError(f"event kind must be a dotted name like 'user.signup', got {kind!r}")
    return Event(kind=kind, payload=payload, severity=severity, tags=tuple(tags))
