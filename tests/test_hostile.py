"""Hostile candidates: every one must be caught by the sandbox, never reported as passed.

Each test runs a real candidate through a real WorkerPool and checks both the verdict and the
evidence that the specific protection (not some accident) stopped it.
"""

from __future__ import annotations

import dataclasses
import os
import re
import socket
import threading
import time
from pathlib import Path

import pytest

from runner.judging.judge import build_job
from runner.judging.suite_module import build_suite_module, suite_file_name
from runner.outcome import Outcome
from runner.sandbox.workers.pool import Limits, SandboxJob, WorkerPool
from runner.tasks.model import Task

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="uid drop and network namespaces need root")

TASK = Task(
    id="add",
    entry_point="add",
    prompt="Add two integers.",
    reference="def add(a, b):\n    return a + b\n",
    suites={
        "visible": (
            "def test_small():\n    assert add(1, 2) == 3\n\n"
            "def test_negative():\n    assert add(-1, -1) == -2\n\n"
            "@pytest.mark.parametrize('a, b', [(0, 0), (5, 7)])\n"
            "def test_param(a, b):\n    assert add(a, b) == a + b\n"
        ),
        "hidden": "def test_big():\n    assert add(10**6, 1) == 10**6 + 1\n",
        "properties": (
            "@given(st.integers(), st.integers())\n"
            "def test_matches_reference(a, b):\n    assert add(a, b) == reference.add(a, b)\n"
        ),
    },
)
LIMITS = Limits(timeout_s=6.0, cpu_s=2.0, memory_mb=256, max_file_mb=4, max_output_kb=16, hypothesis_examples=30)


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(workers=2, limits=LIMITS) as pool:
        yield pool


def job(code: str, suites=("visible",), files: dict[str, str] | None = None) -> SandboxJob:
    all_files = {"candidate.py": code, "reference.py": TASK.reference, **(files or {})}
    for suite in suites:
        all_files[suite_file_name(suite)] = build_suite_module(TASK, suite)
    return SandboxJob(all_files, tuple((s, suite_file_name(s)) for s in suites))


def caught(result, suite="visible", outcome: Outcome | None = None):
    verdict = result.suites[suite]
    assert verdict.outcome is not Outcome.PASSED, verdict
    if outcome is not None:
        assert verdict.outcome is outcome, verdict
    return verdict


def text_of(verdict) -> str:
    return verdict.detail + "\n" + "\n".join(f"{t.name} {t.status} {t.message}" for t in verdict.tests)


def sandbox_uids(pool) -> set[int]:
    return {w.hello["uid"] for w in pool._all}


def processes_of(uids: set[int]) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                status = Path(f"/proc/{name}/status").read_text()
            except OSError:
                continue
            uid = int(re.search(r"^Uid:\s+(\d+)", status, re.M).group(1))
            if uid in uids:
                found.append(int(name))
    return found


GOOD = "def add(a, b):\n    return a + b\n"


# ------------------------------------------------------------------ ordinary candidates


def test_correct_candidate_passes_every_suite(pool):
    result = pool.run(job(GOOD, ("visible", "hidden", "properties")))
    assert {name: s.outcome for name, s in result.suites.items()} == dict.fromkeys(
        ("visible", "hidden", "properties"), Outcome.PASSED
    )
    names = [t.name for t in result.suites["visible"].tests]
    assert names == ["test_small", "test_negative", "test_param[0-0]", "test_param[5-7]"]


def test_assertion_failure_is_failed_with_names_and_messages(pool):
    verdict = caught(pool.run(job("def add(a, b):\n    return a - b\n")), outcome=Outcome.FAILED)
    by_name = {t.name: t for t in verdict.tests}
    assert by_name["test_small"].status == "failed"
    assert "assert -1 == 3" in by_name["test_small"].message
    assert by_name["test_param[0-0]"].status == "passed"


def test_exception_in_candidate_is_error(pool):
    verdict = caught(pool.run(job("def add(a, b):\n    return [][a]\n")), outcome=Outcome.ERROR)
    assert "IndexError" in verdict.tests[0].message


def test_missing_function_is_error(pool):
    verdict = caught(pool.run(job("def plus(a, b):\n    return a + b\n")), outcome=Outcome.ERROR)
    assert "does not define 'add'" in verdict.detail


def test_falsifying_example_is_reported(pool):
    code = "def add(a, b):\n    return a + b if b != 0 else a - 1\n"
    verdict = caught(pool.run(job(code, ("properties",))), "properties", Outcome.FAILED)
    assert "Falsifying example" in verdict.tests[0].message and "b=0" in verdict.tests[0].message


# ------------------------------------------------------------------ exits and fake evidence


@pytest.mark.parametrize(
    "code",
    [
        "import sys\nsys.exit(0)\ndef add(a, b):\n    return a + b\n",
        "import sys\ndef add(a, b):\n    sys.exit(0)\n",
        "import os\nos._exit(0)\ndef add(a, b):\n    return a + b\n",
        "import os\ndef add(a, b):\n    os._exit(0)\n",
        "import os, signal\ndef add(a, b):\n    os.kill(os.getpid(), signal.SIGKILL)\n",
    ],
    ids=["sys_exit_import", "sys_exit_call", "os_exit_import", "os_exit_call", "sigkill_self"],
)
def test_exiting_is_error(pool, code):
    verdict = caught(pool.run(job(code)), outcome=Outcome.ERROR)
    assert any(t.status in ("error", "missing") for t in verdict.tests)


def test_fake_summary_and_report_files_are_ignored(pool):
    code = (
        "import os, json\n"
        "print('=========== 5 passed in 0.01s ===========', flush=True)\n"
        "for name in ('report.xml', 'junit.xml', '.report.json', 'results.json'):\n"
        "    with open(name, 'w') as f:\n"
        '        f.write(\'<testsuite tests="5" failures="0" errors="0"/>\' if name.endswith(\'xml\')\n'
        "                else json.dumps({'summary': {'passed': 5, 'total': 5}, 'exitcode': 0}))\n"
        "os._exit(0)\n"
    )
    result = pool.run(job(code))
    caught(result, outcome=Outcome.ERROR)
    assert "5 passed" in result.output  # the output was captured, and not believed


@pytest.mark.parametrize(
    ("call", "status"),
    [("pytest.skip('no')", "skipped"), ("pytest.xfail('no')", "xfailed")],
)
def test_skip_and_xfail_from_candidate_are_errors(pool, call, status):
    verdict = caught(pool.run(job(f"import pytest\ndef add(a, b):\n    {call}\n")), outcome=Outcome.ERROR)
    assert {t.status for t in verdict.tests} == {status}


def test_module_level_skip_is_error(pool):
    code = "import pytest\npytest.skip('bye', allow_module_level=True)\n"
    caught(pool.run(job(code)), outcome=Outcome.ERROR)


def test_forged_channel_message_is_tampering(pool):
    code = (
        "import os, json\n"
        "for fd in range(3, 10):\n"
        "    try:\n"
        "        os.write(fd, (json.dumps({'k': 'done', 'exit': 0, 'tamper': []}) + '\\n').encode())\n"
        "    except OSError:\n"
        "        pass\n"
        "def add(a, b):\n    return 0\n"
    )
    verdict = caught(pool.run(job(code)), outcome=Outcome.ERROR)
    assert "tampering detected" in verdict.detail


# ------------------------------------------------------------------ tampering with pytest and the harness

_WRONG = "\ndef add(a, b):\n    return 0\n"


@pytest.mark.parametrize(
    "patch",
    [
        # replace the report factory so every phase "passes"
        "import _pytest.runner\n_orig = _pytest.runner.call_and_report\n"
        "def fake(item, when, log=True, **kw):\n"
        "    r = _orig(item, when, log=False, **kw)\n    r.outcome = 'passed'\n"
        "    item.ihook.pytest_runtest_logreport(report=r)\n    return r\n"
        "_pytest.runner.call_and_report = fake\n",
        # force TestReport outcomes to passed
        "import _pytest.reports\n_init = _pytest.reports.TestReport.__init__\n"
        "def init(self, *a, **k):\n    _init(self, *a, **k)\n    self.outcome = 'passed'\n"
        "_pytest.reports.TestReport.__init__ = init\n",
        # swap the code of CallInfo.from_call's function in place
        "import _pytest.runner\n"
        "def f(cls, func, when, reraise=None):\n    return None\n"
        "_pytest.runner.CallInfo.from_call.__func__.__code__ = f.__code__\n",
        # find the collector through gc and silence it
        "import gc\nfor o in gc.get_objects():\n"
        "    if hasattr(o, 'pytest_runtest_logreport') and hasattr(o, 'channel'):\n"
        "        o.pytest_runtest_logreport = lambda report: None\n",
        # register a plugin that rewrites every report to passed
        "import sys, pytest\n"
        "cfg = next(h.config for h in sys.meta_path if hasattr(h, 'config'))\n"
        "class P:\n"
        "    @pytest.hookimpl(wrapper=True)\n"
        "    def pytest_runtest_makereport(self, item, call):\n"
        "        r = yield\n        r.outcome = 'passed'\n        return r\n"
        "cfg.pluginmanager.register(P())\n",
        # replace builtins so that failing assertions raise something harmless
        "import builtins\nclass Quiet(Exception):\n    pass\nbuiltins.AssertionError = Quiet\n",
        # rebind helpers in the suite module from sys.modules
        "import sys\nmod = sys.modules['test_visible']\nmod.pytest = None\n",
        # defeat the plain-data guard by patching candidate_guard
        "import candidate_guard\ncandidate_guard.check_plain = lambda value: None\n",
        # a trace function that could rewrite frames later
        "import sys\nsys.settrace(lambda *a: None)\n",
        # fix the inputs a suite draws from random
        "import random\nrandom.randint = lambda a, b: 0\n",
        # make every failure look like a failed assertion (the facts the worker classifies)
        "import sys\nsys.modules['runner.sandbox.child.failure']._leaf_exceptions = lambda e: [AssertionError()]\n",
    ],
    ids=[
        "call_and_report",
        "testreport_init",
        "code_swap",
        "gc_collector",
        "plugin",
        "builtins",
        "suite_globals",
        "candidate_guard",
        "settrace",
        "random",
        "failure_facts",
    ],  # fmt: skip
)
def test_tampering_is_detected(pool, patch):
    verdict = caught(pool.run(job(patch + _WRONG)), outcome=Outcome.ERROR)
    assert "tampering detected" in verdict.detail, verdict


def test_candidate_returning_the_reference_is_caught(pool):
    code = "from reference import add\n"
    verdict = caught(pool.run(job(code)), outcome=Outcome.ERROR)
    assert "reference solution" in verdict.detail


REFERENCE_BORROWERS = {
    "local_import": "def add(a, b):\n    import reference\n    return reference.add(a, b)\n",
    "importlib": "import importlib\ndef add(a, b):\n    return importlib.import_module('refer' + 'ence').add(a, b)\n",
    "exec_file": "def add(a, b):\n    n = {}\n    exec(open('reference.py').read(), n)\n    return n['add'](a, b)\n",
}


@pytest.mark.parametrize("name", sorted(REFERENCE_BORROWERS))
def test_a_candidate_borrowing_the_reference_at_call_time_never_passes(pool, name):
    # the judge's own job: a task whose suites never name `reference` gets no reference.py to borrow from
    job_ = build_job(TASK, REFERENCE_BORROWERS[name], ("visible", "hidden"))
    assert "reference.py" not in job_.files
    result = pool.run(job_)
    for suite in ("visible", "hidden"):
        caught(result, suite)


DIFFERENTIAL = dataclasses.replace(
    TASK, suites={**TASK.suites, "properties": "def test_same():\n    assert add(3, 4) == reference.add(3, 4)\n"}
)
SWALLOWED = "import reference\ndef add(a, b):\n    try:\n        return reference.add(a, b)\n    except Exception:\n"
CALLERS = {**REFERENCE_BORROWERS, "from_import": "from reference import add\n",
           "swallowed_tripwire": SWALLOWED + "        return a + b\n"}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CALLERS))
def test_a_candidate_calling_the_reference_a_suite_compares_against_never_passes(pool, name):
    job_ = build_job(DIFFERENTIAL, CALLERS[name], ("visible", "hidden", "properties"))
    assert "reference.py" in job_.files  # the properties suite needs it: the tripwire and the audit hook guard it
    result = pool.run(job_)
    for suite in ("visible", "hidden", "properties"):
        caught(result, suite)


def test_the_reference_still_answers_its_suites_beside_an_honest_candidate(pool):
    result = pool.run(build_job(DIFFERENTIAL, "def add(a, b):\n    return b + a\n", ("visible", "properties")))
    assert all(result.suites[s].passed for s in ("visible", "properties")), result


def test_always_equal_object_is_rejected(pool):
    code = (
        "class Eq:\n    def __eq__(self, other):\n        return True\n"
        "    def __ne__(self, other):\n        return False\n"
        "def add(a, b):\n    return Eq()\n"
    )
    verdict = caught(pool.run(job(code)), outcome=Outcome.ERROR)
    assert "not plain built-in data" in verdict.tests[0].message


def test_always_equal_object_is_rejected_with_shipped_guard(pool):
    guard = (Path(__file__).resolve().parents[1] / "runner" / "suites" / "candidate_guard.py").read_text()
    code = "class Eq:\n    def __eq__(self, other):\n        return True\ndef add(a, b):\n    return Eq()\n"
    verdict = caught(pool.run(job(code, files={"candidate_guard.py": guard})), outcome=Outcome.ERROR)
    assert "not plain built-in data" in verdict.tests[0].message


def test_a_counter_with_a_patched_comparison_is_tampering(pool):
    # Counter is allowed as a return value; its __eq__ is Python code, which the integrity checks guard.
    code = (
        "import collections\n"
        "collections.Counter.__eq__ = lambda self, other: True\n"
        "def add(a, b):\n    return collections.Counter()\n"
    )
    verdict = caught(pool.run(job(code)), outcome=Outcome.ERROR)
    assert "tampering detected" in verdict.detail and "Counter" in verdict.detail


# ------------------------------------------------------------------ the file system


@needs_root
def test_test_files_cannot_be_changed_and_conftest_cannot_be_planted(pool):
    code = (
        "import os\nhere = os.path.dirname(os.path.abspath(__file__))\nerrors = []\n"
        "def attempt(fn):\n    try:\n        fn()\n"
        "    except OSError as err:\n        errors.append(type(err).__name__)\n"
        "attempt(lambda: open(os.path.join(here, 'test_hidden.py'), 'w').write('def test_big():\\n    pass\\n'))\n"
        "attempt(lambda: os.remove(os.path.join(here, 'test_hidden.py')))\n"
        "attempt(lambda: open(os.path.join(here, 'conftest.py'), 'w').write("
        "'import pytest\\n@pytest.hookimpl(wrapper=True)\\ndef pytest_runtest_makereport(item, call):\\n"
        '    r = yield\\n    r.outcome = "passed"\\n    return r\\n\'))\n'
        "def add(a, b):\n    return 0\n"
    )
    result = pool.run(job(code, ("visible", "hidden")))
    caught(result, "visible", Outcome.FAILED)
    hidden = caught(result, "hidden", Outcome.FAILED)
    assert hidden.tests[0].name == "test_big" and "assert 0 ==" in hidden.tests[0].message


@needs_root
def test_root_files_cannot_be_read(pool):
    code = "def add(a, b):\n    open('/root/.bashrc').read()\n    return a + b\n"
    verdict = caught(pool.run(job(code)), outcome=Outcome.ERROR)
    assert "PermissionError" in verdict.tests[0].message


@needs_root
def test_writing_outside_the_temp_dir_fails(pool, tmp_path):
    target_dir = tmp_path / "protected"
    target_dir.mkdir(mode=0o755)
    os.chmod(tmp_path, 0o755)
    target = target_dir / "owned.txt"
    code = f"def add(a, b):\n    open({str(target)!r}, 'w').write('x')\n    return a + b\n"
    verdict = caught(pool.run(job(code)), outcome=Outcome.ERROR)
    assert "PermissionError" in verdict.tests[0].message
    assert not target.exists()


@needs_root
def test_files_left_in_world_writable_directories_are_removed(pool):
    names = [f"/tmp/runner-leftover-{os.getpid()}", f"/dev/shm/runner-leftover-{os.getpid()}"]
    code = f"def add(a, b):\n    for name in {names!r}:\n        open(name, 'w').write('x')\n    return a + b\n"
    assert pool.run(job(code)).suites["visible"].passed  # allowed, like any scratch file...
    assert not any(os.path.exists(name) for name in names)  # ...and gone once the job is over


# ------------------------------------------------------------------ time


def test_infinite_sleep_loop_times_out(pool):
    start = time.monotonic()
    code = "import time\ndef add(a, b):\n    while True:\n        time.sleep(0.05)\n"
    verdict = caught(pool.run(job(code)), outcome=Outcome.TIMEOUT)
    assert verdict.tests[0].status == "timeout"
    assert time.monotonic() - start < LIMITS.timeout_s + 5


def test_cpu_burner_times_out(pool):
    code = "def add(a, b):\n    return sum(i * i for i in range(10**12))\n"
    verdict = caught(pool.run(job(code)), outcome=Outcome.TIMEOUT)
    assert "time limit" in verdict.detail


# ------------------------------------------------------------------ resources


def test_memory_bomb_is_resource_exceeded_and_worker_survives(pool):
    pids = [w.proc.pid for w in pool._all]
    code = "def add(a, b):\n    hog = []\n    while True:\n        hog.append(bytearray(50 * 2**20))\n"
    verdict = caught(pool.run(job(code)), outcome=Outcome.RESOURCE_EXCEEDED)
    assert "memory" in verdict.detail
    assert [w.proc.pid for w in pool._all] == pids and all(w.proc.poll() is None for w in pool._all)
    assert pool.run(job(GOOD)).suites["visible"].passed


@needs_root
def test_fork_bomb_is_caught_and_leaves_nothing(pool):
    code = "import os\ndef add(a, b):\n    while True:\n        os.fork()\n"
    verdict = caught(pool.run(job(code)))
    assert verdict.outcome in (Outcome.RESOURCE_EXCEEDED, Outcome.TIMEOUT), verdict
    assert processes_of(sandbox_uids(pool)) == []
    assert pool.run(job(GOOD)).suites["visible"].passed


def test_setsid_daemon_is_killed(pool):
    code = (
        "import os, sys, time\n"
        "def add(a, b):\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        "        if os.fork() == 0:\n"
        "            print('DAEMON', os.getpid(), flush=True)\n"
        "            time.sleep(300)\n"
        "        os._exit(0)\n"
        "    time.sleep(0.3)\n"
        "    return a + b\n"
    )
    result = pool.run(job(code))
    pids = [int(p) for p in re.findall(r"DAEMON (\d+)", result.output)]
    assert pids, result.output
    time.sleep(0.1)
    assert not [p for p in pids if Path(f"/proc/{p}").exists() and "State:\tZ" not in _status(p)]
    if ROOT:
        assert processes_of(sandbox_uids(pool)) == []


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "State:\tZ"


def test_huge_print_hits_the_output_cap(pool):
    code = "def add(a, b):\n    print('x' * 10**7)\n    return a + b\n"
    result = pool.run(job(code))
    verdict = caught(result, outcome=Outcome.RESOURCE_EXCEEDED)
    assert "output" in verdict.detail
    assert len(result.output) < LIMITS.max_output_kb * 1024 + 200


def test_huge_file_hits_the_file_size_limit(pool):
    code = (
        "def add(a, b):\n    with open('big.bin', 'wb') as f:\n        f.write(b'0' * (64 * 2**20))\n    return a + b\n"
    )
    verdict = caught(pool.run(job(code)), outcome=Outcome.RESOURCE_EXCEEDED)
    assert "file size" in verdict.detail


def test_many_open_files_hit_the_limit(pool):
    code = "def add(a, b):\n    keep = [open(f'f{i}', 'w') for i in range(5000)]\n    return a + b\n"
    verdict = caught(pool.run(job(code)), outcome=Outcome.RESOURCE_EXCEEDED)
    assert "open files" in verdict.detail


# ------------------------------------------------------------------ network


@pytest.fixture
def listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    accepted: list[object] = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    server.close()


_CONNECT = (
    "import socket\n"
    "def add(a, b):\n"
    "    names = [n for _, n in socket.if_nameindex()]\n"
    "    try:\n"
    "        socket.create_connection(({host!r}, {port}), timeout=2).close()\n"
    "    except OSError as err:\n"
    "        raise RuntimeError(f'interfaces={{names}} error={{err}}')\n"
    "    return a + b\n"
)


@needs_root
def test_loopback_is_unreachable(pool, listener):
    port, accepted = listener
    verdict = caught(pool.run(job(_CONNECT.format(host="127.0.0.1", port=port))), outcome=Outcome.ERROR)
    assert "Network is unreachable" in verdict.tests[0].message
    assert accepted == []


@needs_root
def test_outside_network_is_unreachable(pool):
    verdict = caught(pool.run(job(_CONNECT.format(host="1.1.1.1", port=80))), outcome=Outcome.ERROR)
    message = verdict.tests[0].message
    assert "interfaces=['lo']" in message and "Network is unreachable" in message


# ------------------------------------------------------------------ one session for all suites: cross-suite attacks

ALL = ("visible", "hidden", "properties")
_WRONG_BIG = "    return a + b if abs(a) < 1000 and abs(b) < 1000 else 0\n"
"""Right on the visible inputs, wrong on the hidden test and on most property examples."""
_ONCE = "_done = []\ndef add(a, b):\n    if not _done:\n        _done.append(1)\n"


def test_wrong_candidate_fails_hidden_and_properties_in_one_session(pool):
    result = pool.run(job("def add(a, b):\n" + _WRONG_BIG, ALL))
    assert result.suites["visible"].passed
    assert "assert 0 ==" in caught(result, "hidden", Outcome.FAILED).tests[0].message
    caught(result, "properties", Outcome.FAILED)


@pytest.mark.parametrize(
    "attack",
    [
        # (a) rebind the entry point in the later suites' module globals to the reference
        "        import sys\n"
        "        for name in ('test_hidden', 'test_properties'):\n"
        "            sys.modules[name].add = sys.modules['reference'].add\n",
        # (b) replace the reference module, or patch its function to one equal to the candidate
        "        import sys, types\n"
        "        fake = types.ModuleType('reference')\n        fake.add = lambda a, b: add(a, b)\n"
        "        sys.modules['reference'] = fake\n",
        "        import sys\n        sys.modules['reference'].add = lambda a, b: add(a, b)\n",
        # the guard's record of the candidate's functions
        "        import sys\n        sys.modules['candidate_guard']._LOADED['add'] = sys.modules['reference'].add\n",
        # (d) swap a hidden test function's code (refused by the audit hook; the refusal is swallowed)
        "        import sys\n        def passes():\n            pass\n"
        "        try:\n            sys.modules['test_hidden'].test_big.__code__ = passes.__code__\n"
        "        except RuntimeError:\n            pass\n",
        # (d) replace the function a collected hidden item calls, found by walking the stack
        "        import sys\n        frame = sys._getframe(1)\n"
        "        while frame is not None and 'item' not in frame.f_locals:\n            frame = frame.f_back\n"
        "        for item in frame.f_locals['item'].session.items:\n"
        "            if 'test_hidden' in item.nodeid or 'test_properties' in item.nodeid:\n"
        "                item._obj = lambda *a, **k: None\n",
        # hypothesis: a profile that generates no examples for the property suite
        "        from hypothesis import Phase, settings\n"
        "        settings.register_profile('nothing', phases=[Phase.explicit])\n"
        "        settings.load_profile('nothing')\n",
        # hypothesis: its engine runs no example (hypothesis is loaded by the worker when a job needs it,
        # after the pool started: the guarded snapshot must include it)
        "        import hypothesis.core\n"
        "        hypothesis.core.StateForActualGivenExecution.execute_once = lambda self, *a, **k: None\n",
    ],
    ids=[
        "rebind_hidden_globals",
        "replace_reference_module",
        "patch_reference_function",
        "guard_state",
        "hidden_test_code",
        "hidden_item_obj",
        "hypothesis_profile",
        "hypothesis_engine",
    ],  # fmt: skip
)
def test_cross_suite_tampering_from_the_visible_suite_is_caught(pool, attack):
    result = pool.run(job(_ONCE + attack + _WRONG_BIG, ALL))
    for suite in ("hidden", "properties"):
        verdict = caught(result, suite, Outcome.ERROR)
        assert "tampering detected" in verdict.detail, verdict
    visible = text_of(result.suites["visible"])
    assert "test_hidden" not in visible and "test_big" not in visible  # hidden names stay out of visible feedback


def test_import_hooks_and_patched_ast_after_collection_do_not_matter(pool):
    # (c) everything is collected (imported, assertion-rewritten) before the candidate's first call:
    # a meta_path finder serving fake suite modules and a neutered `ast` come too late to matter.
    attack = (
        "        import ast, importlib.util, sys\n"
        "        class Loader:\n"
        "            def create_module(self, spec):\n                return None\n"
        "            def exec_module(self, module):\n"
        "                exec('def test_big():\\n    pass\\n', vars(module))\n"
        "        class Finder:\n"
        "            def find_spec(self, name, path=None, target=None):\n"
        "                if name.startswith('test_'):\n"
        "                    return importlib.util.spec_from_loader(name, Loader())\n"
        "                return None\n"
        "        sys.meta_path.insert(0, Finder())\n"
        "        module = ast.Module\n"
        "        ast.parse = lambda *a, **k: module(body=[], type_ignores=[])\n"
    )
    result = pool.run(job(_ONCE + attack + _WRONG_BIG, ALL))
    assert result.suites["visible"].passed
    assert "assert 0 ==" in caught(result, "hidden", Outcome.FAILED).tests[0].message
    caught(result, "properties", Outcome.FAILED)


def test_patching_the_assertion_rewriter_at_first_call_is_caught(pool):
    attack = (
        "        import _pytest.assertion.rewrite as rewrite\n"
        "        rewrite.rewrite_asserts = lambda *a, **k: None\n"
        "        rewrite.AssertionRewritingHook.exec_module = lambda self, module: None\n"
    )
    result = pool.run(job(_ONCE + attack + _WRONG_BIG, ALL))
    for suite in ALL:
        assert "tampering detected" in caught(result, suite, Outcome.ERROR).detail


@pytest.mark.parametrize(
    "code",
    [
        "raise RuntimeError('broken at import')\n",
        "import sys\nsys.exit(0)\n",
        # fails on the first import only: the failure is sticky, the import is never retried
        "import builtins\nif not hasattr(builtins, '_tried'):\n    builtins._tried = 1\n"
        "    raise RuntimeError('first import fails')\n",
    ],
    ids=["exception", "sys_exit", "first_time_only"],
)
def test_a_candidate_that_fails_to_import_is_error_in_every_suite(pool, code):
    result = pool.run(job(code + GOOD, ALL))
    for suite in ALL:
        verdict = caught(result, suite, Outcome.ERROR)
        assert "could not be loaded" in verdict.detail, verdict
        assert "passed" not in {t.status for t in verdict.tests}


def test_a_loop_in_the_hidden_suite_times_out_that_suite_only(pool):
    start = time.monotonic()
    code = "import time\ndef add(a, b):\n    while a > 1000:\n        time.sleep(0.05)\n    return a + b\n"
    result = pool.run(job(code, ALL))
    assert result.suites["visible"].passed
    assert caught(result, "hidden", Outcome.TIMEOUT).tests[0].status == "timeout"
    properties = caught(result, "properties", Outcome.ERROR)
    assert "not run" in properties.detail and {t.status for t in properties.tests} == {"missing"}
    assert time.monotonic() - start < LIMITS.timeout_s + 5  # the suite's own limit, not the session's


def test_a_cpu_burner_in_a_later_suite_gets_that_suite_s_cpu_limit():
    # A wall limit far above the CPU limit, so that on a loaded machine, where 2 s of CPU can take
    # many seconds of wall clock, the CPU limit still comes first.
    limits = dataclasses.replace(LIMITS, timeout_s=40.0)
    code = "def add(a, b):\n    while a > 1000:\n        a += 1\n    return a + b\n"
    with WorkerPool(workers=1, limits=limits) as pool:
        start = time.monotonic()
        result = pool.run(job(code, ALL))
    assert result.suites["visible"].passed
    verdict = caught(result, "hidden", Outcome.TIMEOUT)
    assert f"{LIMITS.cpu_s:g} s CPU" in verdict.detail, verdict
    assert time.monotonic() - start < limits.timeout_s  # killed by the CPU limit, before the wall clock


def test_a_loop_in_the_visible_suite_is_timeout_and_later_suites_do_not_run(pool):
    code = "def add(a, b):\n    while True:\n        pass\n"
    result = pool.run(job(code, ALL))
    caught(result, "visible", Outcome.TIMEOUT)
    for suite in ("hidden", "properties"):
        assert "not run: an earlier suite was killed" in caught(result, suite, Outcome.ERROR).detail


@needs_root
def test_processes_started_in_one_suite_do_not_outlive_it(pool):
    code = (
        "import os, time\n"
        "_started = []\n"
        "def add(a, b):\n"
        "    if not _started:\n"
        "        _started.append(1)\n"
        "        if os.fork() == 0:\n"
        "            os.setsid()\n"
        "            while True:\n"
        "                time.sleep(0.01)\n"
        "        time.sleep(0.2)\n"
        "        print('STRAY', flush=True)\n"
        "    if a > 1000:\n"
        "        for _ in range(100):  # the worker kills it as soon as it sees the hidden suite start\n"
        "            alive = [p for p in os.listdir('/proc') if p.isdigit() and p != str(os.getpid())\n"
        "                     and 'State:\\tZ' not in _status(p) and f'Uid:\\t{os.getuid()}' in _status(p)]\n"
        "            if not alive:\n"
        "                break\n"
        "            time.sleep(0.02)\n"
        "        assert alive == [], alive\n"
        "    return a + b\n"
        "def _status(p):\n"
        "    try:\n"
        "        return open(f'/proc/{p}/status').read()\n"
        "    except OSError:\n"
        "        return 'State:\\tZ'\n"
    )
    result = pool.run(job(code, ("visible", "hidden")))
    assert "STRAY" in result.output
    assert result.suites["visible"].passed and result.suites["hidden"].passed, result.suites
