"""Code compiled before the sandboxed child starts, so that every child reuses it instead of compiling.

Two kinds of trusted files are compiled, keyed by path and content: suite files, with pytest's own
assertion rewriting (`rewrite_ahead`: by the pool's own process while the workers warm up, else by
the worker), and the job's trusted plain modules, the task's `reference` and `candidate_guard`
(`compile_trusted`). Nothing is executed. The worker installs the code before it forks
(`install_rewritten`, `compile_trusted`), and pytest's rewriting and the import system's compile step
consult these caches first (`install`). The candidate's own file is never compiled by the worker:
compiling untrusted source could exhaust the worker, so it is compiled in the confined child, by the
normal import.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import marshal
import types

from runner.sandbox import internals

ENABLED = internals.enabled("compile_cache")
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
    """pytest's `_rewrite_test`, answered from the cache for a suite installed by `install_rewritten`."""
    found = _REWRITTEN.get((str(fn), fn.read_bytes()))
    return found if found is not None else _ORIGINALS["rewrite"](fn, config)


def _cached_source_to_code(self, data, path, *, _optimize=-1):
    """The import system's compile step, answered from the worker's cache for trusted files."""
    found = _COMPILED.get((str(path), bytes(data))) if _optimize == -1 else None
    return found if found is not None else _ORIGINALS["source_to_code"](self, data, path, _optimize=_optimize)


def install() -> None:
    """Route pytest's assertion rewriting and the import system's compilation through the caches."""
    from _pytest.assertion import rewrite

    if ENABLED and not _ORIGINALS:
        _ORIGINALS["rewrite"] = rewrite._rewrite_test
        _ORIGINALS["source_to_code"] = importlib.machinery.SourceFileLoader.source_to_code
        rewrite._rewrite_test = _cached_rewrite_test
        importlib.machinery.SourceFileLoader.source_to_code = _cached_source_to_code


def compile_trusted(path: str, data: bytes) -> None:
    """In the worker: compile a trusted module (content `data`, at `path`) exactly as the child's import would."""
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


def install_rewritten(test_path: str, data: bytes, code: bytes) -> None:
    """In the worker: serve the import of the suite at `test_path` (content `data`) from `rewrite_ahead` code."""
    if (test_path, data) not in _REWRITTEN:
        found = (importlib.util.source_hash(data), _retarget(marshal.loads(code), test_path))
        _remember(_REWRITTEN, (test_path, data), found)
