"""An append-only, in-memory audit log of events."""

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from recordkit.events import Event, Severity, new_event
from recordkit.serialize import dumps


class AuditLog:
    """Events in the order they were recorded."""

    def __init__(self) -> None:
        self._events: list[Event] = []

    def record(self, kind: str, *, severity: Severity = Severity.INFO, tags=(), **payload) -> Event:
        """Create an event, append it and return it."""
        event = new_event(kind, severity=severity, tags=tags, **payload)
        self._events.append(event)
        return event

    def __iter__(self) -> Iterator[Event]:
        return iter(self._events)

    def __len__(self) -> int:
        return len(self._events)

    def since(self, moment: datetime) -> list[Event]:
        """Events created at or after `moment` (an aware datetime)."""
        return [event for event in self._events if event.created >= moment]

    def of_kind(self, prefix: str) -> list[Event]:
        """Events whose kind is `prefix` or starts with `prefix` + '.'."""
        return [e for e in self._events if e.kind == prefix or e.kind.startswith(prefix + ".")]

    def export(self) -> list[dict[str, Any]]:
        """All events as plain JSON data."""
        return [event.to_dict() for event in self._events]

    def export_json(self, **json_kwargs: Any) -> str:
        """All events as a JSON array."""
        return dumps(self._events, **json_kwargs)
