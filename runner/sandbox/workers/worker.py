"""The warm worker: a long-lived trusted process that forks one confined child per job.

Started by `WorkerPool`, either on its own (`python -P -m runner.sandbox.workers.worker`, serving on
stdin/stdout) or forked by the pool's zygote (`--zygote`, one warm-up for all workers, each worker
on its own pair of pipes). It warms up (runner.sandbox.workers.warm_up), leases its own sandbox uid, then
serves jobs (length-prefixed pickles). For each job it writes nothing the child can change, runs
every suite file in one supervised session (runner.sandbox.session), kills everything the child
left behind and judges each suite from its share of the verdict channel alone. If the candidate's
code starts before collection has finished (a suite imports it eagerly), the session is abandoned
and each suite runs in a session of its own, as later files could otherwise be tampered with while
they are imported.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import pickle
import re
import socket
import sys
import time
import traceback

from runner.outcome import Outcome, SuiteResult, TestResult
from runner.sandbox.child import pytest_child
from runner.sandbox.confine import isolation
from runner.sandbox.confine.limits import Limits
from runner.sandbox.cost_job import CostRun
from runner.sandbox.cost_run import run_cost_job
from runner.sandbox.job_place import JobPlace, write_readonly
from runner.sandbox.protocol import Isolation
from runner.sandbox.repo_job import RepoRun
from runner.sandbox.repo_run import run_repo_job
from runner.sandbox.sandbox_job import SandboxJob
from runner.sandbox.session import NOT_RUN, SessionFacts, run_session, suite_facts, suite_output
from runner.sandbox.suite_result import expected_tests, suite_result_of
from runner.sandbox.workers.frames import read_frame, write_frame
from runner.sandbox.workers.warm_up import load_hypothesis, preload, probe, warm_up
from runner.sandbox.workers.zygote import MAX_WORKERS

# ---------------------------------------------------------------- one job

_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")


def _applied(session: SessionFacts) -> dict[str, bool]:
    """The protections the child reported in force (its `Isolation` message)."""
    for _, message in session.messages:
        if isinstance(message, Isolation):
            return {k: bool(v) for k, v in message.applied.items()}
    return {}


def run_sandbox_job(files: dict[str, str], suites: tuple[tuple[str, str], ...], slot, limits: Limits, base: dict,
                    place: JobPlace):  # fmt: skip
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
                write_readonly(os.path.join(place.test_dir, name), source)
        runnable: list[tuple[str, str, tuple[str, ...]]] = []
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
            runnable.append((suite, test_file, expected))
        if place.rewrites is not None:
            place.rewrites.provide(place.test_dir, [test_file for _, test_file, _ in runnable])
        groups = [runnable] if runnable else []
        while groups:
            group = groups.pop(0)
            place.fresh_scratch(slot, limits)
            session = run_session([os.path.join(place.test_dir, f) for _, f, _ in group], place, slot, limits)
            if len(group) > 1 and session.candidate_ran_during_collection():
                groups = [[one] for one in group] + groups
                continue
            _judge_session(session, group, limits, results, outputs)
            applied = _applied(session)
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
        results[suite] = suite_result_of(suite, expected, facts, limits)
        text = suite_output(session, index, cap).decode("utf-8", "replace")
        if text:
            if facts.output_exceeded:
                text += f"\n[output capped at {limits.max_output_kb} KB]"
            outputs.append(f"--- {suite} ---\n{text}")


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
    base = {"process_group_kill": subreaper, "output_cap": True}
    try:
        in_force = {**probe(limits, slot), **base}
        hello = {"ready": True, "pid": os.getpid(), "slot": slot.index, "uid": slot.uid, "isolation": in_force}
        write_frame(replies, hello)
        runners = {  # one runner per kind of job the pool sends
            SandboxJob: lambda job: _run_suites(job, slot, limits, base, place),
            RepoRun: lambda job: run_repo_job(job, slot, limits, in_force, place),
            CostRun: lambda job: run_cost_job(job, slot, limits, in_force, place),
        }
        while True:
            job = read_frame(requests)
            if job is None:
                return
            write_frame(replies, runners[type(job)](job))
    finally:
        place.remove()


def _run_suites(job: SandboxJob, slot, limits: Limits, base: dict, place: JobPlace):
    """A function task's candidate through its suites, under the job's own limits where it has them."""
    if _mentions_hypothesis(job.files) and load_hypothesis(limits):
        _after_late_imports(place)
    job_limits = limits
    if job.time_limit_s > max(limits.timeout_s, limits.cpu_s):
        job_limits = dataclasses.replace(limits, timeout_s=job.time_limit_s, cpu_s=job.time_limit_s)
    if job.cpu_limit_s:
        job_limits = dataclasses.replace(job_limits, cpu_s=min(job.cpu_limit_s, job_limits.timeout_s))
    return run_sandbox_job(dict(job.files), tuple(job.suites), slot, job_limits, base, place)


def _mentions_hypothesis(files: dict[str, str | bytes]) -> bool:
    """Whether a job's suite (or its candidate, or a data file) may use hypothesis: it names it."""
    return any(("hypothesis" if isinstance(text, str) else b"hypothesis") in text for text in files.values())


def _after_late_imports(place: JobPlace) -> None:
    """After modules were imported in a serving worker: children get a snapshot of the guarded modules
    as they are now (imports add to their namespaces), and pytest's collections skip the new objects too."""
    if place.prepared is not None:
        place.prepared.objects = pytest_child.guarded_objects()
    gc.freeze()


def _warm_process() -> tuple:
    """Take over this process's stdin/stdout as the first request/reply streams, then read the limits."""
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    _settle_process()
    limits: Limits = read_frame(requests)
    return requests, replies, limits


def _settle_process() -> None:
    isolation.yield_cpu()
    os.dup2(2, 1)  # stray prints must never reach a reply stream
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.path[:] = [p for p in sys.path if p not in ("", ".")]
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"


def main() -> None:
    """Worker entry point: warm up, then serve jobs from stdin until it closes."""
    requests, replies, limits = _warm_process()
    preload()
    warm_up()
    serve(requests, replies, limits)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # skip tearing down the interpreter's warm state


def zygote_main(pairs: list[tuple[int, int]]) -> None:
    """Warm up once, then fork one worker per (request fd, reply fd) pair and wait for them all.

    The pool reads the limits from this process's stdin and talks to each worker over its own pair of
    pipes. The workers start from this warm state, so N workers cost one warm-up, not N. This process
    only reaps them (it is not a subreaper: what a sandboxed child leaves is re-parented to its worker).
    """
    requests, replies, limits = _warm_process()
    preload()
    warm_up()
    _fork_workers(pairs, limits, [requests.fileno(), replies.fileno()])


def early_zygote_main(socket_fd: int) -> None:
    """`zygote_main` for a pool started before its size and limits were known (pool.EarlyZygote): import
    everything and warm up first, then receive the limits and every worker's pair of pipe ends over the socket."""
    _settle_process()
    preload()
    warm_up()  # while the pool composes its config: the limits are not needed yet
    with socket.socket(fileno=socket_fd) as sock:
        data, fds, _flags, _address = socket.recv_fds(sock, 1 << 16, 2 * MAX_WORKERS)
    if not data:  # the pool was never started (bad input): nothing to do
        os._exit(0)
    _fork_workers(list(zip(fds[0::2], fds[1::2], strict=True)), pickle.loads(data), [])


def _fork_workers(pairs: list[tuple[int, int]], limits: Limits, own: list[int]) -> None:
    """Fork one worker per pair from this warm process, wait for them all, exit. Never returns."""
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
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # nothing left to do: skip tearing down the interpreter's ~40 MB of warm state


if __name__ == "__main__":
    if sys.argv[1:2] == ["--zygote"]:
        zygote_main([tuple(int(fd) for fd in pair.split(",")) for pair in sys.argv[2:]])
    elif sys.argv[1:2] == ["--early-zygote"]:
        early_zygote_main(int(sys.argv[2]))
    else:
        main()
