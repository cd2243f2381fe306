"""A task's perf inputs as argument tuples: the YAML's own (explicit or generated), or picked from its plus inputs.

Generators and references are trusted task code, run here in a fresh process of ours (never in the sandbox,
never in the candidate's process, never in the caller's: it may hold threads and state). For HumanEval+ and
MBPP+ tasks without `perf_inputs`, as EvalPerf does, the inputs are the plus inputs on which the reference does
the most work: each plus input is timed on the reference (CPU time), the slowest few again twice (best of
three), and the `inputs_per_task` slowest are kept. Below COUNT_BELOW_S a time is mostly noise (the pick of
HumanEval/0, whose inputs take microseconds, changed from run to run), so inputs that fast are ranked by the
Python lines the reference executes on them (a deterministic count; CPU time breaks ties) and come after
every slower one; an input the reference does not finish within REFERENCE_LIMIT_S
is never kept. Both results are cached by content (namespace `perf_inputs`), so
the choice is made once and every later run, here or on a machine sharing the cache, uses the same inputs.
"""

from __future__ import annotations

import base64
import hashlib
import pickle
import subprocess
import sys

from runner.caches.content import Cache, content_key
from runner.tasks.model import Task
from runner.tasks.plus_oracle import DATA_FILE

VERSION = "3"
_TIMEOUT_S = 600.0
REFERENCE_LIMIT_S = 2.0
COUNT_BELOW_S = 0.01
"""A plus input on which the reference runs longer than this is not chosen: counted under valgrind (20-50x
slower) it would take minutes, for the reference and every answer (HumanEval/55's exponential recursion)."""

_GENERATE = """
import pickle, sys
jobs = pickle.loads(sys.stdin.buffer.read())
out = []
for source, size in jobs:
    namespace = {"__name__": "perf_generator"}
    exec(compile(source, "perf_generator.py", "exec"), namespace)
    args = namespace["generate"](size)
    if not isinstance(args, (list, tuple)):
        raise SystemExit(f"generate({size}) returned {type(args).__name__}, not the list of arguments")
    out.append(tuple(args))
sys.stdout.buffer.write(pickle.dumps(out, protocol=4))
"""

_SELECT = """
import contextlib, copy, io, pickle, signal, sys, time, warnings
reference, entry, rows, keep, limit_s, count_below_s = pickle.loads(sys.stdin.buffer.read())

class OverLimit(BaseException):
    pass

def alarm(signum, frame):
    raise OverLimit

signal.signal(signal.SIGALRM, alarm)
namespace = {"__name__": "reference"}
with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
    warnings.simplefilter("ignore")
    exec(compile(reference, "reference.py", "exec"), namespace)
function = namespace[entry]

def run(index, limit, tracer=None):
    args = copy.deepcopy(pickle.loads(rows[index]))
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            sys.settrace(tracer)
            try:
                function(*args)
            finally:
                sys.settrace(None)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)

def seconds(index):
    start = time.process_time()
    try:
        run(index, limit_s)
    except (Exception, OverLimit):
        return -1.0  # the reference raises on it, or is too slow to measure under valgrind: not chosen
    return time.process_time() - start

lines = 0

def count_line(frame, event, arg):
    global lines
    if event == "line":
        lines += 1
    return count_line

def lines_run(index):
    global lines
    lines = 0
    try:
        run(index, 20 * limit_s, count_line)
    except (Exception, OverLimit):
        pass  # counted so far: still a lower bound of the work
    return lines

timed = {index: seconds(index) for index in range(len(rows))}
heavy = sorted((i for i in timed if timed[i] >= count_below_s), key=lambda i: -timed[i])[: 3 * keep]
for index in heavy:
    timed[index] = min(timed[index], seconds(index), seconds(index))
chosen = sorted(heavy, key=lambda i: (-timed[i], i))[:keep]
if len(chosen) < keep:
    light = [i for i in timed if 0 <= timed[i] < count_below_s]
    counted = {index: lines_run(index) for index in light}
    chosen += sorted(light, key=lambda i: (-counted[i], -timed[i], i))[: keep - len(chosen)]
sys.stdout.buffer.write(pickle.dumps(sorted(chosen)))
"""


def _fresh_python(code: str, payload: object, what: str) -> object:
    """Run `code` in a fresh Python of ours with `payload` pickled on stdin; its pickled stdout."""
    try:
        done = subprocess.run([sys.executable, "-I", "-c", code], input=pickle.dumps(payload, protocol=4),
                              capture_output=True, timeout=_TIMEOUT_S)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise ValueError(f"{what} took over {_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ValueError(f"{what} failed: {said[-1] if said else f'exit code {done.returncode}'}")
    return pickle.loads(done.stdout)


def _cached(cache: Cache | None, key: str, compute):
    """A pickled value from the cache under `key`, or computed and stored."""
    if cache is not None:
        found = cache.get("perf_inputs", key)
        if isinstance(found, dict) and "pickle" in found:
            return pickle.loads(base64.b64decode(found["pickle"]))
    value = compute()
    if cache is not None:
        stored = cache.put("perf_inputs", key, {"pickle": base64.b64encode(pickle.dumps(value, protocol=4)).decode()})
        value = pickle.loads(base64.b64decode(stored["pickle"]))
    return value


def declared_arguments(task: Task, cache: Cache | None = None) -> list[tuple]:
    """The argument tuples of the task's own `perf_inputs`, generators run (raises ValueError naming the task)."""
    jobs = [(item.generator, item.size) for item in task.perf_inputs if item.generator]
    generated: list[tuple] = []
    if jobs:
        key = content_key("generated", VERSION, jobs)
        generated = list(_cached(cache, key, lambda: _fresh_python(_GENERATE, jobs, f"{task.id}: a perf generator")))
    made = iter(generated)
    return [tuple(item.args) if not item.generator else next(made) for item in task.perf_inputs]


def selected_arguments(task: Task, keep: int, cache: Cache | None = None) -> list[tuple]:
    """The `keep` plus inputs of the task on which its reference does the most work (in their table's order)."""
    rows = [row[0] for row in pickle.loads(task.files[DATA_FILE])]
    table = hashlib.sha256(task.files[DATA_FILE]).hexdigest()
    key = content_key("selected", VERSION, task.reference, task.entry_point, table, keep)
    what = f"{task.id}: timing the reference on its plus inputs"
    payload = (task.reference, task.entry_point, rows, keep, REFERENCE_LIMIT_S, COUNT_BELOW_S)
    chosen = _cached(cache, key, lambda: _fresh_python(_SELECT, payload, what))
    return [tuple(pickle.loads(rows[index])) for index in chosen]


def perf_arguments(task: Task, inputs_per_task: int, cache: Cache | None = None) -> list[tuple]:
    """The task's perf inputs as argument tuples: its declared ones, else picked from its plus inputs, else none."""
    if task.perf_inputs:
        return declared_arguments(task, cache)
    if DATA_FILE in task.files and inputs_per_task > 0:
        return selected_arguments(task, inputs_per_task, cache)
    return []
