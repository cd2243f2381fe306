"""Process isolation for one sandboxed child, and the clean-up that leaves no process behind.

`confine` runs in the freshly forked child before any untrusted code: it applies every protection
the OS allows and reports which ones are actually in force. `kill_everything` runs in the trusted
worker after each suite: it kills the child's process group, every process of the slot's sandbox
uid (which catches grandchildren that left the group with setsid) and every descendant that was
re-parented to the worker (the worker is a child subreaper, which also covers non-root runs).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import resource
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from runner.sandbox.confine.limits import Limits
from runner.sandbox.confine.priority import SANDBOX_NICE

CLONE_NEWNET = 0x40000000
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
BASE_UID = 61000
MAX_SLOTS = 1000
LOCK_DIR = Path("/tmp/runner-sandbox-slots")
SCRATCH_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
JOB_DIR_BASE = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
"""Where job directories go: tmpfs makes creating and removing them ~100x cheaper than /tmp here."""

_libc = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class Slot:
    """A worker's sandbox identity: its own uid/gid, held exclusively through a lock file."""

    index: int
    uid: int
    gid: int
    lock_fd: int


def is_root() -> bool:
    """True if this process may switch uid and create network namespaces."""
    return os.geteuid() == 0


def lease_slot() -> Slot:
    """Take the first free sandbox uid (61000 + n) for this process's lifetime.

    The lock (flock on a root-only file) is released by the kernel when the worker dies, so two
    pools on one machine never share a uid: killing "every process of the uid" stays safe.
    """
    LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
    for index in range(MAX_SLOTS):
        fd = os.open(LOCK_DIR / f"{BASE_UID + index}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return Slot(index, BASE_UID + index, BASE_UID + index, fd)
    raise RuntimeError(f"no free sandbox slot in {LOCK_DIR}")


_PRIVATE_NETWORK = [False]
"""Set in the worker once it has moved itself into a network namespace of its own (`isolate_network`)."""


def isolate_network() -> bool:
    """Move this (worker) process into a new, empty network namespace, which every child it forks inherits.

    One namespace per worker instead of one per child: creating and tearing down a namespace costs
    about 0.7 ms of kernel time, paid per candidate otherwise. The worker itself needs no network (it
    talks to the pool over pipes), the namespace holds only a loopback device that is down and that no
    sandbox uid may configure, and the worker runs one child at a time and kills everything the child
    left before the next one starts. Needs root; returns whether it worked.
    """
    _PRIVATE_NETWORK[0] = is_root() and _libc.unshare(CLONE_NEWNET) == 0
    return _PRIVATE_NETWORK[0]


def become_subreaper() -> bool:
    """Make orphaned descendants re-parent to this process (so they can be found and killed)."""
    return _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def sandbox_env(home: str) -> dict[str, str]:
    """The whole environment of a sandboxed child: nothing inherited, so no secrets."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }


def _vm_size_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[0]) * resource.getpagesize()


def _set_limit(which: int, soft: int, hard: int | None = None) -> bool:
    try:
        resource.setrlimit(which, (soft, soft if hard is None else hard))
        return True
    except (ValueError, OSError):
        return False


def _processes_of(uid: int) -> int:
    return sum(1 for _pid, owner, _ppid in _proc_table() if owner == uid)


def yield_cpu() -> None:
    """Lower this process to nice SANDBOX_NICE (a process already as nice stays as it is).

    Test runs, and the pool's warm-up and gold check, overlap generation; on a small machine the model,
    the bottleneck, must win the CPU. Where the kernel groups CPU time by session (autogroup), this
    ranks the process only within its session (README, "n_threads")."""
    os.setpriority(os.PRIO_PROCESS, 0, max(SANDBOX_NICE, os.getpriority(os.PRIO_PROCESS, 0)))


def confine(limits: Limits, slot: Slot, home: str) -> dict[str, bool]:
    """Isolate the calling (freshly forked) process; return which protections are in force.

    Order matters: session first, network namespace and rlimits while still root, environment,
    then the uid drop, then RLIMIT_NPROC (which only binds a non-root uid).
    """
    applied: dict[str, bool] = {}
    os.setsid()
    applied["process_group_kill"] = True
    if limits.network:
        applied["network_namespace"] = False
    elif _PRIVATE_NETWORK[0]:
        applied["network_namespace"] = True  # inherited from the worker (see isolate_network)
    else:
        applied["network_namespace"] = is_root() and _libc.unshare(CLONE_NEWNET) == 0
    applied["rlimit_as"] = _set_limit(resource.RLIMIT_AS, _vm_size_bytes() + limits.memory_mb * 2**20)
    cpu = max(1, int(round(limits.cpu_s)))
    applied["rlimit_cpu"] = _set_limit(resource.RLIMIT_CPU, cpu, cpu + 1)
    applied["rlimit_fsize"] = _set_limit(resource.RLIMIT_FSIZE, limits.max_file_mb * 2**20)
    applied["rlimit_nofile"] = _set_limit(resource.RLIMIT_NOFILE, limits.max_open_files)
    _set_limit(resource.RLIMIT_CORE, 0)
    yield_cpu()
    # Python ignores SIGXFSZ (writes then fail with EFBIG); the default action makes an oversized
    # file kill the child, which the parent can see even if the candidate swallows the OSError.
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    os.environ.clear()
    os.environ.update(sandbox_env(home))
    applied["scrubbed_env"] = True
    applied["unprivileged_uid"] = False
    if limits.drop_privileges and is_root():
        _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        os.setgroups([])
        os.setresgid(slot.gid, slot.gid, slot.gid)
        os.setresuid(slot.uid, slot.uid, slot.uid)
        applied["unprivileged_uid"] = os.getuid() == slot.uid and os.geteuid() == slot.uid
        applied["rlimit_nproc"] = _set_limit(resource.RLIMIT_NPROC, limits.max_processes)
    elif not is_root():
        # The uid is shared with the user's other processes: allow what already runs plus the budget.
        allowed = _processes_of(os.getuid()) + limits.max_processes
        applied["rlimit_nproc"] = _set_limit(resource.RLIMIT_NPROC, allowed)
    else:
        applied["rlimit_nproc"] = False  # root without a uid drop: RLIMIT_NPROC does not bind
    return applied


def _proc_table() -> list[tuple[int, int, int]]:
    """(pid, real uid, parent pid) of every process, from /proc."""
    table = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            text = Path(f"/proc/{name}/status").read_text()
        except OSError:
            continue
        uid = ppid = -1
        for line in text.splitlines():
            if line.startswith("Uid:"):
                uid = int(line.split()[1])
            elif line.startswith("PPid:"):
                ppid = int(line.split()[1])
        table.append((int(name), uid, ppid))
    return table


def leftover_processes(slot: Slot) -> list[int]:
    """Pids that belong to the sandbox: processes of the slot uid (when root) and our descendants."""
    table = _proc_table()
    me = os.getpid()
    children: dict[int, list[int]] = {}
    for pid, _uid, ppid in table:
        children.setdefault(ppid, []).append(pid)
    found, stack = set(), list(children.get(me, []))
    while stack:
        pid = stack.pop()
        if pid not in found:
            found.add(pid)
            stack.extend(children.get(pid, []))
    if is_root():
        found.update(pid for pid, uid, _ in table if uid == slot.uid and pid != me)
    return sorted(found)


def processes_of_uid(uid: int, exclude: int) -> list[int] | None:
    """Pids of the processes running as `uid` other than `exclude` (one stat per process), or None if not root.

    When root, every process a sandboxed child starts runs as the slot's uid, so this finds them all
    at a tenth of the cost of `leftover_processes`.
    """
    if not is_root():
        return None
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != exclude:
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    found.append(int(name))
            except OSError:
                continue
    return found


def _kill_uid(uid: int) -> None:
    """kill(-1, SIGKILL) as the sandbox uid: the kernel signals all its processes in one sweep."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _reap_all() -> bool:
    """Reap every finished child; True when this process has no children left at all."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            return False


def kill_everything(pgid: int | None, slot: Slot, rounds: int = 200) -> bool:
    """Kill the process group and everything else the sandbox started; reap it all.

    The worker is a child subreaper, so every process a sandboxed child started, however it
    detached (setsid, double fork), stays a descendant of the worker: "no children left" means
    nothing is left. Returns False only if something survived every round.
    """
    for _ in range(rounds):
        if pgid is not None and pgid != os.getpgrp():
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if _reap_all():
            return True
        if is_root():
            _kill_uid(slot.uid)
        for pid in leftover_processes(slot):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.001)
    return _reap_all()


_SETTLED_NS = 50_000_000
"""A directory time this much older than the mark is settled: file times tick coarsely (a few ms), so a
change right after a recent one could otherwise keep the same time."""


def scratch_marks() -> tuple[int, ...]:
    """Modification times of the world-writable directories (an entry made or removed in one changes it),
    each replaced by -1 where it is too recent to be told apart from a change that may follow."""
    settled = time.time_ns() - _SETTLED_NS
    marks = []
    for base in SCRATCH_DIRS:
        try:
            mtime = os.stat(base).st_mtime_ns
        except OSError:
            mtime = -1
        marks.append(mtime if mtime < settled else -1)
    return tuple(marks)


def remove_scratch_files(slot: Slot, since: tuple[int, ...] | None = None) -> None:
    """Delete what the sandbox uid left in world-writable directories (only possible when root).

    With `since` (the `scratch_marks()` taken before the sandbox ran), directories whose contents
    did not change are skipped: the sandbox uid cannot reset the time of a directory it does not own.
    """
    if not is_root():
        return
    import shutil

    now = scratch_marks() if since is not None else ()
    for index, base in enumerate(SCRATCH_DIRS):
        if since is not None and since[index] != -1 and now[index] == since[index]:
            continue
        try:
            entries = list(os.scandir(base))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != slot.uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError as err:
                if err.errno != errno.ENOENT:
                    continue
