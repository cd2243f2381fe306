"""EvalPlus-style plus inputs: expected outputs and time limits computed once from the reference, then
checked in the sandbox from a data file the candidate cannot change without being caught."""

import dataclasses
import pickle
import re

import pytest

from runner.config import GateConfig
from runner.judging.judge import judge
from runner.judging.suite_module import names_reference
from runner.outcome import STARVED_RERUNS, Outcome
from runner.suites.candidate_guard import digest_atom, digest_pickle
from runner.tasks import plus_oracle
from runner.tasks.model import Task
from runner.tasks.plus_oracle import MIN_TIME_LIMIT_S, OracleRequest, compute, oracles
from runner.tasks.plus_suites import differential_suite, with_plus_data
from tests.conftest import datasets_available
from tests.cpu_load import every_core_busy
from tests.test_judge import CountingPool

REFERENCE = "def double(x):\n    return 2 * x\n"
GOOD = "def double(x):\n    return x + x\n"
INPUTS = [[1], [2], [3], [-7]]
GATE = GateConfig(name="off", enabled=False)


def test_compute_stores_expected_outputs_and_floored_limits():
    table, seconds = compute(OracleRequest(REFERENCE, "double", INPUTS))
    assert rows(table) == [([1], (True, 2), MIN_TIME_LIMIT_S), ([2], (True, 4), MIN_TIME_LIMIT_S),
                           ([3], (True, 6), MIN_TIME_LIMIT_S), ([-7], (True, -14), MIN_TIME_LIMIT_S)]  # fmt: skip
    assert 0 <= seconds < 1


def rows(table: bytes) -> list[tuple]:
    """The table's rows unpickled; a digest (str) or b"" (computed in the suite) as it is."""
    return [(pickle.loads(a), pickle.loads(e) if type(e) is bytes and e else e, t) for a, e, t in pickle.loads(table)]


def test_compute_converts_inputs_records_errors_and_keeps_a_huge_containers_pickle_digest():
    reference = "def f(xs, n):\n    if n < 0:\n        raise ValueError('negative')\n    return [xs] * n\n"
    request = OracleRequest(reference, "f", [[[1, 2], 1], [[1], -1], [[0], 10**6]], "[tuple(args[0]), *args[1:]]")
    table = compute(request)[0]
    first, second, third = rows(table)
    assert first[:2] == ([(1, 2), 1], (True, [(1, 2)]))
    assert second[1] == (False, "ValueError: negative")
    assert third[1] == (digest_pickle([(0,)] * 10**6),)  # over MAX_STORED_BYTES, and a list
    assert plus_oracle.computed_rows(table) == 1  # the suite computes it for an output that does not match


def test_a_huge_text_or_number_is_stored_as_its_digest():
    for reference, n in (("def f(n):\n    return 'ab' * n\n", 10**6), ("def f(n):\n    return 1 << n\n", 3 * 10**6)):
        table = compute(OracleRequest(reference, "f", [[n]]))[0]
        namespace: dict = {}
        exec(reference, namespace)
        assert rows(table)[0][1] == digest_atom(namespace["f"](n)) and plus_oracle.computed_rows(table) == 0


def test_a_huge_output_compared_loosely_keeps_its_pickle_digest_and_one_with_a_nan_nothing():
    text = "def f(n):\n    return 'ab' * n\n"
    for request in (OracleRequest(text, "f", [[10**6]], atol=1e-3), OracleRequest(text, "f", [[10**6]], compare="set")):
        table = compute(request)[0]
        assert rows(table)[0][1] == (digest_pickle("ab" * 10**6),) and plus_oracle.computed_rows(table) == 1
    nan = "def f(n):\n    return [float('nan')] + [1.5] * n\n"  # NaN != NaN: equal pickles are not equal values
    table = compute(OracleRequest(nan, "f", [[10**6]]))[0]
    assert rows(table)[0][1] == b"" and plus_oracle.computed_rows(table) == 1


def test_digest_pickle_tells_values_apart_whichever_objects_they_share():
    shared = "x" * 10
    assert digest_pickle([shared, shared]) == digest_pickle(["x" * 10, "x" * 10])  # no memo
    assert digest_pickle([1, 2]) != digest_pickle([1.0, 2]) != digest_pickle((1.0, 2))
    cyclic: list = []
    cyclic.append(cyclic)
    assert digest_pickle(cyclic) is None and digest_pickle(re.match("a", "a")) is None


def test_digest_atom_is_by_value():
    assert digest_atom(1 << 70) == digest_atom(float(1 << 70)) == digest_atom(complex(1 << 70, 0))
    assert digest_atom(1) == digest_atom(True) and digest_atom("1") != digest_atom(1) != digest_atom(b"1")
    assert digest_atom("ab") != digest_atom("ba")
    for nothing in (0.5, float("nan"), float("inf"), 1j, ["ab"], ("ab",), None):
        assert digest_atom(nothing) is None


def test_slow_reference_scales_the_limit():
    reference = "import time\ndef f(x):\n    time.sleep(x)\n    return x\n"
    (_, _, limit), = pickle.loads(compute(OracleRequest(reference, "f", [[0.3]]))[0])  # fmt: skip
    assert limit >= plus_oracle.TIME_LIMIT_FACTOR * 0.3


def test_tables_are_cached_by_content(tmp_path, monkeypatch):
    request = OracleRequest(REFERENCE, "double", INPUTS)
    first = oracles([request], tmp_path)
    assert list((tmp_path / "plus_oracle").rglob("*.json"))

    def no_processes(*args, **kwargs):
        raise AssertionError("a cached table was computed again")

    monkeypatch.setattr(plus_oracle.subprocess, "Popen", no_processes)
    assert oracles([request], tmp_path) == first
    changed = OracleRequest(REFERENCE.replace("2 * x", "x * 2"), "double", INPUTS)
    with pytest.raises(AssertionError, match="computed again"):
        oracles([changed], tmp_path)


def plus_task(tmp_path, reference=REFERENCE, inputs=INPUTS, entry_point="double") -> Task:
    task = Task("plus", entry_point, "", reference, {"properties": differential_suite(entry_point, 0.0)})
    (task,) = with_plus_data([task], {"plus": {"properties": OracleRequest(reference, entry_point, inputs)}}, tmp_path)
    return task


@pytest.fixture(scope="module")
def pool():
    sandbox = pytest.importorskip("runner.sandbox.workers.pool")
    limits = sandbox.Limits(timeout_s=5.0, cpu_s=5.0, memory_mb=256)
    with sandbox.WorkerPool(workers=2, limits=limits) as running:
        yield running


def test_right_and_wrong_candidates(pool, tmp_path):
    task = plus_task(tmp_path)
    assert judge(task, GOOD, pool, GATE).outcome is Outcome.PASSED
    wrong = judge(task, "def double(x):\n    return 2 * x if x != 3 else 7\n", pool, GATE)
    assert wrong.outcome is Outcome.FAILED and "plus input #2 [3]: got 7, expected 6" in wrong.detail
    assert judge(task, "def double(x):\n    return str(2 * x)\n", pool, GATE).outcome is Outcome.FAILED


def test_a_huge_expected_output_is_compared_by_its_digest_and_the_job_carries_no_reference(pool, tmp_path):
    reference = "def many(n):\n    return 'ab' * n\n"
    task = plus_task(tmp_path, reference, [[3], [200_000]], "many")
    assert type(pickle.loads(task.files[plus_oracle.DATA_FILE])[1][1]) is str
    assert not names_reference(task.suites["properties"])
    assert judge(task, "def many(n):\n    return ''.join('ab' for _ in range(n))\n", pool, GATE).passed
    for wrong in ("('ab' * n)[:-1]", "('ab' * n).upper()", "list('ab' * n)", "('ab' * n).encode()"):
        wrong = f"{wrong} if n > 10 else 'ab' * n"  # wrong on the huge input only
        verdict = judge(task, f"def many(n):\n    return {wrong}\n", pool, GATE)
        assert verdict.outcome is Outcome.FAILED and ": by digest, got" in verdict.detail, (wrong, verdict.detail)


def test_a_huge_int_is_compared_by_its_digest(pool, tmp_path):
    task = plus_task(tmp_path, "def big(n):\n    return 1 << n\n", [[3], [3_000_000]], "big")
    assert type(pickle.loads(task.files[plus_oracle.DATA_FILE])[1][1]) is str
    assert judge(task, "def big(n):\n    return 2 ** n\n", pool, GATE).passed
    assert judge(task, "def big(n):\n    return (1 << n) + (n > 10)\n", pool, GATE).outcome is Outcome.FAILED


def test_a_huge_expected_output_is_matched_by_its_pickle_or_computed_by_the_reference_in_the_sandbox(pool, tmp_path):
    reference = "def many(n):\n    return [i / 4 for i in range(n)]\n"
    task = plus_task(tmp_path, reference, [[3], [200_000]], "many")
    assert type(pickle.loads(task.files[plus_oracle.DATA_FILE])[1][1]) is tuple
    assert names_reference(task.suites["properties"])
    assert judge(task, "def many(n):\n    return [i / 4 + 1e-9 for i in range(n)]\n", pool, GATE).passed
    wrong = "def many(n):\n    return [i / 4 for i in range(n - (n > 10))]\n"
    assert judge(task, wrong, pool, GATE).outcome is Outcome.FAILED
    # With a reference that fails on the huge input, only an output matching the digest can still pass.
    failing = dataclasses.replace(task, reference=reference.replace("return", "assert n < 10\n    return"))
    assert judge(failing, "def many(n):\n    return [i * 0.25 for i in range(n)]\n", pool, GATE).passed
    assert not judge(failing, "def many(n):\n    return [i / 4 + 1e-9 for i in range(n)]\n", pool, GATE).passed


def test_over_an_inputs_limit_is_a_timeout_judged_once(pool, tmp_path):
    task = plus_task(tmp_path)
    counting = CountingPool(pool)
    slow = "import time\ndef double(x):\n    if x == 3:\n        time.sleep(1.5)\n    return 2 * x\n"
    verdict = judge(task, slow, counting, GATE)
    assert verdict.outcome is Outcome.TIMEOUT and "plus input #2" in verdict.detail, verdict.detail
    assert counting.runs == 1  # it slept: it did not wait for a CPU, so another run would change nothing
    assert "waited for a CPU" not in verdict.detail
    counting.runs = 0
    assert judge(task, GOOD, counting, GATE).passed and counting.runs == 1


def test_an_input_over_its_limit_while_waiting_for_a_cpu_is_run_again(pool, tmp_path):
    task = plus_task(tmp_path)
    counting = CountingPool(pool)
    busy = "def double(x):\n    if x == 3:\n        sum(range(12_000_000))\n    return 2 * x\n"  # ~0.3 s of CPU
    with every_core_busy():
        verdict = judge(task, busy, counting, GATE)
    assert verdict.outcome is Outcome.TIMEOUT and "waited for a CPU" in verdict.detail, verdict.detail
    assert counting.runs == 1 + STARVED_RERUNS  # starved every time: run until the re-runs are used up


def test_a_slow_reference_raises_the_suite_time_limit(pool, tmp_path):
    reference = "import time\ndef f(x):\n    time.sleep(x)\n    return x\n"
    task = plus_task(tmp_path, reference, [[2.0], [2.0], [2.0]], "f")  # 6 s: over the pool's 5 s per suite
    assert task.time_limit_s >= plus_oracle.TIME_LIMIT_FACTOR * 6.0
    assert judge(task, reference, pool, GATE).passed


FORGE_TABLE = (
    "import pickle, sys\n"
    "def double(x):\n"
    "    module = sys.modules['test_properties']\n"
    "    module._ROWS = tuple((a, pickle.dumps((True, 0)), 9.0) for a, _, _ in module._ROWS)\n"
    "    return 0\n"
)
PATCH_LOADS = "import pickle\ndef double(x):\n    pickle.loads = lambda data: (True, 0)\n    return 0\n"
REWRITE_FILE = (
    "import os, pickle, sys\n"
    "def double(x):\n"
    "    path = os.path.join(os.path.dirname(sys.modules['test_properties'].__file__), 'plus_inputs.pkl')\n"
    "    try:\n"
    "        os.chmod(path, 0o644)\n"
    "        with open(path, 'wb') as handle:\n"
    "            handle.write(pickle.dumps(()))\n"
    "    except OSError:\n"
    "        pass\n"
    "    return 0\n"
)


@pytest.mark.parametrize(
    ("code", "outcome"),
    [(FORGE_TABLE, Outcome.ERROR), (PATCH_LOADS, Outcome.FAILED), (REWRITE_FILE, Outcome.FAILED)],
    ids=["rebind_the_table", "patch_pickle_loads", "rewrite_the_data_file"],
)
def test_the_expected_outputs_cannot_be_forged(pool, tmp_path, code, outcome):
    verdict = judge(plus_task(tmp_path), code, pool, GATE)
    assert verdict.outcome is outcome and not verdict.passed, verdict.detail
    if outcome is Outcome.ERROR:
        assert "tampering detected" in verdict.detail


@pytest.mark.skipif(not datasets_available(), reason="benchmark files absent (RUNNER_DATASETS_DIR)")
def test_expected_outputs_are_computed_only_for_the_selected_tasks(tmp_path):
    from runner.config import TaskSetConfig
    from runner.tasks import load_task_set

    cfg = TaskSetConfig(name="humanevalplus", importer="humanevalplus", path="", ids=["HumanEval/2", "HumanEval/4"])
    tasks = load_task_set(cfg, cache_dir=tmp_path)
    assert [t.id for t in tasks] == ["HumanEval/2", "HumanEval/4"] and all(t.files for t in tasks)
    assert len(list((tmp_path / "plus_oracle").rglob("*.json"))) == 2
