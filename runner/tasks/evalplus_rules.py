"""Which EvalPlus tasks are judged by which rule: the table beside the one comparison function every suite of
an EvalPlus task runs (runner/suites/evalplus_match.py, `_evalplus_match`).

Each rule mirrors a list or an oracle of EvalPlus 0.3.1 (`unsafe_execute` in evalplus/eval/__init__.py and
evalplus/eval/_special_oracle.py); a task is matched by its benchmark and entry point, as EvalPlus matches it.
docs/verdicts.md shows the table.
"""

from __future__ import annotations

from dataclasses import dataclass

EVALPLUS_VERSION = "0.3.1"
"""The EvalPlus release whose rules the table mirrors."""
DEFAULT_RULE = "equal"


@dataclass(frozen=True)
class Rule:
    """One rule: its name as `_evalplus_match` knows it, the benchmark, the entry points, what it mirrors."""

    name: str
    benchmark: str
    """EvalPlus's `dataset`: "humaneval" (HumanEval+) or "mbpp" (MBPP+)."""
    entry_points: tuple[str, ...]
    mirrors: str
    what: str


RULES = (
    Rule(
        "equal",
        "humaneval, mbpp",
        (),
        "unsafe_execute: `out == exp`, then `np.allclose`",
        "exact; for a float (or list or tuple of floats) expected output, or a task with `atol`, within "
        "`atol + 1e-7 x |expected|` (atol 1e-6 when the task has none, kept for the task's later inputs)",
    ),
    Rule(
        "not_none",
        "mbpp",
        ("check_str", "text_match_three", "text_starta_endb"),
        "MBPP_OUTPUT_NOT_NONE_TASKS",
        "a bool output equals whether the reference's output was not None; any other output is None exactly "
        "when the reference's was",
    ),
    Rule(
        "set",
        "mbpp",
        (
            "similar_elements",
            "find_char_long",
            "common_in_nested_lists",
            "extract_singly",
            "larg_nnum",
            "intersection_array",
            "find_dissimilar",
            "Diff",
        ),
        "MBPP_OUTPUT_SET_EQ_TASKS",
        "`set(output) == set(expected)`",
    ),
    Rule(
        "always",
        "mbpp",
        ("are_equivalent",),
        "unsafe_execute's Mbpp/164 special oracle",
        "any output that returns in time",
    ),
    Rule("or_zero", "mbpp", ("sum_div",), "unsafe_execute's Mbpp/295 special oracle", "exact, or 0"),
    Rule(
        "surface_area",
        "mbpp",
        ("surface_Area",),
        "_surface_Area (Mbpp/581)",
        "exact, or within `atol` of the surface area taking the height as the pyramid's perpendicular height",
    ),
    Rule(
        "digit_distance",
        "mbpp",
        ("digit_distance_nums",),
        "_digit_distance_nums (Mbpp/558)",
        "exact, or the digit distance with the shorter number padded with zeros",
    ),
    Rule(
        "root",
        "humaneval",
        ("find_zero",),
        "_poly (HumanEval/32)",
        "`abs(poly(xs, output)) <= atol`: any root, not the reference's",
    ),
)


def evalplus_rule(benchmark: str, entry_point: str) -> str:
    """The rule of an entry point of `benchmark` ("humaneval" or "mbpp"), DEFAULT_RULE for most."""
    for rule in RULES:
        if entry_point in rule.entry_points and benchmark in rule.benchmark:
            return rule.name
    return DEFAULT_RULE


def needs_arguments(rule: str) -> bool:
    """Whether the rule recomputes the answer from the input's arguments (the suite then passes them)."""
    return rule in ("surface_area", "digit_distance", "root")


def rule_table() -> str:
    """The table as Markdown, for docs/verdicts.md (tests/test_evalplus_rules.py checks the doc holds it)."""
    lines = [
        f"| rule | benchmark | entry points | mirrors (EvalPlus {EVALPLUS_VERSION}) | passes when |",
        "| --- | --- | --- | --- | --- |",
    ]
    for rule in RULES:
        names = ", ".join(f"`{name}`" for name in rule.entry_points) or "every other task"
        lines.append(f"| `{rule.name}` | {rule.benchmark} | {names} | {rule.mirrors} | {rule.what} |")
    return "\n".join(lines) + "\n"
