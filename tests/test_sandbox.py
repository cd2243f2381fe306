"""The sandbox harness: limits from config, expected tests, judging, the worker pool's behaviour."""

from __future__ import annotations

import ast
import dataclasses
import os
import signal
import socket
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from runner.config import SandboxConfig
from runner.outcome import Outcome
from runner.sandbox import protocol
from runner.sandbox.confine.isolation import sandbox_env
from runner.sandbox.protocol import (
    Armed,
    Channel,
    Collected,
    CollectError,
    Done,
    Failure,
    Internal,
    Isolation,
    Report,
    Start,
    SuiteDone,
    Tamper,
)
from runner.sandbox.suite_result import RunFacts, expected_tests, suite_result_of
from runner.sandbox.workers import pool as sandbox
from runner.sandbox.workers.pool import EarlyZygote, Limits, SandboxJob, WorkerDied, WorkerPool
from tests.conftest import descendants

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="uid drop and network namespaces need root")
LIMITS = Limits(timeout_s=8.0, cpu_s=4.0, hypothesis_examples=25)


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(workers=2, limits=LIMITS) as pool:
        yield pool


def simple_job(candidate: str, suite: str, name: str = "visible") -> SandboxJob:
    return SandboxJob({"candidate.py": candidate, f"test_{name}.py": suite}, ((name, f"test_{name}.py"),))


# ------------------------------------------------------------------ Limits


def test_limits_from_sandbox_config_whose_defaults_are_the_limits_defaults():
    cfg = SandboxConfig(timeout_s=3.5, memory_mb=128, network=True)
    limits = Limits.from_config(cfg)
    assert (limits.timeout_s, limits.memory_mb, limits.network) == (3.5, 128, True)
    assert Limits.from_config(SandboxConfig()) == Limits()  # one set of defaults


def test_config_does_not_import_the_sandbox():
    """runner.config is the bottom layer: importing it loads neither the sandbox, the judging layer nor Hydra."""
    layers = "('runner.sandbox', 'runner.judging', 'hydra')"
    code = f"import sys, runner.config; print(sorted(m for m in sys.modules if m.startswith({layers})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------ expected tests and judging


def test_expected_tests_come_from_the_ast():
    source = (
        "import pytest\n"
        "def helper():\n    pass\n"
        "def test_a():\n    pass\n"
        "@pytest.mark.parametrize('x', [1, 2])\ndef test_b(x):\n    pass\n"
        "class TestC:\n    def test_d(self):\n        pass\n    def other(self):\n        pass\n"
        "class Helper:\n    def test_e(self):\n        pass\n"
    )
    assert expected_tests(source) == ("test_a", "test_b", "TestC::test_d")


def _report(nodeid: str, when: str, outcome: str, failure: Failure | None = None) -> Report:
    return Report(f"test_v.py::{nodeid}", when, outcome, failure=failure)


def _passing(nodeid: str) -> list[Report]:
    return [_report(nodeid, when, "passed") for when in ("setup", "call", "teardown")]


def test_every_parametrized_item_must_pass():
    reports = [*_passing("test_b[1]"), _report("test_b[2]", "setup", "passed"),
               _report("test_b[2]", "call", "failed", Failure(assertion=True, msg="assert 1 == 2")),
               _report("test_b[2]", "teardown", "passed")]  # fmt: skip
    verdict = suite_result_of("visible", ["test_b"], RunFacts(reports=reports, ends=1), LIMITS)
    assert verdict.outcome is Outcome.FAILED
    assert [(t.name, t.status) for t in verdict.tests] == [("test_b[1]", "passed"), ("test_b[2]", "failed")]


def test_an_expected_test_without_result_is_missing():
    verdict = suite_result_of("visible", ["test_a", "test_b"], RunFacts(reports=_passing("test_a"), ends=1), LIMITS)
    assert verdict.outcome is Outcome.ERROR
    assert ("test_b", "missing") in [(t.name, t.status) for t in verdict.tests]


def test_all_passed_is_passed_but_not_without_the_end_of_session():
    facts = RunFacts(reports=_passing("test_a"))
    assert suite_result_of("visible", ["test_a"], facts, LIMITS).outcome is Outcome.ERROR
    facts.ends = 1
    assert suite_result_of("visible", ["test_a"], facts, LIMITS).outcome is Outcome.PASSED
    facts.ends = 2
    assert "two end-of-session messages" in suite_result_of("visible", ["test_a"], facts, LIMITS).detail


def test_duplicate_reports_are_tampering():
    reports = [*_passing("test_a"), _report("test_a", "call", "passed")]
    verdict = suite_result_of("visible", ["test_a"], RunFacts(reports=reports, ends=1), LIMITS)
    assert verdict.outcome is Outcome.ERROR and "tampering detected" in verdict.detail


def test_the_running_test_of_a_timed_out_run_is_timeout():
    reports = [*_passing("test_a"), _report("test_b", "setup", "passed")]
    facts = RunFacts(reports=reports, started=["test_v.py::test_a", "test_v.py::test_b"], timed_out=True,
                     status=signal.SIGKILL)  # fmt: skip
    verdict = suite_result_of("visible", ["test_a", "test_b"], facts, LIMITS)
    assert verdict.outcome is Outcome.TIMEOUT
    assert [(t.name, t.status) for t in verdict.tests] == [("test_a", "passed"), ("test_b", "timeout")]


def test_missing_module_is_harness_error_unless_the_candidate_imports_it():
    failure = Failure(exc=["ModuleNotFoundError"], missing_module="numpy", msg="No module named 'numpy'")
    collect = CollectError("test_v.py", "failed", failure)
    verdict = suite_result_of("visible", ["test_a"], RunFacts(collect_errors=[collect], ends=1), LIMITS)
    assert verdict.outcome is Outcome.HARNESS_ERROR and "numpy" in verdict.detail
    in_candidate = CollectError("test_v.py", "failed", dataclasses.replace(failure, in_candidate=True))
    facts = RunFacts(collect_errors=[in_candidate], ends=1)
    assert suite_result_of("visible", ["test_a"], facts, LIMITS).outcome is Outcome.ERROR


def test_the_channel_carries_every_message_kind_and_nothing_else():
    read_end, write_end = os.pipe()
    channel = Channel(write_end, "nonce")
    messages = [Isolation({"no_network": True}), Armed(), Collected(), Start("test_v.py::test_a"),
                Report("test_v.py::test_a", "call", "failed", False, Failure(["OSError"], [24, "x"], msg="m")),
                CollectError("test_v.py", "failed", Failure(msg="boom")), Tamper("candidate used gc.get_objects"),
                Internal("oops"), SuiteDone("test_v.py", ["changed"], "NameError: x"), Done(1)]  # fmt: skip
    for message in messages:
        channel.send(message)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as stream:
        lines = stream.read().decode().splitlines()
    assert {type(m) for m in messages} == set(protocol.KINDS.values())
    assert all(line.startswith("nonce ") for line in lines)
    assert [protocol.decode(line.split(" ", 1)[1]) for line in lines] == messages
    for bad in ("[]", '{"k": "unknown"}', '{"k": "start"}', '{"k": "done", "exit": "0"}',
                '{"k": "report", "id": "t::a", "when": "later", "outcome": "passed"}',
                '{"k": "collect", "id": "t", "outcome": "failed", "failure": null}'):  # fmt: skip
        with pytest.raises(ValueError):
            protocol.decode(bad)


# ------------------------------------------------------------------ the pool


@needs_root
def test_unprivileged_child_uses_preloaded_modules(pool):
    suite = (
        "import collections, heapq, math\n"
        "import pytest\n"
        "from hypothesis import given, strategies as st\n"
        "from candidate import top\n\n"
        "def test_heap():\n    assert top([5, 1, 4], 2) == [5, 4]\n\n"
        "@pytest.mark.parametrize('xs', [[1], [3, 2]])\n"
        "def test_param(xs, tmp_path, capsys, monkeypatch):\n"
        "    (tmp_path / 'f').write_text('x')\n    print('hi')\n    assert capsys.readouterr().out == 'hi\\n'\n"
        "    assert top(xs, 1) == [max(xs)]\n\n"
        "def test_raises_and_approx():\n"
        "    with pytest.raises(ValueError):\n        top([1], -1)\n"
        "    assert math.fsum([0.1] * 3) == pytest.approx(0.3)\n\n"
        "@given(st.lists(st.integers(), min_size=1), st.integers(1, 5))\n"
        "def test_property(xs, k):\n"
        "    assert top(xs, k) == sorted(xs, reverse=True)[:k]\n"
        "    assert collections.Counter(top(xs, k)) <= collections.Counter(xs)\n"
    )
    candidate = (
        "import heapq\nfrom collections import deque\n"
        "def top(xs, k):\n    if k < 0:\n        raise ValueError(k)\n    return heapq.nlargest(k, deque(xs))\n"
    )
    result = pool.run(simple_job(candidate, suite))
    verdict = result.suites["visible"]
    assert verdict.outcome is Outcome.PASSED, verdict
    assert len(verdict.tests) == 5
    assert result.isolation["unprivileged_uid"] and result.isolation["network_namespace"]


def test_missing_test_only_module_is_harness_error(pool):
    suite = "import not_a_real_module_xyz\nfrom candidate import f\ndef test_a():\n    assert f() == 1\n"
    verdict = pool.run(simple_job("def f():\n    return 1\n", suite)).suites["visible"]
    assert verdict.outcome is Outcome.HARNESS_ERROR
    assert "not_a_real_module_xyz" in verdict.detail


def test_candidate_importing_a_missing_module_is_error(pool):
    suite = "from candidate import f\ndef test_a():\n    assert f() == 1\n"
    verdict = pool.run(simple_job("import numpy_not_here\ndef f():\n    return 1\n", suite)).suites["visible"]
    assert verdict.outcome is Outcome.ERROR
    assert "numpy_not_here" in verdict.detail


def test_missing_suite_file_is_harness_error(pool):
    job = SandboxJob({"candidate.py": "x = 1\n"}, (("visible", "test_visible.py"),))
    assert pool.run(job).suites["visible"].outcome is Outcome.HARNESS_ERROR


def test_environment_is_scrubbed_and_output_captured(pool):
    suite = "from candidate import env\ndef test_a():\n    assert env() == 0\n"
    candidate = (
        "import os\ndef env():\n    print('candidate says hi')\n    raise RuntimeError(f'ENV={sorted(os.environ)}')\n"
    )
    result = pool.run(simple_job(candidate, suite))
    names = ast.literal_eval(result.suites["visible"].tests[0].message.split("ENV=", 1)[1].splitlines()[0])
    # pytest itself sets PYTEST_VERSION and PYTEST_CURRENT_TEST; nothing else may appear
    assert set(names) == set(sandbox_env("/x")) | {"PYTEST_CURRENT_TEST", "PYTEST_VERSION"}
    assert "candidate says hi" in result.output


def test_concurrent_runs_from_many_threads_do_not_mix(pool):
    suite = "from candidate import f\ndef test_a():\n    assert f() == 0\n"

    def one(i: int) -> tuple[int, Outcome, str]:
        verdict = pool.run(simple_job(f"def f():\n    return {i % 3}\n", suite)).suites["visible"]
        return i, verdict.outcome, verdict.tests[0].message

    with ThreadPoolExecutor(8) as executor:
        results = list(executor.map(one, range(24)))
    for i, outcome, message in results:
        assert outcome is (Outcome.PASSED if i % 3 == 0 else Outcome.FAILED), (i, outcome)
        if i % 3:
            assert f"assert {i % 3} == 0" in message


def test_a_changed_suite_at_the_same_path_is_not_served_stale(pool):
    candidate = "def f():\n    return 1\n"
    first = pool.run(simple_job(candidate, "from candidate import f\ndef test_a():\n    assert f() == 1\n"))
    second = pool.run(simple_job(candidate, "from candidate import f\ndef test_a():\n    assert f() == 2\n"))
    third = pool.run(simple_job(candidate, "from candidate import f\ndef test_a():\n    assert f() == 1\n"))
    assert first.suites["visible"].passed and third.suites["visible"].passed
    assert second.suites["visible"].outcome is Outcome.FAILED
    assert "assert 1 == 2" in second.suites["visible"].tests[0].message


def test_each_job_starts_in_an_empty_directory(pool):
    suite = "from candidate import f\ndef test_a():\n    assert f() == 0\n"
    candidate = (
        "import os\ndef f():\n    here = os.path.dirname(os.path.abspath(__file__))\n"
        "    seen = sorted(os.listdir('.')) + sorted(os.listdir(here))\n"
        "    open('left.txt', 'w').write('x')\n    return seen\n"
    )
    planted = {"candidate.py": candidate, "test_visible.py": suite, "extra_file.py": "x = 1\n"}
    pool.run(SandboxJob(planted, (("visible", "test_visible.py"),)))
    for _ in range(3):  # every worker of the pool, whichever ran the first job
        verdict = pool.run(simple_job(candidate, suite)).suites["visible"]
        # `__pycache__` holds this job's rewritten suite (runner.sandbox.speedups.rewrite_cache); none of the first job
        assert "assert ['__pycache__', 'candidate.py', 'test_visible.py'] == 0" in verdict.tests[0].message, verdict


def test_deterministic_property_failures(pool):
    suite = (
        "from hypothesis import given, strategies as st\nfrom candidate import f\n"
        "@given(st.integers(), st.lists(st.integers()))\ndef test_p(x, xs):\n    assert f(x, xs) == x\n"
    )
    job = simple_job("def f(x, xs):\n    return x if len(xs) < 3 else x + 1\n", suite)
    first, second = (pool.run(job).suites["visible"] for _ in range(2))
    assert first.outcome is Outcome.FAILED and first.tests == second.tests
    assert "Falsifying example" in first.tests[0].message


DRAW_SUITE = "import random\ndef test_draw():\n    assert False, 'drew %r' % [random.random() for _ in range({n})]\n"


def test_suites_draw_the_same_random_numbers_on_every_run_whatever_ran_before(pool):
    files = {
        "candidate.py": "def f():\n    pass\n",
        "test_a.py": DRAW_SUITE.format(n=3),
        "test_b.py": DRAW_SUITE.format(n=1),
    }
    both = pool.run(SandboxJob(files, (("a", "test_a.py"), ("b", "test_b.py"))))
    with WorkerPool(workers=1, limits=LIMITS) as fresh:  # new processes: a new random state, unless seeded
        alone = fresh.run(SandboxJob({"candidate.py": files["candidate.py"], "test_b.py": files["test_b.py"]},
                                     (("b", "test_b.py"),)))  # fmt: skip
    after_a, first_of_a, on_its_own = (
        r.suites[s].tests[0].message for r, s in ((both, "b"), (both, "a"), (alone, "b"))
    )
    assert "drew [" in after_a and after_a == on_its_own
    assert first_of_a.split(",")[0] == after_a.split("]")[0]  # each suite starts from the same seed


def test_failure_messages_name_no_memory_address(pool):
    job = simple_job("def f():\n    return object()\n", "from candidate import f\ndef test_f():\n    assert f() == 1\n")
    message = pool.run(job).suites["visible"].tests[0].message
    assert "<object object at 0x...>" in message and "0x7" not in message


def test_pytest_formats_failures_as_one_line_and_the_message_keeps_the_assertion(pool):
    # pytest's default failure text reads and parses the source of every frame; the worker never uses it
    suite = (
        "from candidate import f\n"
        "def test_f():\n    assert f() == [1, 2]\n"
        "def test_style(request):\n    assert request.config.getoption('tbstyle') == 'line'\n"
    )  # fmt: skip
    tests = pool.run(simple_job("def f():\n    return [1, 3]\n", suite)).suites["visible"].tests
    assert [t.status for t in tests] == ["failed", "passed"]
    assert "assert [1, 3] == [1, 2]" in tests[0].message


def test_a_killed_worker_is_replaced_and_the_job_retried(pool):
    victim = pool._all[0]
    victim.proc.send_signal(signal.SIGKILL)
    victim.proc.wait()
    suite = "from candidate import f\ndef test_a():\n    assert f() == 1\n"
    results = [pool.run(simple_job("def f():\n    return 1\n", suite)) for _ in range(3)]
    assert all(r.suites["visible"].passed for r in results)
    assert victim not in pool._all and all(w.proc.poll() is None for w in pool._all)
    assert victim.requests.closed and victim.replies.closed


def test_a_worker_dying_twice_is_harness_error(monkeypatch):
    with WorkerPool(workers=1, limits=LIMITS) as one:

        def die(self, job):
            raise WorkerDied("simulated")

        monkeypatch.setattr(sandbox.PoolWorker, "call", die)
        result = one.run(simple_job("x = 1\n", "def test_a():\n    pass\n"))
        assert result.suites["visible"].outcome is Outcome.HARNESS_ERROR
        assert "died twice" in result.suites["visible"].detail


def test_closed_pool_refuses_jobs():
    pool = WorkerPool(workers=1, limits=LIMITS)
    pool.close()
    with pytest.raises(RuntimeError):
        pool.run(simple_job("x = 1\n", "def test_a():\n    pass\n"))


def test_closing_with_kill_ends_the_job_in_flight_and_starts_no_worker_for_it():
    pool = WorkerPool(workers=1, limits=LIMITS)
    stuck = "import time\ndef test_a():\n    time.sleep(120)\n"
    with ThreadPoolExecutor(2) as executor:
        running = executor.submit(pool.run, simple_job("x = 1\n", stuck))
        waiting = executor.submit(pool.run, simple_job("x = 1\n", stuck))  # no worker free: it waits
        worker = pool._all[0]
        while not worker.hello:
            threading.Event().wait(0.05)
        threading.Event().wait(1.0)  # the job has been sent and is sleeping
        pool.close(kill=True)
        results = [running.result(timeout=60), waiting.result(timeout=60)]  # a graceful close would wait minutes
    assert [r.suites["visible"].outcome for r in results] == [Outcome.HARNESS_ERROR] * 2
    assert pool._all == [worker] and worker.proc.poll() is not None
    assert worker.closed  # by the thread that was reading its pipe, not under it


def test_closing_with_kill_while_many_jobs_run_never_reads_a_closed_pipe():
    """close(kill=True) from another thread used to close a reply pipe a job thread was reading (EBADF)."""
    stuck = "import time\ndef test_a():\n    time.sleep(120)\n"
    for delay in (0.0, 0.3, 1.0):
        pool = WorkerPool(workers=2, limits=LIMITS)
        with ThreadPoolExecutor(4) as executor:
            futures = [executor.submit(pool.run, simple_job("x = 1\n", stuck)) for _ in range(4)]
            threading.Event().wait(delay)
            pool.close(kill=True)
            outcomes = [f.result(timeout=60).suites["visible"].outcome for f in futures]
        assert outcomes == [Outcome.HARNESS_ERROR] * 4, delay
        assert all(w.closed for w in pool._all)


@needs_root
def test_isolation_record_is_truthful_when_protections_are_off():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    accepted = []
    thread = threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True)
    thread.start()
    suite = "from candidate import f\ndef test_a():\n    assert f() == 0\n"
    candidate = (
        f"import os, socket\ndef f():\n    socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n"
        "    return os.getuid()\n"
    )
    limits = Limits(network=True, drop_privileges=False, timeout_s=8.0)
    try:
        with WorkerPool(workers=1, limits=limits) as open_pool:
            assert open_pool.isolation["network_namespace"] is False
            assert open_pool.isolation["unprivileged_uid"] is False
            result = open_pool.run(simple_job(candidate, suite))
    finally:
        thread.join(5)
        server.close()
    assert result.isolation["network_namespace"] is False and result.isolation["unprivileged_uid"] is False
    assert result.suites["visible"].passed  # it really had the network and ran as root (uid 0)
    assert accepted


def test_suites_that_import_the_candidate_eagerly_run_in_sessions_of_their_own(pool):
    # The candidate runs while the first file is collected: its import hook would serve a fake second
    # suite module. The worker sees that on the channel and runs each suite in a session of its own.
    candidate = (
        "import importlib.util, sys\n"
        "class Loader:\n"
        "    def create_module(self, spec):\n        return None\n"
        "    def exec_module(self, module):\n        exec('def test_h():\\n    pass\\n', vars(module))\n"
        "class Finder:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'test_hidden':\n            return importlib.util.spec_from_loader(name, Loader())\n"
        "sys.meta_path.insert(0, Finder())\n"
        "def f():\n    return 1\n"
    )
    files = {
        "candidate.py": candidate,
        "test_visible.py": "from candidate import f\ndef test_v():\n    assert f() == 1\n",
        "test_hidden.py": "from candidate import f\ndef test_h():\n    assert f() == 2\n",
    }
    result = pool.run(SandboxJob(files, (("visible", "test_visible.py"), ("hidden", "test_hidden.py"))))
    assert result.suites["visible"].passed
    hidden = result.suites["hidden"]
    assert hidden.outcome is Outcome.FAILED and "assert 1 == 2" in hidden.tests[0].message, hidden


def test_one_session_maps_each_test_to_its_suite(pool):
    files = {
        "candidate.py": "def f(x):\n    return x\n",
        "test_a.py": "from candidate_guard import load_entry_points\nf, = load_entry_points(('f',))\n"
        "def test_one():\n    assert f(1) == 1\ndef test_two():\n    assert f(2) == 3\n",
        "test_b.py": "from candidate_guard import load_entry_points\nf, = load_entry_points(('f',))\n"
        "def test_one():\n    assert f(1) == 1\n",
    }
    result = pool.run(SandboxJob(files, (("a", "test_a.py"), ("b", "test_b.py"))))
    assert [(t.name, t.status) for t in result.suites["a"].tests] == [("test_one", "passed"), ("test_two", "failed")]
    assert result.suites["a"].outcome is Outcome.FAILED
    assert result.suites["b"].passed and [t.name for t in result.suites["b"].tests] == ["test_one"]


# ------------------------------------------------------------------ the zygote


def test_the_zygote_forks_every_worker_and_nothing_outlives_the_pool():
    with WorkerPool(workers=2, limits=LIMITS) as two:
        hellos = [w.wait_ready() for w in two._all]
        pids = [h["pid"] for h in hellos]
        assert len(set(pids)) == 2 and len({h["slot"] for h in hellos}) == 2
        zygote = two._zygotes[0].pid
        assert all(_parent_of(pid) == zygote for pid in pids)
        assert two.warm()
    for pid in [*pids, zygote]:
        assert not os.path.exists(f"/proc/{pid}") or _state_of(pid) == "Z"


def _parent_of(pid: int) -> int:
    return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])


def _state_of(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_suite_modules_are_found_by_their_stem_or_else_by_a_full_search(tmp_path, monkeypatch):
    import sys
    import types

    from runner.sandbox.child.pytest_child import _suite_modules

    path = str(tmp_path / "test_hidden.py")
    module = types.ModuleType("test_hidden")
    module.__file__ = path
    monkeypatch.setitem(sys.modules, "test_hidden", module)
    assert _suite_modules([path]) == [module]
    monkeypatch.delitem(sys.modules, "test_hidden")
    monkeypatch.setitem(sys.modules, "t.test_hidden", module)  # another import mode names it differently
    assert _suite_modules([path]) == [module]


def test_a_pool_whose_workers_cannot_start_fails_at_once_and_cleanly(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/bin/false")  # the zygote exits at once
    with pytest.raises(WorkerDied, match="exited"):
        WorkerPool(workers=2, limits=LIMITS)
    lazy = WorkerPool(workers=2, limits=LIMITS, wait=False)  # the same error surfaces at the first use
    with pytest.raises(WorkerDied, match="exited"):
        lazy.run(simple_job("x = 1\n", "def test_a():\n    pass\n"))
    assert lazy._closed


def test_an_early_zygote_forks_the_pool_it_is_handed_to():
    with EarlyZygote() as early:
        zygote = early.proc.pid
        with WorkerPool(workers=2, limits=LIMITS, wait=False, zygote=early) as two:
            result = two.run(simple_job("def f():\n    return 1\n", "from candidate import f\n\ndef test_f():\n"
                                        "    assert f() == 1\n"))  # fmt: skip
            assert result.suites["visible"].passed
            pids = [w.wait_ready()["pid"] for w in two._all]
            assert all(_parent_of(pid) == zygote for pid in pids)
    for pid in [*pids, zygote]:
        assert not os.path.exists(f"/proc/{pid}") or _state_of(pid) == "Z"


def test_an_early_zygote_never_handed_to_a_pool_is_stopped():
    early = EarlyZygote()
    early.close()
    assert early.proc.poll() is not None


def test_a_pool_whose_early_zygote_died_fails_cleanly():
    early = EarlyZygote()
    early.proc.kill()
    early.proc.wait()
    lazy = WorkerPool(workers=2, limits=LIMITS, wait=False, zygote=early)
    with pytest.raises(WorkerDied, match="exited"):
        lazy.run(simple_job("x = 1\n", "def test_a():\n    pass\n"))


def test_the_pool_and_its_children_run_at_the_sandbox_nice_level(pool):
    """Warm-up, gold check and test runs overlap generation: every process of the pool yields the CPU to it,
    and a sandboxed child is at the same level as its worker (not niced twice)."""
    from runner.sandbox.confine.priority import SANDBOX_NICE

    suite = "import os\ndef test_a():\n    assert os.getpriority(os.PRIO_PROCESS, 0) == -1\n"
    result = pool.run(simple_job("", suite))
    assert f"assert {SANDBOX_NICE} == -1" in result.suites["visible"].tests[0].message
    workers = [pid for pid in descendants(os.getpid()) if b"runner.sandbox.workers.worker" in _read(pid, "cmdline")]
    assert len(workers) >= 3  # the warm-up process and the pool's two workers
    assert {int(_read(pid, "stat").rsplit(b")", 1)[1].split()[16]) for pid in workers} == {SANDBOX_NICE}


def _read(pid: int, name: str) -> bytes:
    try:
        with open(f"/proc/{pid}/{name}", "rb") as f:
            return f.read()
    except OSError:  # the process has ended meanwhile
        return b""
