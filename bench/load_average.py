"""The host's load average, printed beside every benchmark figure: the machine is shared and its speed drifts."""

from __future__ import annotations

import os


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages, e.g. ``0.52 1.10 1.31``."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())
