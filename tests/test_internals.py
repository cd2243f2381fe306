"""The sandbox's speed-ups that use CPython or pytest internals: used only on the versions they hold for."""

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from runner.judging.suite_module import PREAMBLE
from runner.sandbox.speedups import internals
from runner.sandbox.workers.pool import Limits, SandboxJob, WorkerPool

ROOT = Path(__file__).resolve().parents[1]


def test_every_speed_up_holds_for_this_python_and_the_locked_pytest():
    # Fails loudly when Python or pytest moves on: check the internals, then widen the lists and the pins.
    assert {name: internals.unsupported(name) for name in internals.NAMES} == dict.fromkeys(internals.NAMES)


def test_another_python_or_pytest_turns_the_speed_up_off_with_the_reason():
    assert internals.unsupported("dict_versions", python=(3, 11)) is None
    assert internals.unsupported("dict_versions", python=(3, 14)) == (
        "it reads the object layouts of CPython 3.11, 3.12, 3.13, not 3.14"
    )
    assert internals.unsupported("prepared_session", pytest_version="9.2.7") is None
    reason = internals.unsupported("prepared_session", pytest_version="9.3.0")
    assert reason == "it uses private functions of pytest 9.2, not 9.3.0"


def test_an_unsupported_speed_up_is_off_and_says_so(monkeypatch):
    monkeypatch.setattr(internals, "unsupported", lambda name: "because")
    with pytest.warns(RuntimeWarning, match="sandbox speed-up prepared_session is off: because"):
        assert internals.enabled("prepared_session") is False


def test_the_pins_match_the_versions_the_speed_ups_hold_for():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert f"pytest=={internals.PYTEST_SERIES}.*" in project["dependencies"]
    newest = internals.PYTHON_VERSIONS[-1]
    assert project["requires-python"] == f">=3.11,<{newest[0]}.{newest[1] + 1}"


def test_an_unknown_switch_is_one_line():
    env = {**os.environ, internals.ENV: "dict_versions,typo"}
    done = subprocess.run([sys.executable, "-c", "import runner.sandbox.speedups.internals"], env=env, cwd=ROOT,
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"{internals.ENV}: unknown name(s) ['typo']; "
        "choose from dict_versions, prepared_session, rewrite_cache, direct_collection"
    )


def test_with_every_speed_up_off_the_verdicts_are_the_same(monkeypatch):
    monkeypatch.setenv(internals.ENV, ",".join(internals.NAMES))  # the workers read it at their start
    suites = {"test_visible.py": "from candidate import f\n\ndef test_f():\n    assert f() == 1\n",
              "test_hidden.py": "from candidate import f\n\ndef test_g():\n    assert f() + 1 == 2\n"}  # fmt: skip
    order = (("visible", "test_visible.py"), ("hidden", "test_hidden.py"))
    with WorkerPool(workers=1, limits=Limits(timeout_s=8.0, cpu_s=4.0)) as pool:
        good = pool.run(SandboxJob({"candidate.py": "def f():\n    return 1\n", **suites}, order))
        bad = pool.run(SandboxJob({"candidate.py": "def f():\n    return 2\n", **suites}, order))
        hostile = pool.run(SandboxJob({"candidate.py": "import builtins\nbuiltins.len = max\ndef f():\n    return 1\n",
                                       **suites}, order))  # fmt: skip
    assert [s.passed for s in good.suites.values()] == [True, True]
    assert [s.outcome.value for s in bad.suites.values()] == ["failed", "failed"]
    assert not any(s.passed for s in hostile.suites.values())


COLLECTION_SUITES = {
    "test_visible.py": "def test_f():\n    assert f() == 1\n",
    "test_hidden.py": (
        "@pytest.mark.parametrize('n', [1, 2])\ndef test_n(n):\n    assert f() == n\n\n"
        "class TestF:\n    def test_in_class(self, tmp_path):\n        assert f() == 1\n\n"
        "@pytest.mark.xfail(strict=True)\ndef test_xfail():\n    assert f() == 3\n"
    ),
    "test_broken.py": "import no_such_module_anywhere\n\ndef test_never():\n    pass\n",
    "test_eager.py": "from candidate import f as eager\n\ndef test_eager():\n    assert eager() == 1\n",
}
"""Suites that exercise pytest's collection: an order of files, parametrized tests, a class and a fixture, a
strict xfail, a module that fails to import, and one that imports the candidate while it is collected."""


def _collection_results(monkeypatch, off: str, extra: dict[str, str]) -> list:
    monkeypatch.setenv(internals.ENV, off)  # the workers read it at their start
    preamble = PREAMBLE.format(hypothesis="", reference="") + "f, = _load_entry_points(('f',))\n\n"
    suites = {name: preamble + body for name, body in COLLECTION_SUITES.items()}
    order = tuple((name[5:-3], name) for name in COLLECTION_SUITES)
    results = []
    with WorkerPool(workers=1, limits=Limits(timeout_s=8.0, cpu_s=4.0)) as pool:
        for candidate in ("def f():\n    return 1\n", "def f():\n    return 2\n", "def f(:\n"):
            for group in (order, order[::-1], order[1:2]):
                result = pool.run(SandboxJob({"candidate.py": candidate, **suites, **extra}, group))
                results.append([(s.suite, s.outcome, s.tests, s.detail) for s in result.suites.values()])
    return [re.sub(r"runner-slot0-\w+", "JOB", repr(r)) for r in results]  # each pool has its own job folder


def test_direct_collection_gives_pytest_s_own_results(monkeypatch):
    direct = _collection_results(monkeypatch, "", {})
    assert direct == _collection_results(monkeypatch, "direct_collection", {})
    assert len(set(direct)) == len(direct)  # the cases differ from each other, so equal lists say something


def test_a_job_folder_that_is_a_package_is_collected_by_pytest_s_own_path(monkeypatch):
    package = {"__init__.py": ""}
    assert _collection_results(monkeypatch, "", package) == _collection_results(
        monkeypatch, "direct_collection", package
    )
