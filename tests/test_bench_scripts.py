"""The benchmark scripts that reach into the runner's internals still run: `make bench` is not in the test command.

bench/bench_overhead.py patches the embedded backend's generation call and reads the job's records; when that
call's signature changed, `make bench` failed at its last step for three days before anyone saw it. Here it
runs one round of a one-task, 16-token job (about 25 s) and must print every figure of that round.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_overhead_bench_runs_a_tiny_round_and_prints_its_figures():
    command = [sys.executable, "bench/bench_overhead.py", "rounds=1", "task_set.limit=1", "sampling.num_predict=16",
               "repair=none"]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert re.search(r"^round 1: 1 attempts, [1-9]\d* tokens", out, re.M), out
    assert re.search(r"pure generation +\d+\.\d\d s, model load \d+\.\d\d s", out), out
    for name in ("cold", "warm"):
        line = re.search(rf"^  {name} job +(\d+\.\d\d) s wall \(exit 0, .*: (\d+\.\d\d) s generating;", out, re.M)
        assert line and 0 < float(line[2]) <= float(line[1]), out  # the job generated, within its wall time
        assert re.search(rf"^{name} job, outside generation: median \d+\.\d%", out, re.M), out
    assert re.search(r"load average +\d+\.\d\d \d+\.\d\d \d+\.\d\d", out), out
