"""Benchmark importers: HumanEval (required), HumanEval+ and MBPP+."""

import pytest

from runner.tasks.importers import (
    KNOWN_WRONG_EXAMPLES,
    NO_VISIBLE_TAG,
    docstring_examples,
    example_arguments,
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
    assert "_RULE = 'root'" in tasks[32].suites["properties"]  # find_zero judged by the root's value


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
def test_mbppplus_suites_are_tables_of_the_example_base_and_plus_inputs():
    tasks = load_mbppplus()
    assert len(tasks) == 378
    first = tasks[0]
    assert first.id == "Mbpp/2" and list(first.suites) == ["visible", "hidden", "properties"]
    assert "def test_examples" in first.suites["visible"] and "def test_base_inputs" in first.suites["hidden"]
    assert set(first.files) == {"example_inputs.pkl", "base_inputs.pkl", "plus_inputs.pkl"}
    assert all("_RULE = 'set'" in first.suites[suite] for suite in first.suites)
    assert not any(NO_VISIBLE_TAG in t.tags for t in tasks)
    # every prompt's example calls its entry point with literal arguments: none keeps its assert line
    assert not [t.id for t in tasks if "def test_example_" in t.suites["visible"]]


def test_example_arguments_are_the_literal_arguments_of_the_prompt_s_assert():
    prompt = '"""\nWrite a function.\nassert set(f((3, 4), [1])) == set((4,))\n"""\n'
    assert example_arguments(prompt, "f") == [[(3, 4), [1]]]
    assert example_arguments('assert not f("ac")\n', "f") == [["ac"]]
    assert example_arguments("assert f(x) == 1\n", "f") is None  # not a literal
    assert example_arguments("assert f(1) == f(2)\n", "f") is None  # two calls
    assert example_arguments("no example\n", "f") is None


@needs_datasets
def test_mbppplus_plus_inputs_get_their_argument_types_back():
    import pickle

    from runner.tasks.evalplus_rules import evalplus_rule
    from runner.tasks.plus_oracle import DATA_FILE
    from runner.tasks.plus_suites import mbpp_input_conversion

    tasks = {t.id: t for t in load_mbppplus()}

    def inputs(task_id: str) -> list:
        return [pickle.loads(args) for args, _, _ in pickle.loads(tasks[task_id].files[DATA_FILE])]

    assert all(isinstance(args[1], tuple) and isinstance(args[0], list) for args in inputs("Mbpp/106"))
    assert all(type(a) is float and type(b) is complex for a, b in inputs("Mbpp/124"))
    assert mbpp_input_conversion("Mbpp/3") == "args" and evalplus_rule("mbpp", "is_not_prime") == "equal"
    assert evalplus_rule("mbpp", "check_str") == "not_none" and evalplus_rule("mbpp", "similar_elements") == "set"
    assert all(isinstance(a, tuple) and isinstance(b, tuple) for a, b in inputs("Mbpp/2"))  # plus inputs
    base = [pickle.loads(args) for args, _, _ in pickle.loads(tasks["Mbpp/2"].files["base_inputs.pkl"])]
    assert base[0] == [(3, 4, 5, 6), (5, 7, 4, 10)]  # base inputs: the same conversion
