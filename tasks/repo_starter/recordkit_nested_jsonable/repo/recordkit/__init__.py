"""recordkit: application events as dataclasses, an audit log of them, and their JSON form."""

from recordkit.audit import AuditLog
from recordkit.events import Event, new_event
from recordkit.serialize import dumps, to_jsonable

__all__ = ["AuditLog", "Event", "dumps", "new_event", "to_jsonable"]
