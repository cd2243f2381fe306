"""Plain JSON data from dataclasses, enums, dates, UUIDs and the usual containers."""

import json
from dataclasses import fields, is_dataclass
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from pathlib import PurePath
from typing import Any
from uuid import UUID


def to_jsonable(obj: Any) -> Any:
    """Return `obj` as plain JSON data: dicts with str keys, lists, str, int, float, bool, None.

    Dataclass instances become dicts of their fields; Enum members their value; datetimes, dates
    and times ISO 8601 strings; UUIDs and Decimals their str(); paths POSIX strings; tuples lists;
    sets and frozensets sorted lists. Anything else is a TypeError naming the type.
    """
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if is_dataclass(obj) and not isinstance(obj, type):
        return {field.name: to_jsonable(getattr(obj, field.name)) for field in fields(obj)}
    if isinstance(obj, dict):
        return {str(key): _scalar(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_scalar(item) for item in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted(_scalar(item) for item in obj)
    return _scalar(obj)


def _scalar(obj: Any) -> Any:
    """Convert one non-container value."""
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, (datetime, date, time)):
        return obj.isoformat()
    if isinstance(obj, (UUID, Decimal)):
        return str(obj)
    if isinstance(obj, PurePath):
        return obj.as_posix()
    if obj is None or isinstance(obj, (bool, int, float, str, dict, list)):
        return obj
    raise TypeError(f"cannot convert {type(obj).__name__} to JSON data")


def dumps(obj: Any, **json_kwargs: Any) -> str:
    """Return `obj` as JSON text (see `to_jsonable`); keyword arguments go to `json.dumps`."""
    return json.dumps(to_jsonable(obj), **json_kwargs)
