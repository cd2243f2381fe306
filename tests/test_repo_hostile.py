"""Hostile answers to a repo task, judged with the real sandbox: none may make a pass.

The candidate's code runs inside the pytest process of the task's environment (it is the repo), so each
attack below is code at the top of `textkit/slug.py` with `slugify` left wrong: only forging a verdict
could make it pass. A control answer with the right fix passes, so these tests can fail.
"""

import os
import socket
import threading
import time

import pytest

from runner.outcome import Outcome
from runner.repo.run_answer import judge_repo
from runner.sandbox.confine.isolation import BASE_UID
from runner.sandbox.workers.pool import Limits, WorkerPool
from tests.repo_fixtures import environments, fixture_tasks, slug_patch

WRONG = '    return "-".join(text.lower().split(" "))'


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(1, Limits(timeout_s=30, cpu_s=30)) as running:
        yield running


@pytest.fixture(scope="module")
def judged(pool):
    task = fixture_tasks()["slug_spaces"]
    envs = environments()
    return lambda answer: judge_repo(task, answer, pool, envs, "diff", 30.0)


def test_the_right_fix_passes(judged):
    verdict = judged(slug_patch(""))
    assert verdict.outcome is Outcome.PASSED, verdict.detail
    assert verdict.isolation.get("network_namespace") and verdict.isolation.get("unprivileged_uid")


ATTACKS = {
    "os_exit_at_import": ("import os\nos._exit(0)", Outcome.ERROR),
    "sys_exit_at_import": ("import sys\nsys.exit(0)", Outcome.ERROR),
    "forged_output": ("import sys\nprint('3 passed in 0.01s')\nsys.__stderr__.write('== 3 passed ==')", Outcome.FAILED),
    "forged_junit": ("import os\nopen(os.environ['HOME'] + '/junit.xml', 'w').write('<testsuite failures=\"0\"/>')",
                     Outcome.FAILED),
    "garbage_on_the_channel": ("import os\nos.write(4, b'0123 {\"k\": \"report\", \"id\": \"x\"}\\n')", Outcome.ERROR),
    "patched_report": ("import _pytest.reports as r\n_f = r.TestReport.from_item_and_call.__func__\n"
                       "def _g(cls, item, call):\n    rep = _f(cls, item, call)\n    rep.outcome = 'passed'\n"
                       "    return rep\nr.TestReport.from_item_and_call = classmethod(_g)", Outcome.ERROR),
    "swallowed_exceptions": ("import _pytest.runner as rr\n_f = rr.CallInfo.from_call.__func__\n"
                             "def _g(cls, func, when, reraise=None):\n    info = _f(cls, func, when, reraise)\n"
                             "    object.__setattr__(info, 'excinfo', None)\n    return info\n"
                             "rr.CallInfo.from_call = classmethod(_g)", Outcome.ERROR),
    "nonce_hunt_with_gc": ("import gc\ngc.get_objects()", Outcome.ERROR),
    "forked_forger": ("import os, json\nif os.fork() == 0:\n    os.write(4, b'x ' + json.dumps({'k': 'done'}).encode()"
                      " + b'\\n')\n    os._exit(0)", Outcome.ERROR),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_an_attack_never_makes_a_pass(judged, name):
    body, expected = ATTACKS[name]
    verdict = judged(slug_patch(body, WRONG))
    assert verdict.outcome is expected, (verdict.outcome, verdict.detail)


def test_a_forked_sleeper_is_killed_and_the_run_ends(pool, judged):
    started = time.monotonic()
    verdict = judged(slug_patch("import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(120)", WRONG))
    assert verdict.outcome is Outcome.FAILED and time.monotonic() - started < 25
    uid = pool._all[0].hello["uid"]  # this pool's sandbox uid (other pools on the machine have their own)
    assert uid >= BASE_UID
    left = [p for p in os.listdir("/proc") if p.isdigit() and _uid(p) == uid]
    assert not left, f"sandbox processes left: {left}"


def _uid(pid: str) -> int:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return -1


def test_a_socket_to_loopback_never_connects(judged):
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    accepted = []

    def accept():
        try:
            accepted.append(server.accept())
        except OSError:  # closed at the end of the test
            pass

    threading.Thread(target=accept, daemon=True).start()
    body = (f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n    OK = True\n"
            "except OSError:\n    OK = False")  # fmt: skip
    verdict = judged(slug_patch(body, '    return "-".join(text.lower().split()) if OK else ""'))
    server.close()
    assert verdict.outcome is Outcome.FAILED and not accepted


def test_changing_the_tests_or_adding_a_conftest_is_refused_before_anything_runs(judged):
    conftest = "diff --git a/conftest.py b/conftest.py\nnew file mode 100644\n--- /dev/null\n+++ b/conftest.py\n"
    verdict = judged(conftest + "@@ -0,0 +1 @@\n+import pytest\n")
    assert verdict.outcome is Outcome.PATCH_FORBIDDEN and not verdict.suites
