"""Imported by every suite module inside the sandbox: hands out the candidate's entry points.

Each entry point is wrapped so that its return value must be plain data of exact types (no
subclasses), checked recursively: built-in atoms and containers, plus the standard-library types
benchmark references return (collections' Counter, OrderedDict, defaultdict and deque, and `re`
match objects). This closes the `__eq__`-always-true trick: a forged object can never reach an
assertion. Counter's comparison is Python code in `collections`, which the child's integrity checks
guard like pytest's own. The check uses references captured before the candidate is imported.
The candidate is imported lazily, on the first call of any entry point (see `load_entry_points`).

While a candidate call runs (its import included), the functions of the `reference` module (present in jobs
whose suites compare against the reference) are swapped for tripwires: a candidate that calls the reference,
however it reached the module, fails that call with ReferenceBorrowed even if it catches the exception.
The audit hook (runner.sandbox.child.audit_hook) refuses opening reference.py from candidate code.

`digest_atom` digests a str, bytes or int by value, and `digest_pickle` any plain value by its pickle: the plus
suites compare an output too large to store by them.
"""

from __future__ import annotations

import collections
import hashlib
import importlib
import io
import pickle
import re
import sys

_type = type
_id = id
_set = set
_map = map
_sha256 = hashlib.sha256
_Pickler, _BytesIO = pickle.Pickler, io.BytesIO
_PLAIN_ATOMS = frozenset({int, float, complex, str, bytes, bool, type(None)})
_TEXTS = frozenset({str, bytes})
_CONTAINERS = frozenset({list, tuple, set, frozenset, collections.deque})
_MAPPINGS = frozenset({dict, collections.Counter, collections.OrderedDict, collections.defaultdict})


class NotPlainData(TypeError):
    """The candidate returned something other than plain built-in data."""


def check_plain(value: object) -> None:
    """Raise NotPlainData unless `value` is built from the exact types listed above only."""
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
            if not _set(_map(_type, item)) <= _PLAIN_ATOMS:  # a container of atoms only is checked in C
                stack.extend(item)
        elif kind in _MAPPINGS:
            seen.add(_id(item))
            for part in (dict.keys(item), dict.values(item)):
                if not _set(_map(_type, part)) <= _PLAIN_ATOMS:
                    stack.extend(part)
        elif kind is re.Match and _type(item.string) in _TEXTS:
            continue  # a C type; its groups are slices of an exact str or bytes
        else:
            raise NotPlainData(f"candidate returned a {kind.__name__!r} object, not plain built-in data")


def digest_atom(value: object) -> str | None:
    """SHA-256 of a str, bytes or int by value, or None for anything no such value equals.

    The plus suites compare an output too large to store by it (runner.tasks.plus_oracle): a float, complex
    or bool equal to an int gets the int's digest (1 == 1.0 == True); a container, a NaN or a non-integral
    number gets None, which matches no stored digest.
    """
    kind = _type(value)
    if kind is complex and value.imag == 0:
        value, kind = value.real, float
    if kind is float and value.is_integer():
        value, kind = int(value), int
    if kind is str:
        return _sha256(b"s" + value.encode("utf-8", "surrogatepass")).hexdigest()
    if kind is bytes:
        return _sha256(b"b" + value).hexdigest()
    if kind is int or kind is bool:
        return _sha256(b"i" + format(value, "x").encode()).hexdigest()  # hexadecimal: str() refuses huge ints
    return None


def digest_pickle(value: object) -> str | None:
    """SHA-256 of `value` pickled without a memo and without copyreg's reducers, or None if it cannot be.

    For values that passed `check_plain` the pickle spells out every type and value, so two equal digests
    mean equal values unless a NaN is involved (NaN != NaN): runner.tasks.plus_oracle stores such a digest
    only for an output equal to its own unpickled copy, and the suites treat a different digest as unknown
    (they then compute the expected output), never as a failure, since equal values can pickle differently.
    """
    buffer = _BytesIO()
    pickler = _Pickler(buffer, 5)
    pickler.fast = True  # no memo: the same bytes whichever objects are shared; a cycle raises
    pickler.dispatch_table = {}  # not copyreg's table, which candidate code can change
    try:
        pickler.dump(value)
    except Exception:  # noqa: BLE001 - unpicklable (a re.Match) or cyclic: no digest
        return None
    return _sha256(buffer.getbuffer()).hexdigest()


_LOADED: dict[str, object] = {}
"""The candidate's functions once `candidate` has been imported (by the first call of any entry point)."""
_FAILED: list[BaseException] = []
"""The exception of a failed import: sticky, every later call fails too (the import is never retried)."""


class CandidateLoadError(ImportError):
    """The candidate module could not be imported, or lacks an entry point."""


def _load(name: str):
    if _FAILED:
        raise CandidateLoadError(f"the candidate could not be loaded: {load_failure()}") from _FAILED[0]
    if name not in _LOADED:
        try:
            module = importlib.import_module("candidate")
            for entry in _NAMES:
                fn = module.__dict__.get(entry)
                if not callable(fn):
                    raise NameError(f"candidate does not define {entry!r}")
                _LOADED[entry] = fn
        except BaseException as err:
            _FAILED.append(err)
            raise
    return _LOADED[name]


def load_failure() -> str | None:
    """Why the candidate could not be loaded (`ExcType: message`), or None if it has not failed."""
    if not _FAILED:
        return None
    err = _FAILED[0]
    try:
        text = str(err)
    except Exception:  # a hostile exception's __str__ may raise
        text = ""
    return f"{_type(err).__name__}: {text}"[:500]


_NAMES: list[str] = []


class ReferenceBorrowed(RuntimeError):
    """The candidate called the reference solution: its answer is not the candidate's own."""


_REFERENCE: dict[str, object] = {}
"""The reference module's own functions (name -> function), captured when the suites bind the entry points."""
_TRIPWIRES: dict[str, object] = {}
_BORROWED: list[str] = []
_REFERENCE_MODULE: list[object] = []


def _tripwire(name: str):
    def borrowed(*args, **kwargs):
        _BORROWED.append(name)
        raise ReferenceBorrowed(f"the candidate called the reference solution's {name!r}")

    return borrowed


def _capture_reference() -> None:
    module = sys.modules.get("reference")
    if module is None or _REFERENCE:
        return
    _REFERENCE_MODULE.append(module)
    for key, value in list(vars(module).items()):
        if callable(value) and not isinstance(value, type) and getattr(value, "__module__", None) == "reference":
            _REFERENCE[key] = value
            _TRIPWIRES[key] = _tripwire(key)


def _swap(old: dict[str, object], new: dict[str, object]) -> None:
    # only bindings that hold `old` are swapped: one the candidate replaced stays, for the integrity check
    namespace = vars(_REFERENCE_MODULE[0])
    for key, value in old.items():
        if namespace.get(key) is value:
            namespace[key] = new[key]


def _guarded(name: str):
    def call(*args, **kwargs):
        if _TRIPWIRES:
            _swap(_REFERENCE, _TRIPWIRES)
            try:
                result = _load(name)(*args, **kwargs)
            finally:
                _swap(_TRIPWIRES, _REFERENCE)
            if _BORROWED:
                raise ReferenceBorrowed(f"the candidate called the reference solution's {_BORROWED[0]!r}")
        else:
            result = _load(name)(*args, **kwargs)
        check_plain(result)
        return result

    call.__name__ = call.__qualname__ = name
    call.__test__ = False  # an entry point named test_* is the candidate, not a test to collect
    return call


def load_entry_points(names: tuple[str, ...]) -> tuple:
    """Guarded stand-ins for the candidate's named functions; `candidate` is imported on the first call.

    The import is lazy so that pytest collects (imports and assertion-rewrites) every suite module of a
    session before any candidate code runs. A failed import is sticky: every later call raises
    CandidateLoadError, in every suite.
    """
    _capture_reference()
    for name in names:
        if name not in _NAMES:
            _NAMES.append(name)
    return tuple(_guarded(name) for name in names)
