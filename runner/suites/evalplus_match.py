"""EvalPlus 0.3.1's verdict on one output, shipped into every suite of an EvalPlus task (its source is inlined).

One function, `_evalplus_match`, mirrors `unsafe_execute` in evalplus/eval/__init__.py (EvalPlus 0.3.1) line
for line: the exact match, then the special oracle or loose comparison of the task's rule (which tasks take
which rule: runner/tasks/evalplus_rules.py), then the float fallback. The helpers below it are EvalPlus's own
oracles (evalplus/eval/_special_oracle.py) and a pure-Python `np.allclose`, so the sandbox needs no numpy.
Names start with an underscore: the suite module also holds the candidate's entry points.
"""

import math


def _evalplus_match(rule, got, want, args, atol):
    """Whether `got` passes for expected `want` under `rule`, and the tolerance for the next input.

    As EvalPlus: `atol`, once raised to 1e-6 by an input whose expected output is a float (or a list or
    tuple of floats), stays raised for the task's later inputs, so the caller feeds the returned tolerance
    back in. `args` are the input's arguments (the surface_Area and digit_distance_nums oracles recompute
    the answer from them). An exception here (e.g. `set()` of an unhashable output) fails the input, as in
    EvalPlus.
    """
    if rule == "root":  # HumanEval/32 find_zero: the polynomial's value at the returned root
        return abs(_poly(*args, got)) <= atol, atol
    exact = got == want
    if rule == "always":  # Mbpp/164 are_equivalent
        exact = exact or True
    elif rule == "or_zero":  # Mbpp/295 sum_div
        exact = exact or got == 0
    elif rule == "surface_area":  # Mbpp/581 surface_Area
        exact = exact or abs(got - _surface_area(*args)) <= atol
    elif rule == "digit_distance":  # Mbpp/558 digit_distance_nums
        exact = exact or got == _digit_distance_nums(*args)
    elif rule == "set":  # MBPP_OUTPUT_SET_EQ_TASKS
        exact = set(got) == set(want)
    elif rule == "not_none":  # MBPP_OUTPUT_NOT_NONE_TASKS: `want` is whether the expected output was not None
        exact = got == want if isinstance(got, bool) else want == (got is not None)
    if atol == 0 and _is_floats(want):
        atol = 1e-6
    if not exact and atol != 0:
        if type(got) is not type(want) or (isinstance(want, list | tuple) and len(got) != len(want)):
            return False, atol
        return _allclose(got, want, atol), atol
    return bool(exact), atol


def _is_floats(value):
    """EvalPlus's `is_floats`: a float, or a non-empty list or tuple of floats only."""
    if isinstance(value, float):
        return True
    return isinstance(value, list | tuple) and len(value) > 0 and all(isinstance(v, float) for v in value)


def _allclose(got, want, atol):
    """`np.allclose(got, want, rtol=1e-07, atol=atol)` on numbers and nested lists or tuples of them: every
    pair within `atol + 1e-7 * |want|`, NaN close to nothing, an infinity only to itself. Where numpy raises
    (text, ragged shapes, an int beyond 64 bits) EvalPlus fails the input: so does this (False). numpy's
    broadcasting of a length-1 dimension against a longer one is not mirrored (shapes must be equal)."""
    if isinstance(want, list | tuple):
        return (
            isinstance(got, list | tuple)
            and len(got) == len(want)
            and all(_allclose(g, w, atol) for g, w in zip(got, want, strict=False))
        )
    if isinstance(got, list | tuple) or not (_is_number(got) and _is_number(want)):
        return False
    if got == want:
        return True
    if isinstance(got, complex) or isinstance(want, complex):
        return abs(got - want) <= atol + 1e-7 * abs(want)
    if math.isinf(got) or math.isinf(want):
        return False
    return abs(got - want) <= atol + 1e-7 * abs(want)  # False for a NaN


def _is_number(value):
    if isinstance(value, int):
        return -(2**63) <= value < 2**64  # numpy turns a larger int into an object array and fails
    return isinstance(value, float | complex)


def _surface_area(base_edge, height):
    """EvalPlus's oracle for Mbpp/581 (`_surface_Area`): the height is the pyramid's perpendicular height."""
    slant_height = math.sqrt((base_edge / 2) ** 2 + height**2)
    base_area = base_edge**2
    lateral_area = 4 * (base_edge * slant_height) / 2
    total_surface_area = base_area + lateral_area
    return round(total_surface_area)


def _digit_distance_nums(num1, num2):
    """EvalPlus's oracle for Mbpp/558 (`_digit_distance_nums`): the shorter number padded with zeros."""
    str_num1, str_num2 = str(num1), str(num2)
    max_length = max(len(str_num1), len(str_num2))
    str_num1, str_num2 = str_num1.zfill(max_length), str_num2.zfill(max_length)
    total_difference = 0
    for digit1, digit2 in zip(str_num1, str_num2, strict=True):
        difference = abs(int(digit1) - int(digit2))
        total_difference += difference
    return total_difference


def _poly(xs, x):
    """EvalPlus's oracle for HumanEval/32 (`_poly`): the polynomial with coefficients `xs` at `x`."""
    return sum([coeff * math.pow(x, i) for i, coeff in enumerate(xs)])
