"""How many cores the embedded model may take: those that other programs are not busy with.

llama.cpp's threads wait on each other at every step, so one thread that has to share its core with
another program's work slows the whole generation many times over; a thread on a core that only our
own test sandboxes use costs little, since they run at nice 10 (runner/sandbox/isolation.py) and
yield to generation. So the free cores are counted from /proc/stat over a short sample: idle time and
niced time are free, everything else is taken.
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


def free_cores(sample_s: float = 0.25, read: Callable[[], list[int] | None] = read_cpu_times) -> int:
    """Usable cores minus those busy with other programs' un-niced work over `sample_s`; at least 1."""
    usable = usable_cores()
    before = read()
    time.sleep(sample_s)
    after = read()
    if before is None or after is None:
        return usable
    delta = [b - a for a, b in zip(before, after, strict=True)]
    total = sum(delta)
    if total <= 0:
        return usable
    free_share = sum(delta[i] for i in _FREE_COLUMNS) / total
    return max(1, min(usable, round(free_share * (os.cpu_count() or usable))))
