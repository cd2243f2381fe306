"""Code compiled before the sandboxed child starts, so that every child reuses it instead of compiling.

Two kinds of trusted files are compiled in the worker, keyed by path and content: suite files, with
pytest's own assertion rewriting (`rewrite_suite`), and the job's trusted plain modules, the
task's `reference` and `candidate_guard` (`compile_trusted`). Nothing is executed here. The candidate's
own file is never compiled by the worker: compiling untrusted source could exhaust the worker, so
it is compiled in the confined child, by the normal import.

Suites may also be rewritten ahead, by the pool's own (trusted) process (`rewrite_ahead`, e.g. while
the workers warm up): the job then carries the marshalled code, which the worker installs under the
suite's real path (`install_rewritten`) instead of rewriting it again.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import marshal
import types
from pathlib import Path

TRUSTED_MODULES = ("reference.py", "candidate_guard.py")
"""Files of a job, besides its suites, that the worker may compile: they come from the task and the harness."""
_MAX_ENTRIES = 4096
_REWRITTEN: dict[tuple[str, bytes], tuple] = {}
_COMPILED: dict[tuple[str, bytes], object] = {}
_ORIGINALS: dict[str, object] = {}


def _remember(cache: dict, key: tuple, value: object) -> None:
    if len(cache) >= _MAX_ENTRIES:
        cache.clear()
    cache[key] = value


def _cached_rewrite_test(fn, config):
    """pytest's `_rewrite_test`, reusing the code already rewritten for the same path and source."""
    key = (str(fn), fn.read_bytes())
    found = _REWRITTEN.get(key)
    if found is None:
        found = _ORIGINALS["rewrite"](fn, config)
        _remember(_REWRITTEN, key, found)
    return found


def _cached_source_to_code(self, data, path, *, _optimize=-1):
    """The import system's compile step, answered from the worker's cache for trusted files."""
    found = _COMPILED.get((str(path), bytes(data))) if _optimize == -1 else None
    return found if found is not None else _ORIGINALS["source_to_code"](self, data, path, _optimize=_optimize)


def install() -> None:
    """Route pytest's assertion rewriting and the import system's compilation through the caches."""
    from _pytest.assertion import rewrite

    if not _ORIGINALS:
        _ORIGINALS["rewrite"] = rewrite._rewrite_test
        _ORIGINALS["source_to_code"] = importlib.machinery.SourceFileLoader.source_to_code
        rewrite._rewrite_test = _cached_rewrite_test
        importlib.machinery.SourceFileLoader.source_to_code = _cached_source_to_code


def rewrite_suite(test_path: str, config) -> None:
    """In the worker: assertion-rewrite a suite file (pytest's own rewriting; a shared suite only once)."""
    _cached_rewrite_test(Path(test_path), config)


def compile_trusted(path: str) -> None:
    """In the worker: compile a trusted module exactly as the child's import would."""
    data = Path(path).read_bytes()
    if (path, data) not in _COMPILED:
        _remember(_COMPILED, (path, data), compile(data, path, "exec", dont_inherit=True))


_AHEAD_FILENAME = "<suite rewritten ahead>"
_AHEAD: dict[str, bytes] = {}


def rewrite_ahead(source: str) -> bytes:
    """Marshalled code of a suite module, assertion-rewritten exactly as pytest's `_rewrite_test` does.

    Remembered for `rewritten_ahead`. The file name is a placeholder; `install_rewritten` puts the
    suite's real path in its place. (pytest's only use of its config here is
    `enable_assertion_pass_hook`, which our ini never sets.)
    """
    found = _AHEAD.get(source)
    if found is None:
        from _pytest.assertion.rewrite import rewrite_asserts

        data = source.encode("utf-8")
        tree = ast.parse(data, filename=_AHEAD_FILENAME)
        rewrite_asserts(tree, data, _AHEAD_FILENAME, None)
        found = marshal.dumps(compile(tree, _AHEAD_FILENAME, "exec", dont_inherit=True))
        _remember(_AHEAD, source, found)
    return found


def rewritten_ahead(source: str) -> bytes | None:
    """The suite's code if `rewrite_ahead` has produced it in this process, else None."""
    return _AHEAD.get(source)


def _retarget(code: types.CodeType, filename: str) -> types.CodeType:
    consts = tuple(_retarget(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def install_rewritten(test_path: str, code: bytes) -> None:
    """In the worker: serve a suite's import from code rewritten ahead (`rewrite_ahead`)."""
    data = Path(test_path).read_bytes()
    if (test_path, data) not in _REWRITTEN:
        found = (importlib.util.source_hash(data), _retarget(marshal.loads(code), test_path))
        _remember(_REWRITTEN, (test_path, data), found)
