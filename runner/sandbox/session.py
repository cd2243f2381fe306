"""One supervised session: a confined child forked from the worker runs a job's suite files in one pytest run.

`run_session` forks the child (`_child`: plumb the pipes, confine, run the prepared pytest session),
then watches it: per suite, wall clock and CPU from the suite's first test and an output cap (the
channel says which suite runs); whatever the child left behind is killed. `suite_facts` then gives
each suite its share of what was observed (`suite_result.RunFacts`), judged by `suite_result.suite_result_of`. A
suite the session never reached because an earlier one was killed is ERROR with its tests missing
("not run: an earlier suite was killed").
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from runner.sandbox.child import pytest_child
from runner.sandbox.confine import isolation
from runner.sandbox.confine.limits import Limits
from runner.sandbox.confine.supervise import Watch, fork_child, supervise
from runner.sandbox.protocol import (
    Armed,
    Channel,
    Collected,
    CollectError,
    Done,
    Internal,
    Isolation,
    Message,
    Report,
    Start,
    SuiteDone,
    Tamper,
    authenticated,
    decode,
)
from runner.sandbox.suite_result import RunFacts

if TYPE_CHECKING:
    from runner.sandbox.job_place import JobPlace


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
        channel = Channel(3, nonce)
        channel.send(Isolation(applied))
        os.chdir(place.scratch)
        sys.path[:] = [p for p in sys.path if p and p != "."]
        pytest_child.seed_random()  # suite modules may draw at import (collection)
        if place.prepared is not None:
            pytest_child.run_prepared(place.prepared, test_paths, channel)
        else:  # the prepared_session speed-up switched off (runner.sandbox.speedups.internals)
            pytest_child.run_unprepared(test_paths, place.ini_path, channel, limits)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    except BaseException:
        try:
            traceback.print_exc()
            sys.stderr.flush()
        finally:
            os._exit(70)


@dataclass
class SessionFacts:
    """What the trusted side observed of one session over several suite files (in order)."""

    files: list[str]
    messages: list[tuple[int, Message]] = field(default_factory=list)
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
    cpu_wait_s: float = 0.0
    """At a wall-clock timeout: how long the running suite had waited for a CPU (a loaded machine)."""
    running: int = -1
    """The suite that was running when the session ended (-1: none had started)."""
    nonce: str = ""
    pending: bytes = b""
    first_of_collection: type[Armed] | type[Collected] | None = None
    """Which came first on the channel: `Armed` (the candidate started) or `Collected` (all files are)."""

    def feed(self, data: bytes) -> None:
        """Parse complete channel lines; a `start` of a new file moves `running` on."""
        lines = (self.pending + data).split(b"\n")
        self.pending = lines.pop()
        for payload in authenticated(lines, self.nonce, self.violations):
            try:
                message = decode(payload)
            except ValueError:
                self.violations.append("a malformed message on the verdict channel")
                continue
            if isinstance(message, (Armed, Collected)) and self.first_of_collection is None:
                self.first_of_collection = type(message)
            if isinstance(message, Start):
                index = self.suite_of(message.id)
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
        return self.first_of_collection is Armed


def _cpu_wait_seconds(pid: int) -> float | None:
    """How long `pid` has waited on a run queue for a CPU (the scheduler's run_delay), or None if unknown."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


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


class _SessionWatch(Watch):
    """A session's limits, per suite: wall clock and CPU from the suite's first test, an output cap each; the
    channel's messages say which suite runs."""

    def __init__(self, pid: int, facts: SessionFacts, slot, limits: Limits) -> None:
        self.pid, self.facts, self.slot, self.limits = pid, facts, slot, limits
        self.count = len(facts.files)
        self.session_ends = time.monotonic() + limits.timeout_s * self.count
        self.suite_ends = self.session_ends
        self.running, self.cpu_start, self.cores = -1, 0.0, os.cpu_count() or 1
        self.wait_start = _cpu_wait_seconds(pid) or 0.0
        self.next_cpu_read = self.session_ends  # CPU time cannot run out sooner than `cpu_left / cores` wall seconds
        self.output = bytearray()
        self.channel_bytes = 0

    def read_channel(self, chunk: bytes) -> None:
        self.channel_bytes += len(chunk)
        self.facts.feed(chunk)

    def read_output(self, chunk: bytes) -> None:
        self.output += chunk

    def deadline(self) -> float:
        return min(self.session_ends, self.suite_ends)

    def wake_at(self) -> float:
        return self.next_cpu_read

    def on_timeout(self, pid: int) -> None:
        self.facts.cpu_wait_s = max(0.0, (_cpu_wait_seconds(pid) or self.wait_start) - self.wait_start)

    def before_wait(self, now: float) -> bool:
        if self.running < 0 or now < self.next_cpu_read:  # the suite's CPU time (RLIMIT_CPU covers the session)
            return False
        cpu_left = self.limits.cpu_s - ((_cpu_seconds(self.pid) or self.cpu_start) - self.cpu_start)
        if cpu_left <= 0:
            self.facts.cpu_exceeded = True
            return True
        self.next_cpu_read = now + max(0.02, cpu_left / self.cores)
        return False

    def after_read(self) -> bool:
        facts, limits = self.facts, self.limits
        if facts.running != self.running:
            self.running = facts.running
            facts.output_marks[self.running] = len(self.output)
            self.suite_ends = time.monotonic() + limits.timeout_s
            self.cpu_start = _cpu_seconds(self.pid) or 0.0
            self.wait_start = _cpu_wait_seconds(self.pid) or 0.0
            self.next_cpu_read = time.monotonic() + limits.cpu_s / self.cores
            if self.running > 0:  # what the candidate started during an earlier suite does not outlive it
                _kill_strays(self.pid, self.slot, limits)
        cap = limits.max_output_kb * 1024
        if len(self.output) - facts.output_marks.get(self.running, 0) > cap or len(self.output) > cap * self.count:
            facts.output_exceeded = True
            return True
        if self.channel_bytes > 8 << 20:
            facts.violations.append("the verdict channel was flooded")
            return True
        return self.count > 1 and facts.candidate_ran_during_collection()  # each suite is then run on its own


def run_session(test_paths: list[str], place: JobPlace, slot, limits: Limits) -> SessionFacts:
    """Fork one confined child for a job's suite files and supervise it to the end.

    Each suite may run `timeout_s` wall clock and `cpu_s` CPU from its first test's start, and write
    `max_output_kb`; the whole session may run `timeout_s` per suite.
    """
    facts = SessionFacts(files=[os.path.basename(p) for p in test_paths], nonce=secrets.token_hex(16))

    def child(fds: list[int]) -> None:
        _child(test_paths, place, slot, limits, fds[0], fds[1], facts.nonce)

    pid, (res_r, out_r) = fork_child(child, 2)
    watch = _SessionWatch(pid, facts, slot, limits)
    ending = supervise(pid, {res_r: watch.read_channel, out_r: watch.read_output}, slot, watch)
    facts.status, facts.timed_out, facts.leftovers = ending.status, ending.timed_out, ending.leftovers
    facts.feed(b"\n")  # a last line the child wrote without its newline
    if facts.timed_out or facts.output_exceeded or facts.cpu_exceeded:
        facts.running = max(watch.running, facts.running)
    facts.output = bytes(watch.output)
    return facts


NOT_RUN = "not run: an earlier suite was killed"


def suite_facts(session: SessionFacts, index: int) -> RunFacts | None:
    """The observations that concern suite `index` of the session, or None if it never started.

    Tampering found by the checks at the end of a suite, or reported while it ran, counts for that
    suite and every later one; channel violations, leftover processes and a candidate that could not
    be loaded count for all. A suite is ended by its own `SuiteDone`, or else by the session's `Done`.
    """
    facts = RunFacts(violations=list(session.violations), leftovers=session.leftovers)
    started = {session.suite_of(m.id) for _, m in session.messages if isinstance(m, Start)}
    closed, session_done, load = False, None, None
    for running, message in session.messages:
        if isinstance(message, (SuiteDone, Done)):
            load = load or message.load
        if isinstance(message, (Report, Start, CollectError)):
            owner = session.suite_of(message.id)
            if isinstance(message, Report) and owner == index:
                facts.reports.append(message)
            elif isinstance(message, Start) and owner == index:
                facts.started.append(message.id)
            elif isinstance(message, CollectError) and owner in (index, None):
                facts.collect_errors.append(message)
        elif isinstance(message, SuiteDone):
            owner = session.suite_of(message.file)
            if owner is None:
                facts.violations.append("the end of an unknown suite")
            elif owner <= index:  # what the checks found at the end of an earlier suite still counts
                facts.tamper += message.tamper
                if owner == index:
                    closed = True
                    facts.ends += 1
        elif isinstance(message, Tamper) and running <= index:
            facts.tamper.append(message.why)
        elif isinstance(message, Internal) and running <= index:
            facts.internal.append(message.msg)
        elif isinstance(message, Done):
            session_done = message
    if session_done is not None:
        if closed:
            if index >= max(session.running, 0) or index not in started:
                facts.tamper += session_done.tamper
        elif index not in started or index >= session.running:
            facts.ends += 1
            facts.tamper += session_done.tamper
    facts.load_failure = load or None
    facts.tamper = _redact(facts.tamper, session.files, index)
    ended = session.timed_out or session.output_exceeded or session.cpu_exceeded or session_done is None
    if ended and not closed and index not in started and 0 <= session.running < index:
        return None
    if closed and index != session.running:
        facts.status = 0
    else:
        facts.timed_out, facts.output_exceeded = session.timed_out, session.output_exceeded
        facts.cpu_exceeded, facts.cpu_wait_s = session.cpu_exceeded, session.cpu_wait_s
        facts.status = session.status
    return facts


def _redact(tamper: list[str], files: list[str], index: int) -> list[str]:
    """Tampering found in another suite's module is reported without naming it (hidden names stay hidden)."""
    others = [Path(f).stem for i, f in enumerate(files) if i != index]
    hidden = "another suite's module or tests were changed"
    return [hidden if any(o in str(why) for o in others) else why for why in tamper]


def suite_output(session: SessionFacts, index: int, cap: int) -> bytes:
    """The output captured while suite `index` ran (the first suite also gets what came before it)."""
    marks = session.output_marks
    begin = 0 if index == min((i for i in marks if i >= 0), default=0) else marks.get(index, len(session.output))
    later = [marks[i] for i in marks if i > index]
    end = min(later) if later else len(session.output)
    return session.output[begin:end][:cap]
