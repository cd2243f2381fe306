"""How many cores the embedded model may take: those that other programs are not busy with.

llama.cpp's threads wait on each other at every step, so one thread that has to share its core with
another program's work slows the whole generation many times over; a thread on a core that only our
own sandbox pool uses costs less, since it runs at nice 10 (runner/sandbox/confine/isolation.py; within its
own sessions only, where the kernel groups CPU time by session). So the free cores are counted from
/proc/stat over a short sample: idle time and niced time are free, and so is the un-niced time of this
process and its descendants, such as the MLflow store being created in a thread beside the model's load
(counted as taken, it made this answer 1 of 2 cores, a thread lost for the whole job: a fresh store's
job ran at 21 tokens/s instead of 37, and with other answers); everything else is taken.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

# /proc/stat "cpu" columns: user nice system idle iowait irq softirq steal guest guest_nice
_FREE_COLUMNS = (1, 3, 4)  # nice, idle, iowait
_COUNTED_COLUMNS = 8  # guest time is already inside user time


def read_cpu_times() -> list[int] | None:
    """The machine-wide "cpu" line of /proc/stat in clock ticks; None where there is none (not Linux)."""
    try:
        first = Path("/proc/stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    return [int(x) for x in first[1 : 1 + _COUNTED_COLUMNS]] if first[0] == "cpu" else None


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity (macOS)
        return max(1, os.cpu_count() or 1)


def own_ticks() -> dict[int, int]:
    """Un-niced CPU ticks (user + system) so far of this process and each live descendant, by pid."""
    table: dict[int, tuple[int, int, int]] = {}  # pid -> (parent, nice, ticks)
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue  # gone meanwhile
            table[int(entry.name)] = (int(fields[1]), int(fields[16]), int(fields[11]) + int(fields[12]))
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found, stack = {}, [os.getpid()]
    while stack:
        pid = stack.pop()
        _, nice, ticks = table[pid]
        if nice <= 0:  # niced time is counted free already
            found[pid] = ticks
        stack.extend(children.get(pid, []))
    return found


def free_cores(sample_s: float = 0.25, read: Callable[[], list[int] | None] = read_cpu_times,
               own: Callable[[], dict[int, int]] = own_ticks) -> int:  # fmt: skip
    """Usable cores minus those busy with other programs' un-niced work over `sample_s`; at least 1.
    `own`: the un-niced ticks of this process and its descendants by pid, whose work is not another program's."""
    usable = usable_cores()
    before, own_before = read(), own()
    time.sleep(sample_s)
    after, own_after = read(), own()
    if before is None or after is None:
        return usable
    delta = [b - a for a, b in zip(before, after, strict=True)]
    total = sum(delta)
    if total <= 0:
        return usable
    ours = sum(max(0, ticks - own_before.get(pid, 0)) for pid, ticks in own_after.items())
    free_share = min(1.0, (sum(delta[i] for i in _FREE_COLUMNS) + ours) / total)
    return max(1, min(usable, round(free_share * (os.cpu_count() or usable))))
