"""Expected outputs and time limits of EvalPlus plus inputs, computed once from the trusted reference.

As EvalPlus does: the reference runs on every plus input once, in a trusted process of ours (never in
the sandbox, never again per candidate); its outputs are the expected outputs, and its own runtime
per input gives the candidate's time limit there, `max(MIN_TIME_LIMIT_S, TIME_LIMIT_FACTOR * t)`
(EvalPlus 0.3.1's `DEFAULT_MIN_TIME_LIMIT` and `DEFAULT_GT_TIME_LIMIT_FACTOR`). The result is one
pickled table per task, shipped into each job as a data file (DATA_FILE), never as suite source, and
cached by content hash under `<cache>/plus_oracle`, so later runs reuse it.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import io
import os
import pickle
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from runner.caches.content import Cache, content_key
from runner.suites.candidate_guard import digest_atom, digest_pickle

ORACLE_VERSION = "4"
"""Bump when what `compute` stores changes: it invalidates every cached table."""
TIME_LIMIT_FACTOR = 4.0
MIN_TIME_LIMIT_S = 1.0
DATA_FILE = "plus_inputs.pkl"
MAX_STORED_BYTES = 256 * 1024
"""An expected output larger than this (pickled) is not stored (Mbpp/255's outputs total 360 MB): the table
holds its digest (candidate_guard.digest_atom) where it is a str, bytes or int compared exactly; else the
digest of its pickle (candidate_guard.digest_pickle), which a candidate's output matching it passes, and the
suite has the reference compute the output in the sandbox for an output that does not match it."""
DEFAULT_CACHE = Path(".cache/runner")
"""Where tables are cached when the caller names no cache directory (the config's `cache_dir` default)."""


@dataclass(frozen=True)
class OracleRequest:
    """One task's plus inputs and how to run its reference on them."""

    reference: str
    entry_point: str
    inputs: list
    convert: str = "args"
    compare: str = "equal"
    """The task's rule (tasks.evalplus_rules): "not_none" stores whether the output is not None, "root" none."""
    atol: float = 0.0

    def key(self) -> str:
        """Content hash of everything the table depends on (the inputs by repr: a tuple is not a list)."""
        return content_key("plus_oracle", ORACLE_VERSION, self.reference, self.entry_point, repr(self.inputs),
                           self.convert, self.compare, self.atol, TIME_LIMIT_FACTOR, MIN_TIME_LIMIT_S)  # fmt: skip


@dataclass(frozen=True)
class Oracle:
    """A task's table and its time budget.

    The table is a pickled tuple of rows `(args, expected, limit_s)`: `args` the pickled argument tuple,
    `expected` the pickled `(ok, output)` (ok False: the reference raised, output its error), or for an
    output too large to store its digest (a str), a 1-tuple of its pickle's digest (the suite computes the
    output where the candidate's does not match it) or b"" (the suite computes it), `limit_s` the
    candidate's time limit on that input.
    """

    table: bytes
    reference_s: float
    """The reference's own time over all inputs."""
    computed_rows: int = 0
    """Rows whose expected output the suite may compute with the reference (b"" or a pickle digest)."""


def all_tuples(value):
    """`value` with every list turned into a tuple, recursively (MBPP+ inputs of nested tuples)."""
    return tuple(all_tuples(v) for v in value) if isinstance(value, list) else value


def compute(request: OracleRequest) -> tuple[bytes, float]:
    """Run the reference on every input: the pickled table and the reference's total seconds."""
    namespace: dict = {"__name__": "reference"}
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # benchmark code has e.g. invalid escape sequences
        exec(compile(request.reference, "reference.py", "exec"), namespace)
    function = namespace[request.entry_point]
    rows, total = [], 0.0
    for raw in request.inputs:
        args = eval(request.convert, {"_all_tuples": all_tuples}, {"args": raw})  # noqa: S307 (our own table)
        start = time.perf_counter()
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                output, ok = function(*copy.deepcopy(args)), True
        except Exception as err:  # the test then fails at this input, naming the reference's error
            output, ok = f"{type(err).__name__}: {err}", False
        seconds = time.perf_counter() - start
        total += seconds
        if request.compare == "not_none" and ok:
            output = output is not None  # e.g. a `re.Match`, which cannot be pickled
        if request.compare == "root":
            output = None  # judged by the polynomial's value at the candidate's root instead
        limit = max(MIN_TIME_LIMIT_S, TIME_LIMIT_FACTOR * seconds)
        expected = pickle.dumps((ok, output), protocol=5)
        if len(expected) > MAX_STORED_BYTES:
            expected = _digest(request, output) if ok else b""
        rows.append((pickle.dumps(args, protocol=5), expected, limit))
    return pickle.dumps(tuple(rows), protocol=5), total


def _digest(request: OracleRequest, output) -> str | tuple[str] | bytes:
    """What stands for an output too large to store: the digest of a str, bytes or int the suite compares
    exactly (plus_suites `_same`: no tolerance); else `(digest_pickle(output),)`, a fast path: a candidate's
    output with the same pickle is equal to it, any other has the reference compute the output in the suite
    (HumanEval/130's lists of a million numbers: 0.1 s each); else b"" (the suite computes it).

    No pickle digest for an output unequal to its own unpickled copy (a NaN inside), or for a comparison
    that is not by value (`not_none`) or not of the output (`root`)."""
    if request.compare == "equal" and request.atol == 0 and type(output) in (str, bytes, int):
        return digest_atom(output)
    if request.compare in ("not_none", "root"):
        return b""
    digest = digest_pickle(output)
    if digest is None or pickle.loads(pickle.dumps(output, protocol=5)) != output:
        return b""
    return (digest,)


def computed_rows(table: bytes) -> int:
    """How many rows of a table may leave their expected output to the suite (b"" or a pickle digest)."""
    return sum(1 for _, expected, _ in pickle.loads(table) if expected == b"" or type(expected) is tuple)


def oracles(requests: list[OracleRequest], cache_dir: str | Path = DEFAULT_CACHE, workers: int = 0) -> list[Oracle]:
    """The table of every request, from the cache or computed (in fresh processes, in parallel) and cached."""
    cache = Cache(cache_dir)
    keys = [request.key() for request in requests]
    found: dict[str, Oracle] = {}
    for key in dict.fromkeys(keys):
        value = cache.get("plus_oracle", key)
        if isinstance(value, dict) and "table" in value:
            found[key] = _oracle(value)
    missing = {key: request for key, request in zip(keys, requests, strict=True) if key not in found}
    for key, (table, seconds) in _compute_apart(missing, workers or os.cpu_count() or 1).items():
        value = {"table": base64.b64encode(table).decode(), "reference_s": seconds}
        value["computed_rows"] = computed_rows(table)
        found[key] = _oracle(cache.put("plus_oracle", key, value))
    return [found[key] for key in keys]


def _oracle(value: dict) -> Oracle:
    return Oracle(base64.b64decode(value["table"]), float(value["reference_s"]), int(value["computed_rows"]))


def _compute_apart(requests: dict[str, OracleRequest], workers: int) -> dict[str, tuple[bytes, float]]:
    """`compute` for each request, in `workers` fresh processes of ours (`python -m runner.tasks.plus_oracle`).

    Fresh processes: a reference must not touch the caller's state, and the caller may have threads (the
    sandbox pool's), so it must not fork. Requests go in as a pickle file, results come back as one.
    """
    if not requests:
        return {}
    print(f"computing the expected outputs of {len(requests)} task(s)' plus inputs from their references, once",
          file=sys.stderr, flush=True)  # fmt: skip
    order = sorted(requests, key=lambda key: -len(requests[key].inputs))
    shares = [order[index::workers] for index in range(min(workers, len(order)))]
    results: dict[str, tuple[bytes, float]] = {}
    with tempfile.TemporaryDirectory(prefix="plus-oracle-") as tmp:
        running = []
        for number, share in enumerate(shares):
            job, out = Path(tmp) / f"{number}.in", Path(tmp) / f"{number}.out"
            job.write_bytes(pickle.dumps({key: requests[key] for key in share}))
            command = [sys.executable, "-m", "runner.tasks.plus_oracle", str(job), str(out)]
            running.append((subprocess.Popen(command, stdout=subprocess.DEVNULL), out))
        for process, out in running:
            if process.wait() != 0 or not out.exists():
                raise RuntimeError(f"computing the expected outputs of plus inputs failed (exit {process.returncode})")
            results.update(pickle.loads(out.read_bytes()))
    return results


def suite_time_s(oracle: Oracle) -> float:
    """The properties suite's time limit: the reference's total time scaled like one input's, plus the floor.

    EvalPlus caps a task at 60 s; we do not, since a reference that alone needs more (Mbpp/599 on a loaded
    machine) would fail its own suite. The sandbox never allows less than its configured `timeout_s`.
    """
    return TIME_LIMIT_FACTOR * oracle.reference_s + MIN_TIME_LIMIT_S


if __name__ == "__main__":  # one share of `_compute_apart`: requests file in, results file out
    _requests = pickle.loads(Path(sys.argv[1]).read_bytes())
    Path(sys.argv[2]).write_bytes(pickle.dumps({key: compute(request) for key, request in _requests.items()}))
