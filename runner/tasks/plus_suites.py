"""The suites of EvalPlus tasks built from tables of inputs: every input against its expected output, as EvalPlus.

The `properties` suite holds EvalPlus's plus inputs; for MBPP+ the `hidden` suite holds its base inputs and the
`visible` suite the prompt's own example (TABLE_SUITES). A suite's source is small; the inputs, expected
outputs and per-input limits travel as a data file that the suite reads before the candidate runs. MBPP+
inputs get EvalPlus's argument types back (MBPP_INPUT_TYPES); every output is judged by EvalPlus's rules
(runner/suites/evalplus_match.py, with the table of which task takes which rule in tasks.evalplus_rules).
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

from runner.outcome import CPU_WAIT_MARKER, STARVED_SHARE
from runner.suites import evalplus_match
from runner.tasks import plus_oracle
from runner.tasks.evalplus_rules import DEFAULT_RULE, needs_arguments
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
_RULE = {rule!r}
_loads, _clock, _setitimer, _TIMER = _pickle.loads, _time.perf_counter, _signal.setitimer, _signal.ITIMER_REAL
_type = type
with open(_os.path.join(_os.path.dirname(__file__), {data_file!r}), "rb") as _handle:
    _ROWS = _loads(_handle.read())  # read at collection, before the candidate runs; immutable (tuples, bytes)


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


{match}

def _brief(value, size=200):
    try:
        text = repr(value)
    except ValueError:  # an int over 4,300 digits
        return f"an int of {{value.bit_length()}} bits"
    return text if len(text) <= size else text[:size - 3] + "..."


def _shown(args):
    return _brief(_loads(args))


def {test_name}():
    previous = _signal.signal(_signal.SIGALRM, _alarm)
    waited = _cpu_wait()
    tol = _ATOL
    try:
        for index, (args, expected, limit) in enumerate(_ROWS):
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
                message = f"{label} #{{index}} {{_shown(args)}}: over its {{limit:.2f}} s limit"
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

_CHECK = """\
            if _type(expected) is str:  # too large to store: compared by digest, exactly
                assert _digest(got) == expected, (f"{label} #{{index}} {{_shown(args)}}: by digest, got "
                                                  f"{{_brief(got, 80)}}, not the output expected (too large to store)")
                continue
{load}
            assert ok, f"{label} #{{index}} {{_shown(args)}}: the canonical solution raised {{want}}"
            passed, tol = _evalplus_match(_RULE, got, want, {arguments}, tol)
            assert passed, f"{label} #{{index}} {{_shown(args)}}: got {{got!r}}, expected {{want!r}}{how}"
"""
_LOAD = "            ok, want = _loads(expected)"
_LOAD_OR_COMPUTE = """\
            if _type(expected) is tuple and _digest_pickle(got) == expected[0]:
                continue  # too large to store, but pickled exactly as the expected output was: equal to it
            if _type(expected) is bytes and expected:
                ok, want = _loads(expected)
            else:  # too large to store, and not matched by its pickle: the reference computes it here
                ok, want = True, reference.{entry_point}(*_loads(args))"""
_HOW = {
    "not_none": " (as whether the output is not None; a bool output compared exactly)",
    "set": " (as sets)",
    "root": " (`expected` unused: poly(xs, output) must be within the task's atol of 0)",
}
"""What a failure message adds for a rule that does not compare the output with the expected one exactly."""


@dataclasses.dataclass(frozen=True)
class SuiteTable:
    """One suite built from a table of inputs: its data file, what its failures call an input, its test's name."""

    data_file: str
    label: str
    test_name: str


TABLE_SUITES = {
    "properties": SuiteTable(DATA_FILE, "plus input", "test_plus_inputs"),
    "hidden": SuiteTable("base_inputs.pkl", "base input", "test_base_inputs"),
    "visible": SuiteTable("example_inputs.pkl", "example", "test_examples"),
}
"""The suites an EvalPlus task may build from a table (tasks.plus_oracle): EvalPlus's plus inputs, its base
inputs (MBPP+), and the prompt's own examples (MBPP+), each judged by the task's rule (tasks.evalplus_rules)."""


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


def mbpp_input_conversion(task_id: str) -> str:
    """The expression rebuilding an MBPP+ plus input's arguments for this task ("args" if none is needed)."""
    number = int(task_id.rsplit("/", 1)[-1])
    return next((expr for expr, numbers in MBPP_INPUT_TYPES.items() if number in numbers), "args")


def differential_suite(
    entry_point: str, atol: float, rule: str = DEFAULT_RULE, computes_expected: bool = False, suite: str = "properties"
) -> str:
    """Pytest source checking the candidate on every input of a table against the expected outputs, as EvalPlus.

    The inputs, expected outputs and per-input time limits come from the job's data file of `suite`
    (TABLE_SUITES; computed once from the reference, tasks.plus_oracle); each output is judged by
    `_evalplus_match` (runner/suites/evalplus_match.py) under `rule` (tasks.evalplus_rules). A candidate over
    an input's limit fails with PlusInputTimeout. Only with `computes_expected` (a table that leaves some
    expected outputs to the suite) does the suite name the reference, so only then does the job carry it.
    """
    table = TABLE_SUITES[suite]
    load = (_LOAD_OR_COMPUTE if computes_expected else _LOAD).format(entry_point=entry_point)
    arguments = "_loads(args)" if needs_arguments(rule) else "None"
    check = _CHECK.format(load=load, label=table.label, arguments=arguments, how=_HOW.get(rule, ""))
    return _DIFFERENTIAL.format(
        atol=float(atol),
        entry_point=entry_point,
        check=check,
        rule=rule,
        match=_match_source(),
        data_file=table.data_file,
        label=table.label,
        test_name=table.test_name,
        starved_share=STARVED_SHARE,
        waited_marker=CPU_WAIT_MARKER,
    )


@functools.cache
def _match_source() -> str:
    """The source of runner/suites/evalplus_match.py, inlined into every table suite."""
    return Path(evalplus_match.__file__).read_text(encoding="utf-8")


def with_plus_data(tasks: list[Task], requests: dict[str, dict[str, plus_oracle.OracleRequest]],
                   cache_dir: str | Path = plus_oracle.DEFAULT_CACHE) -> list[Task]:  # fmt: skip
    """The tasks with the tables of `requests` (task id -> suite name -> request) attached: each suite named
    there becomes the differential_suite of its table, its data file is shipped, and the task's time limit is
    the largest suite's."""
    wanted = [(task.id, suite) for task in tasks for suite in requests.get(task.id, {})]
    tables = plus_oracle.oracles([requests[task_id][suite] for task_id, suite in wanted], cache_dir)
    found: dict[str, dict[str, plus_oracle.Oracle]] = {}
    for (task_id, suite), oracle in zip(wanted, tables, strict=True):
        found.setdefault(task_id, {})[suite] = oracle
    return [_with_oracles(task, requests[task.id], found[task.id]) if task.id in found else task for task in tasks]


def _with_oracles(
    task: Task, requests: dict[str, plus_oracle.OracleRequest], oracles: dict[str, plus_oracle.Oracle]
) -> Task:
    suites, files = dict(task.suites), {}
    for suite, oracle in oracles.items():
        request = requests[suite]
        suites[suite] = differential_suite(
            request.entry_point, request.atol, request.compare, oracle.computed_rows > 0, suite
        )
        files[TABLE_SUITES[suite].data_file] = oracle.table
    time_limit = max(suite_time_s(oracle) for oracle in oracles.values())
    return dataclasses.replace(task, suites=suites, files=files, time_limit_s=time_limit)
