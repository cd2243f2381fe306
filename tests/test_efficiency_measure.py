"""The efficiency measure: perf inputs in task files, instruction counts in the sandbox, the budget, hostile answers.

Real runs throughout: a real worker pool, valgrind's cachegrind on /usr/bin/python3.X as the sandbox uid, the
seed10 tasks' own perf inputs. Slow/fast pairs are correct answers written here (each passes the task's suites).
"""

from __future__ import annotations

import dataclasses
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import pytest
import yaml

from runner.caches.content import Cache
from runner.config import EfficiencyConfig
from runner.efficiency.cost import ERROR, MEASURED, NO_PERF_INPUTS, TOO_SLOW, Efficiency
from runner.efficiency.measure import measure_efficiency
from runner.efficiency.perf_inputs import declared_arguments, selected_arguments
from runner.sandbox.workers.pool import Limits, WorkerPool
from runner.tasks.loader import TaskError, load_task_dir, load_task_file
from runner.tasks.model import Task
from runner.tasks.plus_oracle import DATA_FILE, OracleRequest, compute
from runner.tasks.schema import task_schema

ROOT = Path(__file__).resolve().parents[1]
SEED = {task.id: task for task in load_task_dir(ROOT / "tasks" / "seed10")}
needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
CFG = EfficiencyConfig(enabled=True)

FAST = {
    "two_sum": """
def two_sum(nums, target):
    seen = {}
    for j, value in enumerate(nums):
        if target - value in seen:
            return [seen[target - value], j]
        seen.setdefault(value, j)
    return []
""",
    "merge_intervals": """
def merge_intervals(intervals):
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged
""",
    "is_palindrome": """
def is_palindrome(s):
    cleaned = "".join(ch.lower() for ch in s if ch.isalnum())
    return cleaned == cleaned[::-1]
""",
    "top_k_frequent": """
from collections import Counter


def top_k_frequent(nums, k):
    counts = Counter(nums)
    return sorted(counts, key=lambda value: (-counts[value], value))[:max(k, 0)]
""",
}
SLOW = {
    "two_sum": """
def two_sum(nums, target):
    for j in range(len(nums)):
        if target - nums[j] in nums[:j]:
            return [nums.index(target - nums[j]), j]
    return []
""",
    "merge_intervals": """
def merge_intervals(intervals):
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged = merged[:-1] + [[merged[-1][0], max(merged[-1][1], end)]]
        else:
            merged = merged + [[start, end]]
    return merged
""",
    "is_palindrome": """
def is_palindrome(s):
    cleaned, backwards = "", ""
    for ch in s:
        if ch.isalnum():
            cleaned = cleaned + ch.lower()
            backwards = ch.lower() + backwards
    return cleaned == backwards
""",
    "top_k_frequent": """
def top_k_frequent(nums, k):
    pairs = []
    for value in nums:
        for pair in pairs:
            if pair[0] == value:
                pair[1] += 1
                break
        else:
            pairs.append([value, 1])
    pairs.sort(key=lambda pair: (-pair[1], pair[0]))
    return [pair[0] for pair in pairs[:max(k, 0)]]
""",
}
NESTED_TWO_SUM = """
def two_sum(nums, target):
    for j in range(len(nums)):
        for i in range(j):
            if nums[i] + nums[j] == target:
                return [i, j]
    return []
"""
_WITH_FAST = FAST["two_sum"].replace("def two_sum(nums, target):\n", "def _honest(nums, target):\n")
HOSTILE = {
    "prints a fake summary through every /proc/self/fd path": """
import os


def two_sum(nums, target):
    fake = f"=={os.getpid()}== I   refs:      1,000\\n".encode()
    for name in os.listdir("/proc/self/fd"):
        try:
            os.write(os.open(f"/proc/self/fd/{name}", os.O_WRONLY), fake)
        except OSError:
            pass
    return _honest(nums, target)
""",
    "execs a fresh Python that prints a fake summary and report": """
import os
import sys

FAKE = (
    "import os, sys\\n"
    "for name in os.listdir('/proc/self/fd'):\\n"
    "    try:\\n"
    "        os.write(os.open('/proc/self/fd/' + name, os.O_WRONLY), b'==%d== I   refs:  1,000\\\\n' % os.getpid())\\n"
    "    except OSError:\\n"
    "        pass\\n"
    "os.write(1, ('\\\\n@@cost ' + sys.argv[1] + ' 0 0.0 -\\\\n').encode())\\n"
)


def two_sum(nums, target):
    os.execv(sys.executable, [sys.executable, "-c", FAKE, sys.argv[1]])
""",
    "closes every fd": """
import os


def two_sum(nums, target):
    os.closerange(0, 65536)
    return _honest(nums, target)
""",
    "forks a child to do the work": """
import os


def two_sum(nums, target):
    if os.fork() == 0:
        _honest(nums, target)
        os._exit(0)
    return [0, 1]
""",
    "kills its parent, then exits early": """
import os
import signal


def two_sum(nums, target):
    try:
        os.kill(os.getppid(), signal.SIGKILL)
    except OSError:
        pass
    os._exit(0)
""",
    "writes a fake report, then exits early": """
import os
import sys


def two_sum(nums, target):
    os.write(1, f"\\n@@cost {sys.argv[1]} 0 0.0 {'0' * 64},{'0' * 64}\\n".encode())
    os._exit(0)
""",
}


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(workers=2, limits=Limits(timeout_s=30.0, cpu_s=30.0)) as pool:
        yield pool


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return Cache(tmp_path_factory.mktemp("efficiency-cache"))


def _measure(task_id: str, code: str, pool, cache, cfg: EfficiencyConfig = CFG) -> Efficiency:
    return measure_efficiency(SEED[task_id], code, pool, cfg, cache)


# ------------------------------------------------------------------ perf inputs in task files


def _task_file(tmp_path: Path, perf_inputs) -> Path:
    data = yaml.safe_load((ROOT / "tests/fixtures/tasks/good.yaml").read_text())
    data["perf_inputs"] = perf_inputs
    path = tmp_path / "add.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_every_seed_task_declares_perf_inputs_its_generators_make_the_same_each_time():
    for task in SEED.values():
        assert task.perf_inputs, task.id
        first = declared_arguments(task)
        assert first == declared_arguments(task) and len(first) == len(task.perf_inputs)


@pytest.mark.parametrize(
    ("perf_inputs", "problem", "schema_sees_it"),
    [
        ("3 and 4", "must be a list of {args", True),
        ([{"args": 3}], "perf_inputs[0].args`: must be the list", True),
        ([{"generator": "def make(size):\n    return [size, 1]\n", "size": 3}], "defines no `generate(size)`", False),
        ([{"generator": "def generate(size):\n    return [size, 1]\n", "size": -1}], "whole number", True),
        ([{"args": [1, 2], "size": 3}], "unknown field", True),
    ],
)
def test_bad_perf_inputs_are_refused_in_one_line(tmp_path, perf_inputs, problem, schema_sees_it):
    path = _task_file(tmp_path, perf_inputs)
    with pytest.raises(TaskError, match="perf_inputs") as raised:
        load_task_file(path)
    assert problem in str(raised.value) and "\n" not in str(raised.value)
    if schema_sees_it:  # what a generator's source defines is the loader's to check, not the schema's
        data = yaml.safe_load(path.read_text())
        data["created"] = str(data["created"])
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(data, task_schema())


def test_explicit_and_generated_perf_inputs_load_in_order(tmp_path):
    generator = "def generate(size):\n    return [size, size + 1]\n"
    task = load_task_file(_task_file(tmp_path, [{"args": [1, 2]}, {"generator": generator, "size": 5}]))
    assert declared_arguments(task) == [(1, 2), (5, 6)]


def test_plus_inputs_are_picked_where_the_reference_does_the_most_work(tmp_path):
    reference = "def total(n):\n    return sum(i * i for i in range(n))\n"
    inputs = [[10], [300_000], [5], [100_000], [20]]
    table, _ = compute(OracleRequest(reference, "total", inputs))
    task = Task("plus/1", "total", "prompt", reference, {"visible": "def test_x():\n    pass\n"},
                files={DATA_FILE: table})  # fmt: skip
    cache = Cache(tmp_path)
    assert selected_arguments(task, 2, cache) == [(300_000,), (100_000,)]
    assert len(list((tmp_path / "perf_inputs").rglob("*.json"))) == 1  # cached by content: chosen once
    assert selected_arguments(task, 2, cache) == [(300_000,), (100_000,)]


def test_plus_inputs_too_fast_to_time_are_ranked_by_the_lines_the_reference_runs(tmp_path):
    # sorting 3,000 numbers takes longer than 40 rounds of an empty loop, but it is one line: timing microseconds
    # picked different inputs from run to run (HumanEval/0), counting lines picks the same ones every time
    reference = "def scan(xs, rounds):\n    ordered = sorted(xs)\n    for _ in range(rounds):\n        pass\n"
    inputs = [[list(range(3000)), 0], [[], 40], [[2, 1], 10], [[], 0]]
    table, _ = compute(OracleRequest(reference, "scan", inputs))
    task = Task("plus/3", "scan", "prompt", reference, {"visible": "def test_x():\n    pass\n"},
                files={DATA_FILE: table})  # fmt: skip
    assert selected_arguments(task, 2, Cache(tmp_path)) == [([], 40), ([2, 1], 10)]


def test_a_plus_input_the_reference_takes_too_long_on_is_not_chosen(tmp_path):
    fast = "def total(n):\n    return n\n"
    table, _ = compute(OracleRequest(fast, "total", [[1], [7], [3]]))
    looping = "def total(n):\n    while n == 7:\n        pass\n    return sum(range(n * 1000))\n"
    task = Task("plus/2", "total", "prompt", looping, {"visible": "def test_x():\n    pass\n"},
                files={DATA_FILE: table})  # fmt: skip
    assert selected_arguments(task, 2, Cache(tmp_path)) == [(1,), (3,)]  # 7 loops: stopped, never chosen


def test_a_task_without_perf_inputs_or_plus_inputs_has_none(pool, cache):
    task = load_task_file(ROOT / "tests/fixtures/tasks/good.yaml")
    assert measure_efficiency(task, task.reference, pool, CFG, cache).status == NO_PERF_INPUTS


# ------------------------------------------------------------------ counts


@needs_valgrind
def test_the_reference_against_itself_is_one_and_counts_the_same_each_time(pool, cache):
    runs = [_measure("two_sum", SEED["two_sum"].reference, pool, cache) for _ in range(2)]
    for found in runs:
        assert found.status == MEASURED, found
        assert 0.99 <= found.instructions_ratio <= 1.01 and 0.9 <= found.memory_ratio <= 1.1, found
        assert found.candidate.instructions > 100_000 and found.candidate.peak_bytes > 0
    counts = [found.candidate.instructions for found in runs]
    assert max(counts) <= 1.01 * min(counts), counts


@needs_valgrind
@pytest.mark.parametrize("task_id", sorted(FAST))
def test_known_slow_and_fast_answers_are_ranked_right(pool, cache, task_id):
    with ThreadPoolExecutor(2) as both:  # counts, not times: measuring both at once changes neither
        fast, slow = both.map(lambda code: _measure(task_id, code, pool, cache), (FAST[task_id], SLOW[task_id]))
    assert fast.status == MEASURED and slow.status == MEASURED, (fast, slow)
    assert slow.instructions_ratio > 1.5 * fast.instructions_ratio, (fast, slow)


@needs_valgrind
def test_an_answer_far_over_budget_is_too_slow_never_a_failure(pool, cache):
    found = _measure("two_sum", NESTED_TWO_SUM, pool, cache, EfficiencyConfig(enabled=True, budget=5.0))
    assert found.status == TOO_SLOW and found.candidate.status == TOO_SLOW, found
    assert found.instructions_ratio is None and found.reference.status == MEASURED


@needs_valgrind
def test_an_answer_wrong_on_a_perf_input_has_no_ratio(pool, cache):
    wrong = FAST["two_sum"].replace("return []", "return [0, 0]")
    found = _measure("two_sum", wrong, pool, cache)
    assert found.status == ERROR and "differs from the reference's" in found.candidate.detail, found


@needs_valgrind
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_answer_never_gets_a_cheaper_count(pool, cache, name):
    found = _measure("two_sum", _WITH_FAST + HOSTILE[name], pool, cache)
    assert found.status == ERROR, found
    assert found.instructions_ratio is None and found.candidate.instructions is None
    assert found.reference.status == MEASURED and "differs from the reference's" not in found.candidate.detail


@needs_valgrind
def test_an_output_too_long_for_repr_is_compared_all_the_same(pool, cache, tmp_path):
    # like HumanEval/139's special factorial: an int over 4,300 digits, which repr refuses (int_max_str_digits)
    task = dataclasses.replace(load_task_file(_task_file(tmp_path, [{"args": [7, 6000]}])),
                               reference="def add(a, b):\n    return a ** b\n")  # fmt: skip
    loop = "def add(a, b):\n    result = 1\n    for _ in range(b):\n        result *= a\n    return result\n"
    found = measure_efficiency(task, loop, pool, CFG, cache)
    assert found.status == MEASURED and found.instructions_ratio > 1.0, found


@needs_valgrind
def test_the_pool_measures_as_before_after_the_hostile_answers(pool, cache):
    after = _measure("two_sum", FAST["two_sum"], pool, cache)
    assert after.status == MEASURED and 0.8 < after.instructions_ratio < 1.0, after
