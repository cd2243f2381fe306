"""AST gate rules, one by one, and the signature check."""

from pathlib import Path

import pytest
import yaml

from runner.config import GateConfig
from runner.judging.gate import check_gate
from runner.judging.signature import check_signature

CONF = Path(__file__).resolve().parents[1] / "conf" / "gate"
STRICT = GateConfig()  # the dataclass defaults are the builtins_only profile
EP = ("f",)


def profile(name: str) -> GateConfig:
    return GateConfig(**yaml.safe_load((CONF / f"{name}.yaml").read_text()))


def test_builtins_only_yaml_matches_the_defaults():
    assert profile("builtins_only") == STRICT


@pytest.mark.parametrize(
    ("code", "rule", "line"),
    [
        ("def f():\n    return 1\nimport os\n", "no-import", 3),
        ("def f():\n    import os.path\n    return 1\n", "no-import", 2),
        ("from math import sqrt\ndef f():\n    return sqrt(4)\n", "no-import", 1),
        ("from . import x\ndef f():\n    return 1\n", "no-relative-import", 1),
        ("def f():\n    class A:\n        pass\n    return A\n", "no-class", 2),
        ("def f():\n    global X\n    return 1\n", "no-global", 2),
        ("def f():\n    x = 0\n    def g():\n        nonlocal x\n    return x\n", "no-global", 4),
        ("def g():\n    return 1\n\ndef f():\n    return g()\n", "only-entry-points", 1),
        ("X = 1\ndef f():\n    return X\n", "only-entry-points", 1),
        ("def f():\n    return eval('1')\n", "forbidden-call", 2),
        ("def f():\n    return builtins.exec('1')\n", "forbidden-call", 2),
        ("def f():\n    return __builtins__.open('x')\n", "forbidden-call", 2),
        ("def f(x):\n    return x.__class__\n", "no-dunder-attribute", 2),
        ("def f(x):\n    return x.__dict__\n", "no-dunder-attribute", 2),
        ("def f(x):\n    return __builtins__\n", "no-dunder-attribute", 2),
    ],
)
def test_each_rule_rejects_and_names_rule_and_line(code, rule, line):
    violation = check_gate(code, STRICT, EP)
    assert violation is not None
    assert (violation.rule, violation.line) == (rule, line)
    assert str(violation).startswith(f"rule {rule} at line {line}: ")


def test_message_says_what_is_allowed():
    violation = check_gate("def f():\n    return 1\n\n\nimport os\n", STRICT, EP)
    assert str(violation) == "rule no-import at line 5: `import os` is not allowed; allowed imports: none"


def test_first_violation_in_source_order_wins():
    code = "def f(x):\n    y = x.__class__\n    return eval(y)\nimport os\n"
    assert check_gate(code, STRICT, EP).line == 2


def test_clean_function_with_docstring_passes():
    code = (
        '"""Module doc."""\n\n\ndef f(xs):\n    """Doc."""\n'
        "    def key(v):\n        return -v\n    return sorted(xs, key=key)\n"
    )
    assert check_gate(code, STRICT, EP) is None


def test_extra_entry_points_are_allowed_at_top_level():
    code = "def f():\n    return g()\n\ndef g():\n    return 1\n"
    assert check_gate(code, STRICT, ("f", "g")) is None


def test_private_names_and_attribute_calls_named_like_forbidden_ones_pass():
    code = "def f(s, obj):\n    obj.__x = 1\n    return s.format(1), obj.compile(), obj._eval\n"
    assert check_gate(code, STRICT, EP) is None


def test_stdlib_profile_admits_allowed_imports_and_helpers():
    stdlib = profile("stdlib")
    code = (
        "from typing import List\nimport collections.abc\nimport math\n\nLIMIT = 3\n\n\n"
        "def helper(x):\n    return math.sqrt(x)\n\n\n"
        "def f(xs: List[int]) -> float:\n    return helper(sum(xs)) + LIMIT\n\n\n"
        "if __name__ == '__main__':\n    print(f([1]))\n"
    )
    assert check_gate(code, stdlib, EP) is None


@pytest.mark.parametrize(
    ("code", "rule", "line"),
    [
        ("import os\ndef f():\n    return 1\n", "no-import", 1),
        ("from numpy import array\ndef f():\n    return 1\n", "no-import", 1),
        ("import mathx\ndef f():\n    return 1\n", "no-import", 1),
        ("def f():\n    return 1\nprint(f())\n", "no-top-level-code", 3),
        ("def f():\n    return 1\nfor i in range(3):\n    pass\n", "no-top-level-code", 3),
        ("def f():\n    return 1\nwhile True:\n    pass\n", "no-top-level-code", 3),
        ("import re\ndef f(p):\n    return re.compile(p), compile(p, 'x', 'eval')\n", "forbidden-call", 3),
    ],
)
def test_stdlib_profile_still_rejects(code, rule, line):
    violation = check_gate(code, profile("stdlib"), EP)
    assert (violation.rule, violation.line) == (rule, line)


def test_stdlib_message_lists_allowed_imports():
    message = str(check_gate("import os\ndef f():\n    return 1\n", profile("stdlib"), EP))
    assert "allowed imports: array, bisect," in message


def test_gate_off_checks_nothing():
    code = "import os\nclass A:\n    pass\nprint(eval('1').__class__)\n"
    assert check_gate(code, profile("off"), EP) is None
    assert check_gate(code, GateConfig(enabled=False), EP) is None


def test_each_allow_flag_lifts_its_rule():
    assert check_gate("class A:\n    pass\ndef f():\n    return A()\n", GateConfig(allow_classes=True), EP) is None
    assert check_gate("def f():\n    global X\n", GateConfig(allow_global_statements=True), EP) is None
    assert check_gate("def f(x):\n    return x.__len__()\n", GateConfig(allow_dunder_attributes=True), EP) is None
    assert check_gate("def f():\n    return eval('1')\n", GateConfig(forbidden_calls=[]), EP) is None


def test_unparsable_code_raises_syntax_error():
    with pytest.raises(SyntaxError):
        check_gate("def f(:\n", STRICT, EP)


# ---- signature -------------------------------------------------------------------------------------

REF = "def f(a, b):\n    return a + b\n"


@pytest.mark.parametrize(
    "code",
    [
        "def f(a, b):\n    return a\n",
        "def f(x, y, z=0):\n    return x\n",
        "def f(*args):\n    return 1\n",
        "def f(a, *rest, key=None):\n    return a\n",
        "async def f(a, b):\n    return a\n",
    ],
)
def test_signature_compatible(code):
    assert check_signature(code, "f", "", REF) is None


@pytest.mark.parametrize(
    ("code", "words"),
    [
        ("def g(a, b):\n    return a\n", "not defined"),
        ("def outer():\n    def f(a, b):\n        return a\n", "not defined"),
        ("def f(a):\n    return a\n", "accepts 1"),
        ("def f(a, b, c):\n    return a\n", "requires 3"),
        ("def f(a, b, *, strict):\n    return a\n", "strict"),
    ],
)
def test_signature_mismatch(code, words):
    problem = check_signature(code, "f", "", REF)
    assert problem is not None and words in problem


def test_signature_string_wins_over_reference():
    spec = "def f(a: int, b: int = 0) -> int"
    assert check_signature("def f(a):\n    return a\n", "f", spec, REF) is None
    assert "accepts 0" in check_signature("def f():\n    return 1\n", "f", spec, REF)
    assert check_signature("def f(a):\n    return a\n", "f", "", REF) is not None


def test_signature_unknown_spec_checks_existence_only():
    assert check_signature("def f(a, b, c):\n    return a\n", "f", "", "") is None
