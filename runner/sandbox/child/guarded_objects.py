"""Snapshots of the harness's functions, classes and code that a candidate must not replace.

A snapshot records, for every function, class and method of some modules, the namespace that binds
it, its name, the object and its code object; `changed()` reports every binding or code object that
is no longer the same. The check runs in the forked child after every suite, so it must be cheap
there: merely reading an object from Python increments its reference count, a write that makes the
kernel copy the object's 4 KB page (copy-on-write after fork), and comparing ~2,000 objects by
identity copied ~1,300 pages, several milliseconds per child.

So a snapshot taken in the worker also records raw words of memory that move whenever a binding or
a code object changes: each namespace dict's version tag (CPython bumps it on every change of the
dict, PEP 509) and each function's pointer to its code. The child reads them all through one
ctypes view of its own memory, which writes nothing. A namespace whose version moved is then
compared entry by entry (the exact check), so a legitimate change costs time, never a false alarm.
Where the memory layout cannot be confirmed at run time, every check is the exact one.
"""

from __future__ import annotations

import ctypes
import gc
import operator
import sys
import types

from runner.sandbox.speedups import internals

_WRAPPERS = (classmethod, staticmethod, property, types.MethodType)  # MethodType: `random.randint` and the like
_GUARDED_TYPES = (types.FunctionType, types.BuiltinFunctionType, type)
_WORD = 8
_ADDRESS_WORDS = 12
"""How far into an object to look for a field (dict version tag, function code pointer)."""


def _unwrap(value: object) -> object:
    if isinstance(value, _WRAPPERS):
        return value.__func__ if not isinstance(value, property) else value.fget
    return value


def snapshot_entries(modules: tuple[str, ...]) -> list[tuple]:
    """(namespace, name, object, code object) for every function, class and method of the modules."""
    found: list[tuple] = []
    for name in modules:
        module = sys.modules.get(name)
        if module is None:
            continue
        found.append((sys.modules, name, module, None))
        spaces = [vars(module)]
        spaces += [vars(v) for v in vars(module).values() if isinstance(v, type) and v.__module__ == name]
        for space in spaces:
            for key, value in list(space.items()):
                value = _unwrap(value)
                if isinstance(value, _GUARDED_TYPES):
                    found.append((space, key, value, getattr(value, "__code__", None)))
    return found


def changed_entries(entries: list[tuple]) -> list[str]:
    """The exact check: one line for each entry whose binding or code object is not the recorded one."""
    changed = []
    for space, key, value, code in entries:
        now = _unwrap(space.get(key))
        if now is not value or (code is not None and getattr(now, "__code__", None) is not code):
            owner = getattr(value, "__qualname__", "") if space is not sys.modules else ""
            changed.append(f"{getattr(value, '__module__', '')}.{owner or key} was replaced")
    return changed


def _word(address: int) -> int:
    return ctypes.c_uint64.from_address(address).value


def _field_offset(obj: object, expected: int) -> int | None:
    for index in range(2, _ADDRESS_WORDS):
        if _word(id(obj) + index * _WORD) == expected:
            return index * _WORD
    return None


def _probe_layout() -> tuple[int, int] | None:
    """(offset of a dict's version tag, offset of a function's code pointer), confirmed here, or None."""

    def first():
        return 1

    def second():
        return 2

    code_offset = _field_offset(first, id(first.__code__))
    if code_offset is None or _field_offset(second, id(second.__code__)) != code_offset:
        return None
    probe = {"a": 1, "b": 2}
    version_offset = None
    for _attempt in range(2):  # each mutation must move exactly one word, the same one, upwards
        before = [_word(id(probe) + i * _WORD) for i in range(2, 6)]
        probe["a"] = object()
        after = [_word(id(probe) + i * _WORD) for i in range(2, 6)]
        moved = [i for i, (b, a) in enumerate(zip(before, after, strict=True)) if a != b]
        if len(moved) != 1 or after[moved[0]] <= before[moved[0]]:
            return None
        offset = (moved[0] + 2) * _WORD
        if version_offset not in (None, offset):
            return None
        version_offset = offset
    return version_offset, code_offset


_LAYOUT = _probe_layout() if internals.enabled("dict_versions") else None


class _Words:
    """Reads fixed words of this process's memory through one ctypes view made in advance.

    Indexing the view reads memory without raising audit events or changing any reference count;
    the only objects it touches are the index integers (a few contiguous pages).
    """

    def __init__(self, addresses: list[int]) -> None:
        low = min(addresses, default=0)
        if any((a - low) % _WORD for a in addresses):
            raise ValueError("unaligned address")
        span = (max(addresses, default=0) - low) // _WORD + 1
        self.view = (ctypes.c_uint64 * span).from_address(low) if addresses else None
        indices = [(a - low) // _WORD for a in addresses]
        self.get = operator.itemgetter(*indices) if len(indices) > 1 else lambda view: tuple(view[i] for i in indices)

    def read(self) -> tuple[int, ...]:
        """The current value of every word, in the order of the addresses."""
        return self.get(self.view) if self.view is not None else ()


class GuardedObjects:
    """A snapshot of guarded entries with a fast check for an unchanged forked child (see module doc)."""

    def __init__(self, entries: list[tuple]) -> None:
        self.entries = entries
        self.groups: list[list[tuple]] = []
        self.words: _Words | None = None
        self.expected: tuple[int, ...] = ()
        if _LAYOUT is None:
            return
        version_offset, code_offset = _LAYOUT
        addresses: list[int] = []
        by_space: dict[int, list[tuple]] = {}
        for entry in entries:
            by_space.setdefault(id(entry[0]), []).append(entry)
        for group in by_space.values():
            self.groups.append(group)
            addresses.append(id(_real_dict(group[0][0])) + version_offset)
        for entry in entries:
            if entry[3] is not None:
                self.groups.append([entry])
                addresses.append(id(entry[2]) + code_offset)
        self.words = _Words(addresses)
        self.expected = self.words.read()

    def __len__(self) -> int:
        return len(self.entries)

    def changed(self) -> list[str]:
        """Every entry whose binding or code changed since the snapshot (exact, whichever path finds it)."""
        if self.words is None:
            return changed_entries(self.entries)
        now = self.words.read()
        if now == self.expected:
            return []
        found: list[str] = []
        for group, before, after in zip(self.groups, self.expected, now, strict=True):
            if before != after:
                found += [line for line in changed_entries(group) if line not in found]
        return found


def _real_dict(space) -> dict:
    """The dict behind a namespace: a module's dict itself, or the dict a class's mappingproxy shows."""
    if type(space) is dict:
        return space
    referents = [r for r in gc.get_referents(space) if type(r) is dict]
    if len(referents) != 1:
        raise TypeError(f"cannot find the dict behind {type(space).__name__}")
    return referents[0]
