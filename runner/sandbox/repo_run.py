"""One repo task's test run in a warm worker: a confined child execs the task environment's Python.

The worker writes the (already patched) copy of the repo, root-owned and read-only, into its job
directory, forks a child that is confined exactly as a function task's (`isolation.confine`: the
worker's private network namespace, the sandbox uid, rlimits, a scrubbed environment) and execs
`<env python> -P repo_plugin.py` in the copy. The child's results come back over a pipe it inherited
(`repo_plugin`: nonce-authenticated lines); its stdout/stderr are only captured (capped), never read for
the verdict. Everything the child started is killed before the result is returned.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import signal
import time
from dataclasses import replace
from pathlib import Path

from runner.sandbox.confine import isolation
from runner.sandbox.confine.limits import Limits
from runner.sandbox.confine.supervise import Watch, fork_child, supervise
from runner.sandbox.job_place import JobPlace, write_readonly
from runner.sandbox.repo_job import RepoRun, RepoRunResult

PLUGIN_SOURCE = (Path(__file__).parent / "child" / "repo_plugin.py").read_text(encoding="utf-8")
"""Read when the worker imports this module (the sandbox uid may not be able to read the harness's files)."""
_CHANNEL_CAP = 8 << 20

__all__ = ["RepoRun", "RepoRunResult", "run_repo_job"]


def _write_tree(root: str, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        parts = Path(name).parts
        if Path(name).is_absolute() or ".." in parts or not parts:
            raise ValueError(f"bad path in a repo job: {name!r}")
        path = os.path.join(root, *parts)
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        write_readonly(path, data)


def _child(job: RepoRun, paths: tuple[str, str], place: JobPlace, slot, limits: Limits, fds: tuple, nonce: str):
    """In the forked child: plumb fds, confine, say what is in force, exec the environment's Python."""
    repo_dir, plugin = paths
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (devnull, *fds)]  # above the targets 0-4
        for target, fd in zip((0, 3, 4, 1), high, strict=True):
            os.dup2(fd, target)
        os.dup2(1, 2)
        os.closerange(5, 65536)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        applied = isolation.confine(limits, slot, place.scratch)
        os.write(4, (nonce + " " + json.dumps({"k": "isolation", "applied": applied}) + "\n").encode())
        env = dict(os.environ)
        env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)  # the task's test libraries may be pytest plugins
        os.chdir(repo_dir)
        os.execve(job.python, [job.python, "-P", plugin], env)
    except BaseException as exc:
        try:
            os.write(2, f"sandbox: could not start the test run: {exc!r}\n".encode())
        finally:
            os._exit(70)


def run_repo_job(job: RepoRun, slot, limits: Limits, base: dict, place: JobPlace) -> RepoRunResult:
    """Run a repo job's tests in one confined child and return what was observed (the judge decides)."""
    start = time.monotonic()
    result = RepoRunResult(isolation=dict(base))
    timeout = max(job.timeout_s, 1.0)
    limits = replace(limits, timeout_s=timeout, cpu_s=max(limits.cpu_s, timeout))
    repo_dir = os.path.join(place.root, "r")
    plugin = os.path.join(place.root, "repo_plugin.py")
    marks = isolation.scratch_marks()
    try:
        place.clear()
        shutil.rmtree(repo_dir, ignore_errors=True)
        os.mkdir(repo_dir, 0o755)
        _write_tree(repo_dir, job.files)
        if not os.path.exists(plugin):
            write_readonly(plugin, PLUGIN_SOURCE)
        place.fresh_scratch(slot, limits)
        nonce = secrets.token_hex(16)
        files = sorted({node.split("::", 1)[0] for node in job.node_ids})
        config = {"nonce": nonce, "ids": list(job.node_ids), "files": files,
                  "basetemp": os.path.join(place.scratch, "pt")}  # fmt: skip
        _supervise(job, (repo_dir, plugin), place, slot, limits, config, result)
        applied = next((m.get("applied") for m in result.messages if m["k"] == "isolation"), None)
        for key, value in (applied if isinstance(applied, dict) else {}).items():
            result.isolation[key] = bool(value)
    except (OSError, ValueError) as exc:
        result.harness_error = f"the repo job could not be prepared: {exc}"
    finally:
        place.clear()
        shutil.rmtree(repo_dir, ignore_errors=True)
        isolation.remove_scratch_files(slot, since=marks)
    result.duration_s = time.monotonic() - start
    return result


def _supervise(job, paths, place, slot, limits: Limits, config: dict, result: RepoRunResult) -> None:
    def child(fds: list[int]) -> None:
        _child(job, paths, place, slot, limits, tuple(fds), config["nonce"])

    pid, (result_r, out_r) = fork_child(child, 2, given=(json.dumps(config) + "\n").encode())
    channel, output = bytearray(), bytearray()
    cap = limits.max_output_kb * 1024

    def read_channel(chunk: bytes) -> None:
        if len(channel) <= _CHANNEL_CAP:
            channel.extend(chunk)

    def read_output(chunk: bytes) -> None:
        output.extend(chunk[: cap - len(output)])

    ending = supervise(pid, {result_r: read_channel, out_r: read_output}, slot, _RepoWatch(limits.timeout_s, channel))
    result.status, result.timed_out, result.leftovers = ending.status, ending.timed_out, ending.leftovers
    if len(channel) > _CHANNEL_CAP:
        result.violations.append("the verdict channel was flooded")
    result.output_exceeded = len(output) >= cap
    result.output = bytes(output).decode("utf-8", "replace")
    result.feed(config["nonce"], bytes(channel))


class _RepoWatch(Watch):
    """A repo run's limits: its wall clock, and a channel that may not flood."""

    def __init__(self, timeout_s: float, channel: bytearray) -> None:
        super().__init__(timeout_s)
        self.channel = channel

    def after_read(self) -> bool:
        return len(self.channel) > _CHANNEL_CAP
