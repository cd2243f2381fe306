"""What both task loaders share: the one-line TaskError and the checks of common fields."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import yaml


class TaskError(ValueError):
    """A task file is wrong. The message names the file, the field and what to change."""

    def __init__(self, path: str | Path, field: str | None, problem: str) -> None:
        where = f"{path}" + (f", field `{field}`" if field else "")
        super().__init__(f"{where}: {problem}")
        self.path, self.field, self.problem = str(path), field, problem


def read_mapping(path: Path, required: tuple[str, ...]) -> dict:
    """A task file's YAML mapping (TaskError if it cannot be read, is not YAML or is not a mapping)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise TaskError(path, None, f"is not UTF-8 text (byte {exc.start}); save the file as UTF-8") from None
    except OSError as exc:
        raise TaskError(path, None, f"cannot be read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise TaskError(path, None, f"is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise TaskError(path, None, "must be a YAML mapping with keys " + ", ".join(required))
    return data


def check_keys(path: Path, data: dict, required, optional, where: str) -> None:
    """Every key known, every required key present."""
    for key in data:
        if key not in (*required, *optional):
            allowed = ", ".join((*required, *optional))
            raise TaskError(path, str(key), f"unknown field at {where}; allowed fields are: {allowed}")
    for key in required:
        if key not in data:
            raise TaskError(path, key, f"missing required field at {where}")


def check_id(path: Path, task_id: str) -> None:
    """Ids use letters, digits, '_', '-' and '/' only."""
    if not task_id.replace("_", "").replace("-", "").replace("/", "").isalnum():
        raise TaskError(path, "id", "may use letters, digits, '_', '-' and '/' only")


def string_list(path: Path, data: dict, key: str) -> list[str]:
    """`data[key]` as a list of strings ([] when absent)."""
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TaskError(path, key, "must be a list of strings")
    return value


def load_date(path: Path, value: Any) -> dt.date | None:
    """A `created` date (YYYY-MM-DD) or None."""
    if value is None or isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise TaskError(path, "created", f"{value!r} is not a date; write it as YYYY-MM-DD") from None
