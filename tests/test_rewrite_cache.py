"""Rewritten suite modules cached across runs (runner.sandbox.speedups.rewrite_cache): used, keyed by content, fresh."""

import os
from pathlib import Path

from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc

from runner.sandbox.speedups.rewrite_cache import RewriteCache
from runner.sandbox.workers.pool import Limits, SandboxJob, WorkerPool

SUITE = "from candidate import f\n\ndef test_f():\n    assert f() == 1\n"
ORDER = (("hidden", "test_hidden.py"),)


class _Config:  # what rewriting reads of a pytest config: its ini options
    def getini(self, name):
        return {"enable_assertion_pass_hook": False}.get(name, [])


def test_the_pyc_is_pytests_own_and_a_changed_suite_never_gets_the_old_one(tmp_path):
    cache = RewriteCache(_Config(), root=tmp_path / "cache")
    job = tmp_path / "t"
    job.mkdir()
    suite = job / "test_hidden.py"
    suite.write_text(SUITE)
    cache.provide(str(job), ["test_hidden.py"])
    pyc = job / "__pycache__" / ("test_hidden" + PYC_TAIL)
    assert _read_pyc(suite, pyc) is not None  # the child's pytest takes it instead of rewriting
    assert oct(pyc.stat().st_mode & 0o777) == "0o444"
    assert len(list((tmp_path / "cache").glob("*.pyc"))) == 1

    os.chmod(pyc, 0o644)
    suite.write_text(SUITE.replace("== 1", "== 2"))
    assert _read_pyc(suite, pyc) is None  # pytest itself refuses a pyc of other source
    cache.provide(str(job), ["test_hidden.py"])
    assert len(list((tmp_path / "cache").glob("*.pyc"))) == 2  # one entry per content
    test_f = next(c for c in _read_pyc(suite, pyc).co_consts if getattr(c, "co_name", "") == "test_f")
    assert 2 in test_f.co_consts and 1 not in test_f.co_consts  # the new source's code, not the old


def test_a_cached_rewrite_gives_the_same_verdicts_and_messages(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # the workers' user cache
    jobs = [SandboxJob({"candidate.py": f"def f():\n    return {value}\n", "test_hidden.py": SUITE}, ORDER)
            for value in (1, 3)]  # fmt: skip
    runs = []
    for _ in range(2):  # the first run fills the cache, the second reads it
        with WorkerPool(workers=1, limits=Limits(timeout_s=8.0, cpu_s=4.0)) as pool:
            runs.append([pool.run(job).suites["hidden"] for job in jobs])
    cached = list(Path(tmp_path, "runner", "pytest-rewrite").rglob("*.pyc"))
    assert len(cached) == 1  # both jobs share the suite, so one entry
    for good, bad in runs:
        assert good.passed and bad.outcome.value == "failed"
        assert "assert 3 == 1" in bad.tests[0].message  # assertion introspection: the rewritten module ran
    assert runs[0][1].tests[0].message == runs[1][1].tests[0].message
