"""Code extraction from model responses."""

import ast

import pytest

from runner.generation import extract
from runner.generation.extract import extract_code, strip_thinking

CODE = "def add(a, b):\n    return a + b\n"


@pytest.mark.parametrize(
    "response",
    [
        f"Here you go:\n```python\n{CODE}```\nThat's it.",
        f"```py\n{CODE}```",
        f"```Python\n{CODE}```",
        f"Solution:\n```\n{CODE}```\n",
        f"~~~python\n{CODE}~~~\n",
        f"````python\n{CODE}````\n",
    ],
    ids=["python", "py", "Python", "untagged", "tilde", "long-fence"],
)
def test_fenced_blocks(response):
    assert extract_code(response, "add") == CODE


def test_picks_the_block_defining_the_entry_point():
    response = (
        "First a helper:\n```python\ndef helper(x):\n    return x\n```\n"
        f"Then:\n```python\n{CODE}```\nUsage:\n```python\nprint(add(1, 2))\n```\n"
    )
    assert extract_code(response, "add") == CODE


def test_falls_back_to_first_python_block():
    response = "```bash\npip install x\n```\n```python\ndef other():\n    return 1\n```\n"
    assert extract_code(response, "add") == "def other():\n    return 1\n"


def test_untagged_block_that_is_not_code_is_skipped():
    response = f"```\n$ run it\noutput 3\n```\n```python\n{CODE}```"
    assert extract_code(response, "add") == CODE


def test_non_python_tagged_block_only_gives_no_code():
    assert extract_code("```bash\nls -la\n```", "add") is None


def test_thinking_is_removed_first():
    response = f"<think>maybe\n```python\ndef add(a, b):\n    return 0\n```\n</think>\n```python\n{CODE}```"
    assert extract_code(response, "add") == CODE


def test_unterminated_thinking_hides_everything_after_it():
    assert extract_code(f"<think>I could write\n```python\n{CODE}```", "add") is None


def test_leading_reasoning_closed_by_lone_think_tag():
    assert extract_code(f"reasoning with def add(x): ...\n</think>\n```python\n{CODE}```", "add") == CODE


def test_strip_thinking_keeps_text_around_blocks():
    assert strip_thinking("a<think>x</think>b<THINK>y</THINK>c") == "abc"


def test_response_that_is_itself_code():
    assert extract_code("from math import sqrt\n\n" + CODE, "add") == "from math import sqrt\n\n" + CODE


def test_unfenced_code_after_prose_trims_trailing_prose():
    response = f"Sure! Here is the function.\n\n{CODE}\nThis adds the two numbers and returns the sum.\n"
    assert extract_code(response, "add") == CODE


def test_unfenced_code_keeps_top_level_statements_of_the_code():
    code = "import math\n\nLIMIT = 10\n\n\n@decorator\ndef add(a, b):\n    return a + b\n"
    assert extract_code("Answer:\n" + code + "\nHope this helps!", "add") == code


def test_prose_starting_with_from_is_not_code():
    assert extract_code("from here on we consider sums\nno code at all", "add") is None


def test_truncated_fence_still_yields_its_content():
    assert extract_code("```python\ndef add(a, b):\n    return a + b", "add") == CODE


def test_no_code():
    assert extract_code("I cannot help with that.", "add") is None
    assert extract_code("", "add") is None
    assert extract_code("```python\n\n```", "add") is None


def test_one_megabyte_response_is_linear(monkeypatch):
    calls = []
    real_parse = ast.parse

    def counting_parse(*args, **kwargs):
        calls.append(1)
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(extract.ast, "parse", counting_parse)
    prose = "This line is prose and only prose, repeated many times over.\n" * 17000
    assert len(prose) > 1_000_000
    assert extract_code(prose, "add") is None
    assert extract_code(prose + CODE + prose, "add") == CODE
    code_lines = "".join(f"x{i} = {i}\n" for i in range(60000))
    assert extract_code("def add(a, b):\n    return a + b\n" + code_lines, "add").startswith(CODE)
    fenced = "".join(f"```text\nblock {i}\n```\n" for i in range(40000))
    assert extract_code(fenced + f"```python\n{CODE}```", "add") == CODE
    assert len(calls) <= 3 * extract._MAX_PARSE_TRIES


# Real answer shapes, as models write them (the HumanEval/0 task; entry point has_close_elements).
HCE = """from typing import List


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    for i, a in enumerate(numbers):
        for b in numbers[i + 1 :]:
            if abs(a - b) < threshold:
                return True
    return False
"""
HCE_FN = HCE.split("\n\n\n", 1)[1]
LANGUAGE_LINE = "dropped the line 'python' after the opening fence: a language name, not code"

SHAPES = {
    # Qwen2.5-Coder-0.5B with the EvalPlus prompt, 156 of 164 answers: untagged fence, language on its own line.
    "untagged-language-line": (
        f"```\npython\n{HCE}```\n\nThis function checks every pair of numbers.",
        HCE,
        (LANGUAGE_LINE,),
    ),
    "untagged-language-line-capitalised": (
        f"```\nPython\n{HCE}```",
        HCE,
        (LANGUAGE_LINE.replace("'python'", "'Python'"),),
    ),
    "python3-tag": (f"```python3\n{HCE}```", HCE, ()),
    "py-tag-with-filename": (f"```py title=solution.py\n{HCE}```", HCE, ()),
    "unclosed-final-fence": (f"Here is the code:\n```python\n{HCE}", HCE, ()),
    "no-fence-at-all": (HCE, HCE, ()),
    "prose-then-unfenced": (f"Sure! Here's the implementation:\n\n{HCE}", HCE, ()),
    # EvalPlus's response prefix ends with an opened ```python fence; some models open it again.
    "prefilled-fence-opened-again": (
        "Below is a Python script with a self-contained function that solves the problem and passes "
        f"corresponding tests:\n```python\n```python\n{HCE}```\n",
        HCE,
        (),
    ),
    "prose-between-blocks-and-usage-block": (
        f"The solution:\n\n```python\n{HCE}```\n\nYou can test it like this:\n\n"
        "```python\nprint(has_close_elements([1.0, 2.0, 3.0], 0.5))  # False\n```\n",
        HCE,
        (),
    ),
    "imports-in-their-own-block": (
        f"First import what we need:\n```python\nfrom typing import List\n```\nThen:\n```python\n{HCE_FN}```",
        "from typing import List\n\n\n" + HCE_FN,
        ("added from other code blocks what the chosen block uses: List",),
    ),
    "corrected-version-is-longer": (
        "```python\ndef has_close_elements(numbers, threshold):\n    return False\n```\n"
        f"Wait, that ignores the input. Corrected:\n```python\n{HCE}```",
        HCE,
        (),
    ),
    "main-guard-kept": (
        f'```python\n{HCE}\n\nif __name__ == "__main__":\n    import doctest\n    doctest.testmod()\n```',
        f'{HCE}\n\nif __name__ == "__main__":\n    import doctest\n    doctest.testmod()\n',
        (),
    ),
}


def _helper_shape():
    helper = "def _close(a: float, b: float, t: float) -> bool:\n    return abs(a - b) < t\n"
    main = (
        "def has_close_elements(numbers, threshold):\n"
        "    return any(_close(a, b, threshold) for i, a in enumerate(numbers) for b in numbers[i + 1 :])\n"
    )
    response = f"A helper:\n```python\n{helper}```\nAnd the function:\n```python\n{main}```"
    return response, f"{helper}\n\n{main}", ("added from other code blocks what the chosen block uses: _close",)


SHAPES["helper-function-in-another-block"] = _helper_shape()


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_real_answer_shapes(shape):
    response, code, changes = SHAPES[shape]
    found = extract.extract(response, "has_close_elements")
    assert found.code == code
    assert found.changes == changes
    ast.parse(found.code)


def test_language_line_only_dropped_when_it_is_alone():
    response = "```\npython_version = 3\ndef add(a, b):\n    return a + b\n```"
    assert extract.extract(response, "add") == extract.Extraction("python_version = 3\n" + CODE)


def test_unfenced_code_cut_where_it_stops_parsing_says_so():
    found = extract.extract(CODE + "def broken(:\n    pass\n", "add")
    assert found.code == CODE
    assert found.changes and "do not parse" in found.changes[0]
