"""Imported by every suite module inside the sandbox: hands out the candidate's entry points.

Each entry point is wrapped so that its return value must be plain built-in data (exact types, no
subclasses), checked recursively. This closes the `__eq__`-always-true trick: a forged object can
never reach an assertion. The check uses references captured before the candidate is imported.
"""

from __future__ import annotations

import functools
import importlib

_type = type
_id = id
_PLAIN_ATOMS = frozenset({int, float, complex, str, bytes, bool, type(None)})
_CONTAINERS = frozenset({list, tuple, set, frozenset})


class NotPlainData(TypeError):
    """The candidate returned something other than plain built-in data."""


def check_plain(value: object) -> None:
    """Raise NotPlainData unless `value` is built from exact built-in types only."""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        kind = _type(item)
        if kind in _PLAIN_ATOMS:
            continue
        if _id(item) in seen:
            continue
        if kind in _CONTAINERS:
            seen.add(_id(item))
            stack.extend(item)
        elif kind is dict:
            seen.add(_id(item))
            stack.extend(dict.keys(item))
            stack.extend(dict.values(item))
        else:
            raise NotPlainData(f"candidate returned a {kind.__name__!r} object, not plain built-in data")


def _guarded(fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        result = fn(*args, **kwargs)
        check_plain(result)
        return result

    call.__test__ = False  # an entry point named test_* is the candidate, not a test to collect
    return call


def load_entry_points(names: tuple[str, ...]) -> tuple:
    """Import module `candidate` and return its named functions, each guarded."""
    module = importlib.import_module("candidate")
    found = []
    for name in names:
        fn = module.__dict__.get(name)
        if not callable(fn):
            raise NameError(f"candidate does not define {name!r}")
        found.append(_guarded(fn))
    return tuple(found)
