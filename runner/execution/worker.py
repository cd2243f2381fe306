"""The warm worker: a long-lived trusted process that forks one confined child per job.

Started by `WorkerPool` as `python -P -m runner.execution.worker`. It imports pytest, hypothesis
and a generous set of stdlib modules once (and warms them up with a real pytest session), leases
its own sandbox uid, then serves jobs read from stdin (length-prefixed pickles; replies on the
original stdout). For each job it writes nothing the child can change, forks one child that runs
every suite file in one pytest session, supervises it (per suite: wall clock and CPU from the
suite's first test, output cap; the channel says which suite runs), kills everything the child left
behind and judges each suite from its share of the verdict channel alone (see `suite_facts`,
`verdict_for`). A suite the session never reached because an earlier one was killed is ERROR with
its tests missing ("not run: an earlier suite was killed"). If the candidate's code starts before
collection has finished (a suite imports it eagerly), the session is abandoned and each suite runs
in a session of its own, as later files could otherwise be tampered with while they are imported.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import os
import pickle
import re
import secrets
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from runner.execution import compile_cache, huge_pages, isolation, pytest_child
from runner.execution.limits import Limits
from runner.execution.outcome import Outcome, SuiteResult, TestResult
from runner.execution.sandbox import read_frame, write_frame
from runner.execution.verdict import RunFacts, expected_tests, verdict_for

PRELOAD = (
    "abc", "array", "ast", "base64", "binascii", "bisect", "calendar", "cmath", "codecs", "collections",
    "collections.abc", "concurrent.futures", "contextlib", "copy", "csv", "ctypes", "dataclasses",
    "datetime", "decimal", "difflib", "dis", "enum", "errno", "fnmatch", "fractions", "functools", "gc",
    "glob", "graphlib", "hashlib", "heapq", "hmac", "html", "inspect", "io", "itertools", "json",
    "keyword", "linecache", "locale", "math", "numbers", "operator", "pathlib", "pprint", "queue",
    "random", "re", "secrets", "select", "shutil", "signal", "socket", "statistics", "string", "struct",
    "subprocess", "tempfile", "textwrap", "threading", "time", "tokenize", "traceback", "types",
    "typing", "unicodedata", "unittest", "unittest.mock", "uuid", "warnings", "weakref", "zlib",
    "zoneinfo", "encodings.idna", "encodings.ascii", "encodings.latin_1",
)  # fmt: skip
PRELOAD_SKIP = ("hypothesis.extra.", "provider_conformance", "__main__")
"""Optional-dependency and slow tool modules of hypothesis (pytest and hypothesis import what they use)."""
STDLIB_GATE = Path(__file__).resolve().parents[2] / "conf" / "gate" / "stdlib.yaml"
WARMUP_EXAMPLES = 5
"""Examples per property in the warm-up run: enough to load every lazily imported module, shrinking included."""
WARMUP_SUITE = """
import collections, heapq, math
import pytest
from hypothesis import given, settings, strategies as st
from candidate import add

def test_pass():
    assert add(1, 2) == 3 and heapq.nsmallest(1, [3, 1]) == [1] and pytest.approx(0.3) == 0.1 + 0.2

@pytest.mark.parametrize("a", [1, 2])
def test_param(a, tmp_path, capsys, monkeypatch):
    print(a)
    with pytest.raises(ZeroDivisionError):
        1 / 0
    assert collections.Counter("aab")["a"] == 2

def test_fail():
    assert {"a": [1, 2]} == {"a": [1, 3]}

def test_error():
    raise KeyError("x")

@given(st.lists(st.integers()), st.text(), st.dictionaries(st.integers(), st.floats()),
       st.tuples(st.booleans(), st.sets(st.integers())))
def test_property(xs, s, d, t):
    assert add(sum(xs), 0) == sum(xs)

@given(st.integers(10, 20), st.booleans())
def test_property_fails(x, b):
    assert x < 5

def test_skip():
    pytest.skip("no")

@pytest.mark.xfail(strict=False)
def test_xfail():
    assert False

class TestClass:
    def test_method(self):
        with pytest.warns(UserWarning):
            import warnings
            warnings.warn("w")
"""


# ---------------------------------------------------------------- one session run


def _child(test_paths: list[str], place: JobPlace, slot, limits: Limits, res_w: int, out_w: int, nonce: str):
    """In the forked child: plumb fds, confine, run the prepared pytest session, exit. Never returns."""
    try:
        result_fd = os.dup(res_w)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(out_w, 2)
        os.dup2(result_fd, 3)
        os.closerange(4, 65536)  # nothing of the worker's protocol or lock files stays reachable
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        # The CPU limit holds per suite: the worker lowers the soft limit as each suite starts.
        session_limits = dataclasses.replace(limits, cpu_s=limits.cpu_s * len(test_paths))
        applied = isolation.confine(session_limits, slot, place.scratch)
        channel = pytest_child.Channel(3, nonce)
        channel.send({"k": "isolation", "applied": applied})
        os.chdir(place.scratch)
        sys.path[:] = [p for p in sys.path if p and p != "."]
        pytest_child.run_prepared(place.prepared, test_paths, channel)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    except BaseException:
        try:
            traceback.print_exc()
            sys.stderr.flush()
        finally:
            os._exit(70)


def decode_message(text: str) -> dict:
    """Decode one channel message; it must be a JSON object with a string kind."""
    import json

    value = json.loads(text)
    if not isinstance(value, dict) or not isinstance(value.get("k"), str):
        raise ValueError("not a message")
    if value["k"] in ("report", "start", "collect") and not isinstance(value.get("id"), str):
        raise ValueError("message without a node id")
    if value["k"] == "report" and value.get("when") not in ("setup", "call", "teardown"):
        raise ValueError("report without a phase")
    if value["k"] == "suite_done" and not isinstance(value.get("file"), str):
        raise ValueError("suite end without a file")
    return value


def _drain(fds: list[int], sinks: dict[int, bytearray], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    for fd in fds:
        os.set_blocking(fd, False)
    open_fds = list(fds)
    while open_fds and time.monotonic() < deadline:
        ready, _, _ = select.select(open_fds, [], [], max(0.0, deadline - time.monotonic()))
        for fd in ready:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                open_fds.remove(fd)
            else:
                sinks[fd] += chunk


@dataclass
class SessionFacts:
    """What the trusted side observed of one session over several suite files (in order)."""

    files: list[str]
    messages: list[tuple[int, dict]] = field(default_factory=list)
    """(index of the suite running when the message arrived, or -1 during collection; message)"""
    violations: list[str] = field(default_factory=list)
    timed_out: bool = False
    output_exceeded: bool = False
    cpu_exceeded: bool = False
    status: int | None = None
    output: bytes = b""
    output_marks: dict[int, int] = field(default_factory=dict)
    """Offset in `output` at which each suite (by index) started."""
    leftovers: bool = False
    running: int = -1
    """The suite that was running when the session ended (-1: none had started)."""
    nonce: str = ""
    pending: bytes = b""
    first_of_collection: str | None = None
    """Which came first on the channel: "armed" (the candidate started) or "collected" (all files are)."""

    def feed(self, data: bytes) -> None:
        """Parse complete channel lines; a `start` of a new file moves `running` on."""
        lines = (self.pending + data).split(b"\n")
        self.pending = lines.pop()
        prefix = self.nonce + " "
        for raw in lines:
            if not raw:
                continue
            line = raw.decode("utf-8", "replace")
            if not line.startswith(prefix):
                self.violations.append("an unauthenticated message on the verdict channel")
                continue
            try:
                message = decode_message(line[len(prefix) :])
            except ValueError:
                self.violations.append("a malformed message on the verdict channel")
                continue
            if message["k"] in ("armed", "collected") and self.first_of_collection is None:
                self.first_of_collection = message["k"]
            if message["k"] == "start":
                index = self.suite_of(message["id"])
                if index is not None and index != self.running:
                    if index < self.running:
                        self.violations.append("a suite started again after a later one")
                    self.running = index
            self.messages.append((self.running, message))

    def suite_of(self, nodeid: str) -> int | None:
        """Index of the suite file a node id belongs to, or None."""
        name = nodeid.split("::", 1)[0]
        return self.files.index(name) if name in self.files else None

    def candidate_ran_during_collection(self) -> bool:
        """True when the candidate's code started before collection of every file had finished."""
        return self.first_of_collection == "armed"


def _cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _kill_strays(pid: int, slot, limits: Limits) -> None:
    """Kill every process of the sandbox except the session's child itself."""
    strays = isolation.processes_of_uid(slot.uid, exclude=pid) if limits.drop_privileges else None
    for other in isolation.leftover_processes(slot) if strays is None else strays:
        if other != pid:
            try:
                os.kill(other, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def run_session(test_paths: list[str], place: JobPlace, slot, limits: Limits) -> SessionFacts:
    """Fork one confined child for a job's suite files and supervise it to the end.

    Each suite may run `timeout_s` wall clock and `cpu_s` CPU from its first test's start, and write
    `max_output_kb`; the whole session may run `timeout_s` per suite.
    """
    count = len(test_paths)
    facts = SessionFacts(files=[os.path.basename(p) for p in test_paths], nonce=secrets.token_hex(16))
    res_r, res_w = os.pipe()
    out_r, out_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(res_r)
        os.close(out_r)
        _child(test_paths, place, slot, limits, res_w, out_w, facts.nonce)
    os.close(res_w)
    os.close(out_w)
    pidfd = os.pidfd_open(pid)
    cap = limits.max_output_kb * 1024
    channel_bytes = 0
    output = bytearray()
    watched = [res_r, out_r, pidfd]
    start = time.monotonic()
    session_deadline = start + limits.timeout_s * count
    suite_deadline = session_deadline
    running, cpu_start, cores = -1, 0.0, os.cpu_count() or 1
    next_cpu_read = session_deadline  # CPU time cannot run out sooner than `cpu_left / cores` wall seconds
    while facts.status is None:
        now = time.monotonic()
        remaining = min(session_deadline, suite_deadline) - now
        if remaining <= 0:
            facts.timed_out = True
            break
        if running >= 0 and now >= next_cpu_read:  # the suite's CPU time (RLIMIT_CPU covers the whole session)
            cpu_left = limits.cpu_s - ((_cpu_seconds(pid) or cpu_start) - cpu_start)
            if cpu_left <= 0:
                facts.cpu_exceeded = True
                break
            next_cpu_read = now + max(0.02, cpu_left / cores)
        ready, _, _ = select.select(watched, [], [], max(0.0, min(remaining, next_cpu_read - now)))
        for fd in ready:
            if fd == pidfd:
                facts.status = os.waitpid(pid, 0)[1]
                watched.remove(pidfd)
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                watched.remove(fd)
            elif fd == res_r:
                channel_bytes += len(chunk)
                facts.feed(chunk)
            else:
                output += chunk
        if facts.running != running:
            running = facts.running
            facts.output_marks[running] = len(output)
            suite_deadline = time.monotonic() + limits.timeout_s
            cpu_start = _cpu_seconds(pid) or 0.0
            next_cpu_read = time.monotonic() + limits.cpu_s / cores
            if running > 0:  # what the candidate started during an earlier suite does not outlive it
                _kill_strays(pid, slot, limits)
        if len(output) - facts.output_marks.get(running, 0) > cap or len(output) > cap * count:
            facts.output_exceeded = True
            break
        if channel_bytes > 8 << 20:
            facts.violations.append("the verdict channel was flooded")
            break
        if count > 1 and facts.candidate_ran_during_collection():
            break  # the caller runs each suite on its own; no time is spent on this session
    if facts.status is None:
        os.kill(pid, signal.SIGKILL)
        facts.status = os.waitpid(pid, 0)[1]
    facts.leftovers = not isolation.kill_everything(pid, slot)
    sinks = {res_r: bytearray(), out_r: bytearray()}
    _drain([res_r, out_r], sinks, 0.5)
    os.close(pidfd)
    os.close(res_r)
    os.close(out_r)
    facts.feed(bytes(sinks[res_r]) + b"\n")
    output += sinks[out_r]
    if facts.timed_out or facts.output_exceeded or facts.cpu_exceeded:
        facts.running = max(running, facts.running)
    facts.output = bytes(output)
    return facts


# ---------------------------------------------------------------- one session -> one result per suite

NOT_RUN = "not run: an earlier suite was killed"


def suite_facts(session: SessionFacts, index: int) -> RunFacts | None:
    """The observations that concern suite `index` of the session, or None if it never started.

    Tampering found by the checks at the end of a suite, or reported while it ran, counts for that
    suite and every later one; channel violations, leftover processes and a candidate that could not
    be loaded count for all. A suite is closed by its own `suite_done` message.
    """
    name = session.files[index]
    facts = RunFacts(violations=list(session.violations), leftovers=session.leftovers)
    started = {session.suite_of(m["id"]) for _, m in session.messages if m["k"] == "start"}
    closed, session_done, load = False, None, None
    for running, message in session.messages:
        kind = message["k"]
        load = load or (message.get("load") if kind in ("suite_done", "done") else None)
        if kind in ("report", "start", "collect"):
            owner = session.suite_of(message["id"])
            if owner == index or (kind == "collect" and owner is None):
                facts.messages.append(message)
        elif kind == "suite_done":
            owner = session.suite_of(message["file"])
            if owner is None:
                facts.violations.append("the end of an unknown suite")
            elif session.files[owner] == name:
                closed = True
                facts.messages.append({"k": "done", "exit": 0, "tamper": message.get("tamper", [])})
            elif owner < index:  # what the checks found then still counts
                facts.messages += [{"k": "tamper", "why": why} for why in message.get("tamper", [])]
        elif kind in ("tamper", "internal"):
            if running <= index:
                facts.messages.append(message)
        elif kind == "done":
            session_done = message
        elif kind == "isolation":
            facts.messages.append(message)
    if session_done is not None:
        if closed:
            if index >= max(session.running, 0) or index not in started:
                facts.messages += [{"k": "tamper", "why": why} for why in session_done.get("tamper", [])]
        elif index not in started or index >= session.running:
            facts.messages.append(session_done)
    if load:
        facts.messages.append({"k": "load", "why": load})
    facts.messages = [_redact(m, session.files, index) for m in facts.messages]
    ended = session.timed_out or session.output_exceeded or session.cpu_exceeded or session_done is None
    if ended and not closed and index not in started and 0 <= session.running < index:
        return None
    if closed and index != session.running:
        facts.status = 0
    else:
        facts.timed_out, facts.output_exceeded = session.timed_out, session.output_exceeded
        facts.cpu_exceeded = session.cpu_exceeded
        facts.status = session.status
    return facts


def _redact(message: dict, files: list[str], index: int) -> dict:
    """Tampering found in another suite's module is reported without naming it (hidden names stay hidden)."""
    others = [Path(f).stem for i, f in enumerate(files) if i != index]
    if message["k"] == "tamper" and any(o in str(message.get("why", "")) for o in others):
        return {"k": "tamper", "why": "another suite's module or tests were changed"}
    if message["k"] == "done" and any(o in str(w) for o in others for w in message.get("tamper", [])):
        tamper = [w if not any(o in str(w) for o in others) else "another suite's module or tests were changed"
                  for w in message.get("tamper", [])]  # fmt: skip
        return {**message, "tamper": tamper}
    return message


def _suite_output(session: SessionFacts, index: int, cap: int) -> bytes:
    marks = session.output_marks
    begin = 0 if index == min((i for i in marks if i >= 0), default=0) else marks.get(index, len(session.output))
    later = [marks[i] for i in marks if i > index]
    end = min(later) if later else len(session.output)
    return session.output[begin:end][:cap]


# ---------------------------------------------------------------- one job

_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")


def _applied(facts: RunFacts) -> dict[str, bool]:
    for message in facts.messages:
        if message.get("k") == "isolation":
            return {k: bool(v) for k, v in message.get("applied", {}).items()}
    return {}


def run_job(files: dict[str, str], suites: tuple[tuple[str, str], ...], slot, limits: Limits, base: dict,
            place: JobPlace, rewritten: dict[str, bytes] | None = None):  # fmt: skip
    """Run a job's suites in order in one session. Returns (suite results, isolation in force, output, duration).

    If the candidate's code ran before every suite file was collected (a suite that imports it
    eagerly), the later files could have been tampered with on import: then each suite is run again
    in a session of its own.
    """
    start = time.monotonic()
    results: dict[str, SuiteResult] = {}
    in_force: dict[str, bool] = dict(base)
    outputs: list[str] = []
    bad = [name for name in files if not _SAFE_NAME.fullmatch(name) or ".." in name]
    marks = isolation.scratch_marks()
    try:
        place.clear()
        for name, source in files.items():
            if name not in bad:
                _write_readonly(os.path.join(place.test_dir, name), source)
        for name in compile_cache.TRUSTED_MODULES:
            if name in files and name not in bad:
                try:
                    compile_cache.compile_trusted(os.path.join(place.test_dir, name))
                except Exception:  # the child compiles it itself and reports whatever goes wrong
                    pass
        runnable: list[tuple[str, str, list[str]]] = []
        for suite, test_file in suites:
            if bad or test_file not in files:
                problem = f"bad file names: {bad}" if bad else f"the job has no file {test_file!r}"
                results[suite] = SuiteResult(suite, Outcome.HARNESS_ERROR, (), problem)
                continue
            try:
                expected = expected_tests(files[test_file])
            except SyntaxError as err:
                results[suite] = SuiteResult(suite, Outcome.HARNESS_ERROR, (), f"suite file does not parse: {err}")
                continue
            if any(test_file == other for _, other, _ in runnable):
                results[suite] = SuiteResult(suite, Outcome.HARNESS_ERROR, (), f"{test_file} serves two suites")
                continue
            try:
                test_path = os.path.join(place.test_dir, test_file)
                if rewritten and test_file in rewritten:
                    compile_cache.install_rewritten(test_path, rewritten[test_file])
                else:
                    compile_cache.rewrite_suite(test_path, place.prepared.config)
            except Exception:  # the child rewrites it itself and reports whatever goes wrong
                pass
            runnable.append((suite, test_file, expected))
        groups = [runnable] if runnable else []
        while groups:
            group = groups.pop(0)
            place.fresh_scratch(slot, limits)
            session = run_session([os.path.join(place.test_dir, f) for _, f, _ in group], place, slot, limits)
            if len(group) > 1 and session.candidate_ran_during_collection():
                groups = [[one] for one in group] + groups
                continue
            _judge_session(session, group, limits, results, outputs)
            applied = _applied(RunFacts(messages=[m for _, m in session.messages]))
            for key in set(in_force) | set(applied):
                in_force[key] = in_force.get(key, True) and applied.get(key, key in base)
    finally:
        place.clear()
        isolation.remove_scratch_files(slot, since=marks)
    ordered = {suite: results[suite] for suite, _ in suites if suite in results}
    return ordered, in_force, "\n".join(outputs), time.monotonic() - start


def _judge_session(session: SessionFacts, group: list, limits: Limits, results: dict, outputs: list[str]) -> None:
    """One SuiteResult per suite of a session, and each suite's share of the output."""
    cap = limits.max_output_kb * 1024
    for index, (suite, _test_file, expected) in enumerate(group):
        facts = suite_facts(session, index)
        if facts is None:
            killed = session.timed_out or session.cpu_exceeded or session.output_exceeded
            detail = NOT_RUN if killed else "not run: the session ended during an earlier suite"
            tests = tuple(TestResult(name, "missing", detail) for name in expected)
            results[suite] = SuiteResult(suite, Outcome.ERROR, tests, detail)
            continue
        results[suite] = verdict_for(suite, expected, facts, limits)
        text = _suite_output(session, index, cap).decode("utf-8", "replace")
        if text:
            if facts.output_exceeded:
                text += f"\n[output capped at {limits.max_output_kb} KB]"
            outputs.append(f"--- {suite} ---\n{text}")


class JobPlace:
    """The worker's one job directory, at a fixed path for its whole life, and the session prepared for it.

    Layout: `root/pytest.ini`, `root/t/` (the job's files, read-only, root-owned when root) and
    `root/w/` (the child's working directory, owned by the sandbox uid). The paths never change,
    so the pytest session can be configured once (`pytest_child.prepare_session`); the contents
    are wiped before and after every job and the working directory before every suite.
    """

    def __init__(self, slot, limits: Limits) -> None:
        prefix = f"runner-slot{slot.index}-"
        _remove_stale(prefix)
        self.root = tempfile.mkdtemp(prefix=prefix, dir=isolation.JOB_DIR_BASE)
        os.chmod(self.root, 0o755)
        self.test_dir = os.path.join(self.root, "t")
        self.scratch = os.path.join(self.root, "w")
        self.ini_path = os.path.join(self.root, "pytest.ini")
        os.mkdir(self.test_dir, 0o755)
        _write_readonly(self.ini_path, "[pytest]\n")
        self.fresh_scratch(slot, limits)
        self.prepared = pytest_child.prepare_session(self.test_dir, self.ini_path, self.scratch, limits)

    def clear(self) -> None:
        """Remove every job file and the working directory's contents."""
        for entry in os.scandir(self.test_dir):
            os.unlink(entry.path)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def fresh_scratch(self, slot, limits: Limits) -> None:
        """An empty working directory for the next child, owned by the sandbox uid."""
        shutil.rmtree(self.scratch, ignore_errors=True)
        os.mkdir(self.scratch, 0o700)
        if limits.drop_privileges and isolation.is_root():
            os.chown(self.scratch, slot.uid, slot.gid)

    def remove(self) -> None:
        """Delete the whole directory (when the worker ends)."""
        shutil.rmtree(self.root, ignore_errors=True)


def _remove_stale(prefix: str) -> None:
    """Remove job directories a killed worker of this slot left (the slot lock says none is alive)."""
    base = isolation.JOB_DIR_BASE or tempfile.gettempdir()
    for entry in os.scandir(base):
        try:
            mine = entry.stat(follow_symlinks=False).st_uid == os.geteuid()
            if entry.name.startswith(prefix) and mine and entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            continue


def _write_readonly(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, 0o444)


# ---------------------------------------------------------------- start-up


def preload() -> None:
    """Import everything a sandboxed child may need: it cannot read /root once it drops its uid."""
    names = list(PRELOAD)
    try:
        import yaml

        names += yaml.safe_load(STDLIB_GATE.read_text()).get("allowed_imports", [])
    except (OSError, ImportError, AttributeError):
        pass
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    import hypothesis
    import hypothesis.strategies  # noqa: F401

    import runner.strength.hypothesis_profile  # noqa: F401
    from runner.execution import candidate_guard  # noqa: F401

    for name in _submodules(hypothesis):
        try:
            importlib.import_module(name)
        except Exception:  # optional dependencies of some submodules are not installed
            pass


def _submodules(package) -> list[str]:
    """Dotted names of a package's modules, from its directory (walk_packages would import extras)."""
    root = Path(package.__file__).parent
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        name = ".".join((package.__name__, *parts))
        if not any(skip in name for skip in PRELOAD_SKIP):
            names.append(name)
    return names


def warm_up(limits: Limits) -> None:
    """One real pytest session in this process, so that lazily imported modules are loaded now."""
    root = tempfile.mkdtemp(prefix="runner-warmup-")
    cwd = os.getcwd()
    try:
        test_dir = os.path.join(root, "t")
        os.mkdir(test_dir)
        # The warm-up loads its own copy of the guard: the imported module must stay unused (load_candidate_guard).
        guard_copy = pytest_child.pristine_guard_source().decode() + "\n# the warm-up's own copy\n"
        files = {"candidate.py": "def add(a, b):\n    return a + b\n", "candidate_guard.py": guard_copy,
                 "test_w.py": WARMUP_SUITE}  # fmt: skip
        for name, text in files.items():
            Path(test_dir, name).write_text(text)
        Path(root, "pytest.ini").write_text("[pytest]\n")
        os.chdir(root)
        with open(os.devnull, "w") as sink:
            saved = os.dup(1), os.dup(2)
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            try:
                channel = pytest_child.Channel(sink.fileno(), "warmup")
                warm_limits = dataclasses.replace(limits, hypothesis_examples=WARMUP_EXAMPLES)
                pytest_child.run_suite(os.path.join(test_dir, "test_w.py"), os.path.join(root, "pytest.ini"),
                                       channel, warm_limits, audit=False)  # fmt: skip
            finally:
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
                os.close(saved[0])
                os.close(saved[1])
        pytest_child.scrub_imported(test_dir)
    finally:
        os.chdir(cwd)
        shutil.rmtree(root, ignore_errors=True)


def probe(limits: Limits, slot) -> dict[str, bool]:
    """Which protections a child actually gets here: fork one, confine it, ask."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            applied = isolation.confine(limits, slot, tempfile.gettempdir())
            os.write(write_end, pickle.dumps(applied))
        finally:
            os._exit(0)
    os.close(write_end)
    data = b""
    while chunk := os.read(read_end, 65536):
        data += chunk
    os.close(read_end)
    os.waitpid(pid, 0)
    isolation.kill_everything(pid, slot)
    return pickle.loads(data) if data else {}


# ---------------------------------------------------------------- protocol with the pool


def serve(requests, replies, limits: Limits) -> None:
    """Serve jobs from `requests` until it closes, in this warmed-up process: lease a slot, say hello, loop."""
    slot = isolation.lease_slot()
    subreaper = isolation.become_subreaper()
    isolation.kill_everything(None, slot)  # leftovers of a worker that died holding this slot
    if not limits.network:
        isolation.isolate_network()
    place = JobPlace(slot, limits)
    gc.freeze()  # the warm heap is never collected again: pytest's gc.collect() calls stay cheap
    huge_pages.collapse_heap()
    base = {"process_group_kill": subreaper, "output_cap": True}
    try:
        in_force = {**probe(limits, slot), **base}
        hello = {"ready": True, "pid": os.getpid(), "slot": slot.index, "uid": slot.uid, "isolation": in_force}
        write_frame(replies, hello)
        while True:
            job = read_frame(requests)
            if job is None:
                return
            files, suites, rewritten = job
            write_frame(replies, run_job(files, suites, slot, limits, base, place, rewritten))
    finally:
        place.remove()


def _warm_process() -> tuple:
    """Take over this process's stdin/stdout as the first request/reply streams, then read the limits."""
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints must never reach a reply stream
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.path[:] = [p for p in sys.path if p not in ("", ".")]
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    limits: Limits = read_frame(requests)
    return requests, replies, limits


def main() -> None:
    """Worker entry point: warm up, then serve jobs from stdin until it closes."""
    requests, replies, limits = _warm_process()
    preload()
    warm_up(limits)
    serve(requests, replies, limits)


def zygote_main(pairs: list[tuple[int, int]]) -> None:
    """Warm up once, then fork one worker per (request fd, reply fd) pair and wait for them all.

    The pool reads the limits from this process's stdin and talks to each worker over its own pair of
    pipes. The workers start from this warm state, so N workers cost one warm-up, not N. This process
    only reaps them (it is not a subreaper: what a sandboxed child leaves is re-parented to its worker).
    """
    requests, replies, limits = _warm_process()
    preload()
    warm_up(limits)
    own = [requests.fileno(), replies.fileno()]
    children = []
    for request_fd, reply_fd in pairs:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                for fd in own + [fd for pair in pairs if pair != (request_fd, reply_fd) for fd in pair]:
                    os.close(fd)
                serve(os.fdopen(request_fd, "rb"), os.fdopen(reply_fd, "wb"), limits)
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(0)
        children.append(pid)
    for fd in [fd for pair in pairs for fd in pair]:
        os.close(fd)
    for pid in children:
        os.waitpid(pid, 0)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--zygote"]:
        zygote_main([tuple(int(fd) for fd in pair.split(",")) for pair in sys.argv[2:]])
    else:
        main()
