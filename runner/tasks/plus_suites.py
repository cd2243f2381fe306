"""The EvalPlus `properties` suite: every plus input against its expected output, like EvalPlus.

The suite's source is small; the inputs, expected outputs and per-input limits travel as a data file
(plus_oracle.DATA_FILE) that the suite reads before the candidate runs. MBPP+ inputs get EvalPlus's
argument types back and its loose comparisons (MBPP_INPUT_TYPES, MBPP_COMPARISONS).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from runner.outcome import CPU_WAIT_MARKER, STARVED_SHARE
from runner.tasks import plus_oracle
from runner.tasks.model import Task
from runner.tasks.plus_oracle import DATA_FILE, suite_time_s

_DIFFERENTIAL = """
import os as _os
import pickle as _pickle
import resource as _resource
import signal as _signal
import time as _time

from candidate_guard import digest_atom as _digest, digest_pickle as _digest_pickle

_ATOL = {atol!r}
_COMPARE = {compare!r}
_loads, _clock, _setitimer, _TIMER = _pickle.loads, _time.perf_counter, _signal.setitimer, _signal.ITIMER_REAL
_type = type
with open(_os.path.join(_os.path.dirname(__file__), {data_file!r}), "rb") as _handle:
    _PLUS = _loads(_handle.read())  # read at collection, before the candidate runs; immutable (tuples, bytes)


class PlusInputTimeout(Exception):
    \"\"\"The candidate took longer than this input's time limit.\"\"\"


def _cpu_wait():
    try:
        with open("/proc/self/schedstat") as handle:
            return int(handle.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def _usage():
    usage = _resource.getrusage(_resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime, usage.ru_nvcsw


def _alarm(signum, frame):
    raise PlusInputTimeout("over the input's time limit")


def _floats(value):
    if isinstance(value, float):
        return True
    return isinstance(value, list | tuple) and len(value) > 0 and all(isinstance(v, float) for v in value)


def _close(got, want, tol):
    if isinstance(want, list | tuple):
        return type(got) is type(want) and len(got) == len(want) and all(
            _close(g, w, tol) for g, w in zip(got, want)
        )
    if isinstance(want, bool) or not isinstance(want, int | float):
        return got == want
    if not isinstance(got, int | float) or isinstance(got, bool):
        return False
    if math.isnan(want):
        return math.isnan(got)
    return abs(got - want) <= tol + 1e-7 * abs(want)


def _same(got, want):
    if _COMPARE == "not_none":
        return (got is None) == (not want)
    if _COMPARE == "set":
        return set(got) == set(want)
    if got == want:
        return True
    tol = _ATOL if _ATOL else (1e-6 if _floats(want) else 0)
    return tol != 0 and type(got) is type(want) and _close(got, want, tol)


def _brief(value, size=200):
    try:
        text = repr(value)
    except ValueError:  # an int over 4,300 digits
        return f"an int of {{value.bit_length()}} bits"
    return text if len(text) <= size else text[:size - 3] + "..."


def _shown(args):
    return _brief(_loads(args))


def test_plus_inputs():
    previous = _signal.signal(_signal.SIGALRM, _alarm)
    waited = _cpu_wait()
    try:
        for index, (args, expected, limit) in enumerate(_PLUS):
            _setitimer(_TIMER, limit)
            start, (cpu, sleeps) = _clock(), _usage()
            try:
                got = {entry_point}(*_loads(args))
            except PlusInputTimeout:
                got = None  # the alarm: reported below, with the input
            finally:
                _setitimer(_TIMER, 0)
            seconds = _clock() - start
            if seconds > limit:
                now, slept = _usage()
                used = now - cpu
                message = f"plus input #{{index}} {{_shown(args)}}: over its {{limit:.2f}} s limit"
                message += f" ({{seconds:.2f}} s, {{used:.2f}} s of CPU)"
                waited = _cpu_wait() - waited  # in the run queue since the test started: one read per test
                if slept == sleeps and seconds - used >= {starved_share!r} * limit:
                    waited = max(waited, seconds - used)  # it never slept: the machine held it off the CPU
                if waited >= {starved_share!r} * limit:
                    message += f"{waited_marker}{{waited:.2f}} s"
                raise PlusInputTimeout(message)
{check}
    finally:
        _signal.signal(_signal.SIGALRM, previous)
"""

_CHECK_EQUAL = """\
            if _type(expected) is str:  # too large to store: compared by digest, exactly
                assert _digest(got) == expected, (f"plus input #{{index}} {{_shown(args)}}: by digest, got "
                                                  f"{{_brief(got, 80)}}, not the output expected (too large to store)")
                continue
{load}
            assert ok, f"plus input #{{index}} {{_shown(args)}}: the canonical solution raised {{want}}"
            assert _same(got, want), f"plus input #{{index}} {{_shown(args)}}: got {{got!r}}, expected {{want!r}}"
"""
_LOAD = "            ok, want = _loads(expected)"
_LOAD_OR_COMPUTE = """\
            if _type(expected) is tuple and _digest_pickle(got) == expected[0]:
                continue  # too large to store, but pickled exactly as the expected output was: equal to it
            if _type(expected) is bytes and expected:
                ok, want = _loads(expected)
            else:  # too large to store, and not matched by its pickle: the reference computes it here
                ok, want = True, reference.{entry_point}(*_loads(args))"""

_CHECK_ROOT = """\
            value = reference.poly(*_loads(args), got)
            message = f"plus input #{{index}} {{_shown(args)}}: poly(xs, {{got!r}}) = {{value}}"
            assert abs(value) <= (_ATOL or 1e-6), message
"""


MBPP_INPUT_TYPES = {
    "[tuple(a) for a in args]": (2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596, 616,
                                 630, 726, 740, 744, 809),
    "[[tuple(x) for x in a] for a in args]": (63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780),
    "[[tuple(x) for x in args[0]], *args[1:]]": (75, 413, 444, 753),
    "[args[0], tuple(args[1]), *args[2:]]": (106, 750),
    "[[set(x) if isinstance(x, list) and x else {} for x in args[0]]]": (115,),
    "[float(args[0]), complex(args[1])]": (124,),
    "[tuple(args[0]), *args[1:]]": (250, 307, 405, 446, 617, 720, 763, 808),
    "[tuple(tuple(x) for x in a) for a in args]": (259, 401, 445),
    "[tuple(tuple(x) if isinstance(x, list) else x for x in args[0])]": (278,),
    "[{k: tuple(v) for k, v in args[0].items()}, *args[1:]]": (722,),
    "[complex(args[0])]": (252,),
    "_all_tuples(args)": (580, 615, 791),
}  # fmt: skip
"""MBPP+ stores its plus inputs as JSON, which has no tuples, sets or complex numbers; EvalPlus turns
them back into the types the task takes before calling anything. Each entry: the Python expression
that rebuilds one input's argument list `args`, and the MBPP task numbers it applies to."""


MBPP_COMPARISONS = {
    "not_none": ("check_str", "text_match_three", "text_starta_endb"),
    "set": ("similar_elements", "find_char_long", "common_in_nested_lists", "extract_singly", "larg_nnum",
            "intersection_array", "find_dissimilar", "Diff"),
}  # fmt: skip
"""MBPP+ entry points whose outputs EvalPlus compares loosely: by whether they are None (regex matches)
or as sets (the order of the elements is not specified)."""


def mbpp_comparison(entry_point: str) -> str:
    """How outputs of this MBPP+ entry point are compared: "equal", "not_none" or "set"."""
    return next((mode for mode, names in MBPP_COMPARISONS.items() if entry_point in names), "equal")


def mbpp_input_conversion(task_id: str) -> str:
    """The expression rebuilding an MBPP+ plus input's arguments for this task ("args" if none is needed)."""
    number = int(task_id.rsplit("/", 1)[-1])
    return next((expr for expr, numbers in MBPP_INPUT_TYPES.items() if number in numbers), "args")


def differential_suite(entry_point: str, atol: float, compare: str = "equal", computes_expected: bool = False) -> str:
    """Pytest source checking the candidate on every plus input against the expected outputs, like EvalPlus.

    The inputs, expected outputs and per-input time limits come from the job's data file
    (plus_oracle.DATA_FILE, computed once from the reference); `compare` is "equal", "not_none" or
    "set" (MBPP_COMPARISONS). A candidate over an input's limit fails with PlusInputTimeout. Only with
    `computes_expected` (a table that leaves some expected outputs to the suite) or for HumanEval's
    `find_zero` (judged by the value of the task's `poly`) does the suite name the reference, so only
    then does the job carry it.
    """
    load = (_LOAD_OR_COMPUTE if computes_expected else _LOAD).format(entry_point=entry_point)
    template = _CHECK_ROOT if entry_point == "find_zero" else _CHECK_EQUAL
    check = template.format(entry_point=entry_point, load=load)
    return _DIFFERENTIAL.format(atol=float(atol), entry_point=entry_point, check=check, compare=compare,
                                data_file=DATA_FILE, starved_share=STARVED_SHARE,
                                waited_marker=CPU_WAIT_MARKER)  # fmt: skip


def with_plus_data(tasks: list[Task], requests: dict[str, plus_oracle.OracleRequest],
                   cache_dir: str | Path = plus_oracle.DEFAULT_CACHE) -> list[Task]:  # fmt: skip
    """The tasks with the plus-input table of each task in `requests` attached, its `properties` suite
    (differential_suite, for that table) and the suite's time limit."""
    ids = [task.id for task in tasks if task.id in requests]
    found = dict(zip(ids, plus_oracle.oracles([requests[i] for i in ids], cache_dir), strict=True))
    return [_with_oracle(task, requests[task.id], found[task.id]) if task.id in found else task for task in tasks]


def _with_oracle(task: Task, request: plus_oracle.OracleRequest, oracle: plus_oracle.Oracle) -> Task:
    suite = differential_suite(request.entry_point, request.atol, request.compare, oracle.computed_rows > 0)
    return dataclasses.replace(task, suites={**task.suites, "properties": suite}, files={DATA_FILE: oracle.table},
                               time_limit_s=suite_time_s(oracle))  # fmt: skip
