"""Warming up a worker before it forks any child: preloaded modules, a real pytest session, a probe.

A sandboxed child runs as an unprivileged uid that may not be able to read the Python installation
(/root is mode 700 here), so everything it may need is imported before: `preload`. `warm_up` runs one
real pytest session in the worker so that lazily imported modules and caches are ready in every
child; `probe` forks one confined child to learn which protections actually hold.

Hypothesis is loaded only for the jobs whose suites use it (runner.judging.suite_module.uses_hypothesis):
before the first such job, the worker imports it whole and runs one property (`load_hypothesis`).
A pool that never meets one (HumanEval, the EvalPlus sets) saves about 0.3 s of start-up and 8 MB per
worker, which every forked child would copy.
"""

from __future__ import annotations

import builtins
import importlib
import os
import pickle
import shutil
import sys
import tempfile
from pathlib import Path

from runner.sandbox.child import pytest_child
from runner.sandbox.confine import isolation
from runner.sandbox.confine.limits import Limits
from runner.sandbox.protocol import Channel
from runner.suites.shipped import guard_source

PRELOAD = (
    "abc", "array", "ast", "base64", "binascii", "bisect", "calendar", "cmath", "codecs", "collections",
    "collections.abc", "concurrent.futures", "contextlib", "copy", "csv", "ctypes", "dataclasses",
    "datetime", "decimal", "difflib", "dis", "enum", "errno", "fnmatch", "fractions", "functools", "gc",
    "glob", "graphlib", "hashlib", "heapq", "hmac", "html", "inspect", "io", "itertools", "json",
    "keyword", "linecache", "locale", "math", "numbers", "operator", "pathlib", "pprint", "queue",
    "random", "re", "secrets", "select", "shutil", "signal", "socket", "statistics", "string", "struct",
    "subprocess", "tempfile", "textwrap", "threading", "time", "tokenize", "traceback", "types",
    "typing", "unicodedata", "unittest", "unittest.mock", "uuid", "warnings", "weakref", "zlib",
    "zoneinfo", "encodings.idna", "encodings.ascii", "encodings.latin_1",
)  # fmt: skip
PRELOAD_SKIP = ("hypothesis.extra.", "provider_conformance", "__main__")
"""Optional-dependency and slow tool modules of hypothesis (pytest and hypothesis import what they use)."""
STDLIB_GATE = Path(__file__).resolve().parents[3] / "conf" / "gate" / "stdlib.yaml"
WARMUP_EXAMPLES = 5
"""Examples of the property in `load_hypothesis`. (No property fails in it: shrinking in the warm-up cost
0.1 s of start-up and saved a failing child nothing measurable.)"""
WARMUP_SUITE = """
import collections, heapq, math
import pytest
from candidate import add

def test_pass():
    assert add(1, 2) == 3 and heapq.nsmallest(1, [3, 1]) == [1] and pytest.approx(0.3) == 0.1 + 0.2

@pytest.mark.parametrize("a", [1, 2])
def test_param(a, tmp_path, capsys, monkeypatch):
    print(a)
    with pytest.raises(ZeroDivisionError):
        1 / 0
    assert collections.Counter("aab")["a"] == 2

def test_fail():
    assert {"a": [1, 2]} == {"a": [1, 3]}

def test_error():
    raise KeyError("x")

def test_skip():
    pytest.skip("no")

@pytest.mark.xfail(strict=False)
def test_xfail():
    assert False

class TestClass:
    def test_method(self):
        with pytest.warns(UserWarning):
            import warnings
            warnings.warn("w")
"""


def preload() -> None:
    """Import everything a sandboxed child may need: it cannot read /root once it drops its uid."""
    names = list(PRELOAD)
    try:
        import yaml

        names += yaml.safe_load(STDLIB_GATE.read_text()).get("allowed_imports", [])
    except (OSError, ImportError, AttributeError):
        pass
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    import runner.suites.hypothesis_profile  # noqa: F401
    from runner.suites import candidate_guard  # noqa: F401


_hypothesis_loaded = False


def load_hypothesis(limits: Limits) -> bool:
    """Import hypothesis whole, load the suites' profile and run one property, unless done before in
    this process. True when it was loaded now (the caller re-snapshots what its modules changed)."""
    global _hypothesis_loaded
    if _hypothesis_loaded:
        return False
    _hypothesis_loaded = True
    import hypothesis
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from runner.suites.hypothesis_profile import register_profile

    for name in _submodules(hypothesis):
        try:
            importlib.import_module(name)
        except Exception:  # optional dependencies of some submodules are not installed
            pass
    register_profile(limits.hypothesis_examples)

    @settings(max_examples=WARMUP_EXAMPLES)
    @given(st.lists(st.integers()), st.text(), st.dictionaries(st.integers(), st.floats()),
           st.tuples(st.booleans(), st.sets(st.integers())))  # fmt: skip
    def warm_property(xs, text, mapping, pair) -> None:
        assert sum(xs) == sum(reversed(xs))

    warm_property()
    return True


def _submodules(package) -> list[str]:
    """Dotted names of a package's modules, from its directory (walk_packages would import extras)."""
    root = Path(package.__file__).parent
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        name = ".".join((package.__name__, *parts))
        if not any(skip in name for skip in PRELOAD_SKIP):
            names.append(name)
    return names


def warm_up() -> None:
    """One real pytest session in this process, so that lazily imported modules are loaded now.

    It needs none of the pool's limits (a zygote runs it while the pool is still composing its config)."""
    root = tempfile.mkdtemp(prefix="runner-warmup-")
    cwd = os.getcwd()
    try:
        test_dir = os.path.join(root, "t")
        os.mkdir(test_dir)
        # The warm-up loads its own copy of the guard: the imported module must stay unused (load_candidate_guard).
        guard_copy = guard_source() + "\n# the warm-up's own copy\n"
        files = {"candidate.py": "def add(a, b):\n    return a + b\n", "candidate_guard.py": guard_copy,
                 "test_w.py": WARMUP_SUITE}  # fmt: skip
        for name, text in files.items():
            Path(test_dir, name).write_text(text)
        Path(root, "pytest.ini").write_text("[pytest]\n")
        os.chdir(root)
        with open(os.devnull, "w") as sink:
            saved = os.dup(1), os.dup(2)
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            try:
                channel = Channel(sink.fileno(), "warmup")
                warm_limits = Limits(hypothesis_examples=WARMUP_EXAMPLES)
                pytest_child.run_suite(os.path.join(test_dir, "test_w.py"), os.path.join(root, "pytest.ini"),
                                       channel, warm_limits)  # fmt: skip
            finally:
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
                os.close(saved[0])
                os.close(saved[1])
        scrub_imported(test_dir)
    finally:
        os.chdir(cwd)
        shutil.rmtree(root, ignore_errors=True)


def scrub_imported(test_dir: str) -> None:
    """Forget modules loaded from `test_dir` (after the warm-up run in the long-lived worker)."""
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(test_dir + os.sep) or name == "candidate_guard":
            del sys.modules[name]
    sys.path[:] = [p for p in sys.path if not p.startswith(test_dir)]
    builtins_dict = vars(builtins)
    builtins_dict.pop("_", None)


def probe(limits: Limits, slot) -> dict[str, bool]:
    """Which protections a child actually gets here: fork one, confine it, ask."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            applied = isolation.confine(limits, slot, tempfile.gettempdir())
            os.write(write_end, pickle.dumps(applied))
        finally:
            os._exit(0)
    os.close(write_end)
    data = b""
    while chunk := os.read(read_end, 65536):
        data += chunk
    os.close(read_end)
    os.waitpid(pid, 0)
    isolation.kill_everything(pid, slot)
    return pickle.loads(data) if data else {}
