"""Sanitizing script-style answers (runner.generation.sanitize): what is kept, what is dropped, and why."""

import ast

import pytest

from runner.generation.extract import Extraction
from runner.generation.sanitize import NOTE_PREFIX, sanitize, sanitized


def kept(code: str, entry: str = "f") -> str:
    return sanitize(code, (entry,))[0]


def test_examples_prints_and_asserts_after_the_function_are_dropped():
    code = "def f(x):\n    return x - int(x)\n\nassert f(10.99) == 0.99\nprint(f(3.5))\n"
    out, notes = sanitize(code, ("f",))
    assert out == "def f(x):\n    return x - int(x)\n"
    assert len(notes) == 1 and notes[0].startswith(NOTE_PREFIX + "dropped 2 top-level statement(s)")
    assert "line 4 'assert f(10.99) == 0.99'" in notes[0] and "line 5 'print(f(3.5))'" in notes[0]


def test_the_dependency_closure_is_kept_in_source_order_and_the_rest_dropped():
    code = (
        "import math\nfrom typing import List\nLIMIT = 10\nUNUSED = 3\n\n"
        "def f(x: List[int]):\n    return helper(x) + math.pi\n\n"
        "def helper(x):\n    return Point(x).y * LIMIT\n\n"
        "class Point:\n    def __init__(self, y):\n        self.y = y\n\n"
        "def test_f():\n    assert f([1]) == 2\n\n"
        'if __name__ == "__main__":\n    test_f()\n'
    )
    out = kept(code)
    names = [getattr(n, "name", None) or ast.unparse(n) for n in ast.parse(out).body]
    assert names == ["import math", "from typing import List", "LIMIT = 10", "f", "helper", "Point"]


def test_a_helper_defined_after_its_caller_and_an_example_between_them():
    code = "def f(x):\n    return g(x)\n\nresult = f(3)\nprint(result)\n\ndef g(x):\n    return x + 1\n"
    assert kept(code) == "def f(x):\n    return g(x)\n\ndef g(x):\n    return x + 1\n"


def test_parameters_and_locals_do_not_pull_in_globals_of_the_same_name():
    code = "def f(x):\n    total = x\n    return total\n\nx = f(1)\ntotal = f(2)\n"
    assert kept(code) == "def f(x):\n    total = x\n    return total\n"


def test_an_answer_cut_off_after_the_entry_point_keeps_the_complete_definitions():
    code = "def f(x):\n    return x + 1\n\ndef check():\n    assert f(1) == 2\n    assert f(2) == [1,"
    out, notes = sanitize(code, ("f",))
    assert out == "def f(x):\n    return x + 1\n"
    assert notes == (
        NOTE_PREFIX + "dropped lines 4-6, a block that does not parse ('[' was never closed): 'def check():'",
    )


def test_a_cut_off_entry_point_is_left_to_the_judge_as_a_syntax_error():
    code = "def f(x):\n    if x:\n        return (x +\n"
    assert sanitize(code, ("f",)) == (code, ())


def test_a_line_of_prose_between_definitions_is_dropped_and_line_numbers_stay_those_of_the_answer():
    code = "def f(x):\n    return g(x)\n\nHere g doubles x.\n\ndef g(x):\n    return 2 * x\n\nprint(f(1))\n"
    out, notes = sanitize(code, ("f",))
    assert out == "def f(x):\n    return g(x)\n\ndef g(x):\n    return 2 * x\n"
    assert notes[0] == NOTE_PREFIX + "dropped line 4, a block that does not parse (invalid syntax): 'Here g doubles x.'"
    assert "line 9 'print(f(1))'" in notes[1]


def test_every_definition_of_a_reached_name_is_kept_so_the_last_one_wins_as_in_python():
    code = "def f(x):\n    return 1\n\ndef f(x):\n    return 2\n"
    assert kept(code) == code


def test_decorators_and_a_try_import_block_are_kept_with_what_they_define():
    code = (
        "import functools\ntry:\n    from math import gcd\nexcept ImportError:\n    gcd = None\n\n"
        "@functools.lru_cache(maxsize=None)\ndef f(a, b):\n    return gcd(a, b)\n"
    )
    assert kept(code) == code.replace("\n\n@", "\n\n@", 1)


def test_a_statement_sharing_a_line_is_written_from_its_tree():
    assert kept("def f(x): return x\nx = 1; print(x)\n") == "def f(x): return x\n"
    assert (
        kept("LIMIT = 3; print(LIMIT)\ndef f(x):\n    return LIMIT\n") == "LIMIT = 3\n\ndef f(x):\n    return LIMIT\n"
    )


def test_a_clean_module_is_returned_unchanged_with_no_note():
    code = "import re\n\n\ndef f(s):\n    # a comment\n    return re.sub('a', 'b', s)\n"
    assert sanitize(code, ("f",)) == (code, ())


@pytest.mark.parametrize("code", ["print(1)\n", "x = 1\n", "def g():\n    return 1\n"])
def test_code_without_the_entry_point_is_left_as_it_is(code):
    assert sanitize(code, ("f",)) == (code, ())


def test_extra_entry_points_are_roots_too():
    code = "def encode(s):\n    return s\n\ndef decode(s):\n    return s\n\nprint(decode(encode('a')))\n"
    assert sanitize(code, ("decode", "encode"))[0] == "def encode(s):\n    return s\n\ndef decode(s):\n    return s\n"
    assert sanitize(code, ("decode",))[0] == "def decode(s):\n    return s\n"


def test_sanitized_adds_its_notes_to_the_extraction_and_keeps_no_code_as_none():
    before = Extraction("def f():\n    return 1\nprint(f())\n", ("an earlier change",))
    after = sanitized(before, ("f",))
    assert after.code == "def f():\n    return 1\n"
    assert after.changes[0] == "an earlier change" and after.changes[1].startswith(NOTE_PREFIX)
    assert sanitized(Extraction(None), ("f",)) == Extraction(None)
