"""Benchmark importers: HumanEval (required), HumanEval+ and MBPP+."""

import math
import re
import sys

import pytest

from runner.tasks.importers import (
    KNOWN_WRONG_EXAMPLES,
    NO_VISIBLE_TAG,
    docstring_examples,
    load_humaneval,
    load_humanevalplus,
    load_humanevalplus_mini,
    load_mbpp,
    load_mbppplus,
    visible_suite,
)
from tests.conftest import datasets_available

needs_datasets = pytest.mark.skipif(not datasets_available(), reason="benchmark files absent (RUNNER_DATASETS_DIR)")


@pytest.fixture(scope="module")
def humaneval():
    return load_humaneval()


def test_humaneval_has_164_tasks_with_reference_and_check(humaneval):
    assert len(humaneval) == 164
    assert len({t.id for t in humaneval}) == 164
    first = humaneval[0]
    assert first.id == "HumanEval/0" and first.entry_point == "has_close_elements"
    assert first.reference.startswith(first.prompt) and len(first.reference) > len(first.prompt)
    assert first.signature == "def has_close_elements(numbers: List[float], threshold: float) -> bool"
    for task in humaneval:
        assert "def check(candidate)" in task.suites["hidden"]
        assert task.suites["hidden"].rstrip().endswith(f"check({task.entry_point})")


def test_humaneval_visible_suites_come_from_docstring_examples(humaneval):
    with_visible = [t for t in humaneval if "visible" in t.suites]
    assert len(with_visible) > 100
    for task in humaneval:
        assert ("visible" in task.suites) == (NO_VISIBLE_TAG not in task.tags)
    below_zero = humaneval[3].suites["visible"]
    assert "assert below_zero([1, 2, 3]) == False" in below_zero
    assert "assert below_zero([1, 2, -4, 5]) == True" in below_zero


def test_prompt_helpers_used_by_the_test_come_from_the_reference(humaneval):
    assert humaneval[32].suites["hidden"].startswith("from reference import poly\n")
    assert humaneval[38].suites["hidden"].startswith("from reference import encode_cyclic\n")


def test_docstring_example_forms():
    prompt = '''def f(x):
    """
    >>> f(1)
    2
    >>> f([1, 2])
    [1,
     2]
    >>> f(3)

    >>> f(a)
    1
    f(4) == 5
    f(5) ➞ 6
    for f(6) => 'x'
    f(7) should return 8.
    f(8) -> 0.5
    """
'''
    assert docstring_examples(prompt, "f") == [
        ("f(1)", "2"),
        ("f([1, 2])", "[1, 2]"),
        ("f(4)", "5"),
        ("f(5)", "6"),
        ("f(6)", "'x'"),
        ("f(7)", "8"),
        ("f(8)", "0.5"),
    ]
    assert "assert f(8) == pytest.approx(0.5)" in visible_suite(prompt, "f")
    assert visible_suite('def f():\n    """No examples."""\n', "f") == ""


def test_known_wrong_examples_really_contradict_the_reference(humaneval):
    """The errata list must stay honest: the reference fails each listed example, and only those."""
    by_id = {t.id: t for t in humaneval}
    for task_id, wrong in KNOWN_WRONG_EXAMPLES.items():
        task = by_id[task_id]
        namespace: dict = {}
        exec(task.reference, namespace)  # trusted benchmark code
        for call, want in docstring_examples(task.prompt, task.entry_point):
            assert (eval(call, namespace) == eval(want)) == (call not in wrong), call
            assert (call in task.suites.get("visible", "")) == (call not in wrong), call


@needs_datasets
def test_humanevalplus_base_in_hidden_plus_in_properties():
    tasks = load_humanevalplus()
    assert len(tasks) == 164
    assert all("properties" in t.suites and "def test_plus_inputs" in t.suites["properties"] for t in tasks)
    assert "reference.poly" in tasks[32].suites["properties"]  # find_zero judged by the root's value


@needs_datasets
def test_humanevalplus_mini_judges_base_by_humaneval_s_own_check():
    tasks = load_humanevalplus_mini()
    full = {t.id: t for t in load_humanevalplus()}
    assert len(tasks) == 164 and tasks[0].id == "HumanEval/0"
    assert all(t.suites["hidden"] == full[t.id].suites["hidden"] and "def check(" in t.suites["hidden"] for t in tasks)
    assert all("def test_plus_inputs" in t.suites["properties"] for t in tasks)
    assert len(tasks[0].files[next(iter(tasks[0].files))]) < len(full["HumanEval/0"].files[next(iter(tasks[0].files))])


@needs_datasets
def test_sanitized_mbpp_first_test_visible_all_hidden_imports_first():
    tasks = {t.id: t for t in load_mbpp()}
    assert len(tasks) == 427
    first = tasks["Mbpp/2"]
    assert first.entry_point == "similar_elements" and first.signature == "def similar_elements(test_tup1, test_tup2)"
    assert first.suites["visible"].count("def test_example_") == 1 and "properties" not in first.suites
    assert first.suites["hidden"].count("def test_assertion_") == 3
    assert "assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10)))" in first.prompt
    sphere = tasks["Mbpp/82"]
    assert sphere.suites["hidden"].startswith("import math\n") and sphere.suites["visible"].startswith("import math\n")
    assert sphere.reference.startswith("import math")


@needs_datasets
def test_mbppplus_suites():
    tasks = load_mbppplus()
    assert len(tasks) == 378
    first = tasks[0]
    assert first.id == "Mbpp/2" and "assert set(similar_elements(" in first.suites["visible"]
    assert first.suites["hidden"].count("def test_assertion_") == 3


def suite_namespace(tmp_path, compare: str = "equal") -> dict:
    """The globals of a properties suite module, executed beside an empty data file."""
    import pickle

    from runner.suites import candidate_guard
    from runner.tasks.plus_oracle import DATA_FILE
    from runner.tasks.plus_suites import differential_suite

    (tmp_path / DATA_FILE).write_bytes(pickle.dumps(()))
    namespace: dict = {"math": math, "__file__": str(tmp_path / "test_properties.py")}
    sys.modules["candidate_guard"] = candidate_guard  # as in a job, where it is a file beside the suite
    try:
        exec(differential_suite("f", 0.0, compare=compare), namespace)
    finally:
        del sys.modules["candidate_guard"]
    return namespace


def test_differential_suite_compares_like_evalplus(tmp_path):
    same = suite_namespace(tmp_path)["_same"]
    assert same(0.1 + 0.2, 0.3)  # float outputs: 1e-6 tolerance even with atol 0
    assert not same(0.31, 0.3)
    assert not same(1, True) or same(1, True) == (1 == True)  # noqa: E712 - exact match as EvalPlus
    assert same([1.0, 2.0000001], [1.0, 2.0])
    assert not same([1.0, 2.0], (1.0, 2.0))
    assert not same("a", "b")


def test_differential_suite_loose_comparisons_like_evalplus(tmp_path):
    def same_for(compare):
        return suite_namespace(tmp_path, compare)["_same"]

    # not_none: the oracle stores whether the reference's output was None (a re.Match cannot be stored)
    assert same_for("not_none")(re.match("a", "a"), True) and not same_for("not_none")(None, True)
    assert same_for("not_none")(None, False) and not same_for("not_none")(re.match("a", "a"), False)
    assert same_for("set")((1, 2), [2, 1]) and not same_for("set")((1,), (1, 2))
    assert not same_for("equal")((1, 2), (2, 1))


@needs_datasets
def test_mbppplus_plus_inputs_get_their_argument_types_back():
    import pickle

    from runner.tasks.plus_oracle import DATA_FILE
    from runner.tasks.plus_suites import mbpp_comparison, mbpp_input_conversion

    tasks = {t.id: t for t in load_mbppplus()}

    def inputs(task_id: str) -> list:
        return [pickle.loads(args) for args, _, _ in pickle.loads(tasks[task_id].files[DATA_FILE])]

    assert all(isinstance(args[1], tuple) and isinstance(args[0], list) for args in inputs("Mbpp/106"))
    assert all(type(a) is float and type(b) is complex for a, b in inputs("Mbpp/124"))
    assert mbpp_input_conversion("Mbpp/3") == "args" and mbpp_comparison("is_not_prime") == "equal"
    assert mbpp_comparison("check_str") == "not_none" and mbpp_comparison("similar_elements") == "set"
