"""HumanEval+ and MBPP+ canonical solutions: `python -m runner.evaluate` beside `evalplus.evaluate`.

    .venv/bin/python bench/bench_evalplus.py [datasets=DIR] [workers=2] [sets=humanevalplus,mbppplus]
                                             [evalplus=PYTHON] [repeats=N]

Both tools get the same samples file (EvalPlus format, `solution` = the task's canonical solution) and
the same local dataset files (EvalPlus through its HUMANEVAL_OVERRIDE_PATH / MBPP_OVERRIDE_PATH), the
same worker count, and each runs as its user runs it: a fresh process from its command line, start-up
included; ours with `suites=hidden,properties`, the base and plus tests EvalPlus runs (our default also runs
the docstring examples). Per side: wall time, the peak resident memory of the
largest process of its process tree (VmHWM polled from /proc every 50 ms, and the largest reaped descendant's
ru_maxrss), and per-task verdicts, compared with each other (base, and base+plus).

EvalPlus is not a dependency of ours: `evalplus=PYTHON` names an interpreter that has it; by default
the script makes a virtualenv of its own under bench/results/evalplus-venv (`python3 -m uv`) and
installs `evalplus` there, once. Both sides are measured warm, each after one unmeasured run of its own:
EvalPlus's ground-truth cache (~/.cache/evalplus), ours the expected outputs and the gold check under
.cache/runner (the warm-up's time is printed: the cold figure when the cache was empty). Neither caches
verdicts. Each round also runs bench/bench_floor.py's bare judge (the canonical solutions called on every
input in W forked processes, nothing else), so the three sides share the machine's state: runner/bare is the
harness's cost over the solutions' own work, which the load of other tenants moves less than a wall time.
`repeats=N` runs N such rounds and prints every ratio's median (the round shown in full is the median
runner/evalplus one).
`datasets=` defaults to $RUNNER_DATASETS_DIR or ../shared/datasets.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_floor import FILES, describe, floor, read_tasks, solution_code  # this script's folder is on sys.path
from load_average import load_average  # this script's folder is on sys.path

ROOT = Path(__file__).resolve().parents[1]
SUITES = "hidden,properties"  # EvalPlus's base and plus tests
RESULTS = ROOT / "bench" / "results"
EVALPLUS_VERSION = "0.3.1"
OVERRIDE = {"humanevalplus": "HUMANEVAL_OVERRIDE_PATH", "mbppplus": "MBPP_OVERRIDE_PATH"}
EVALPLUS_DATASET = {"humanevalplus": "humaneval", "mbppplus": "mbpp"}


def _tree(root: int) -> set[int]:
    """`root` and every process below it (from /proc's parent links)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    parent = int(handle.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, stack = set(), [root]
    while stack:
        pid = stack.pop()
        found.add(pid)
        stack.extend(children.get(pid, ()))
    return found


def _peak_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def run_measured(command: list[str], env: dict[str, str], cwd: Path) -> dict:
    """Run `command`; wall seconds, exit code and the largest process's peak RSS in MB over its tree."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    peak = {"kb": 0}
    output: list[bytes] = []
    reader = threading.Thread(target=lambda: output.append(process.stdout.read()), daemon=True)
    reader.start()

    def poll() -> None:
        while process.returncode is None:
            for pid in _tree(process.pid):
                peak["kb"] = max(peak["kb"], _peak_kb(pid))
            time.sleep(0.05)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    poller.join()
    reader.join()
    peak_mb = max(peak["kb"], usage.ru_maxrss) / 1024  # ru_maxrss: the largest reaped process, in KB
    return {"seconds": seconds, "peak_mb": peak_mb, "code": process.returncode, "output": b"".join(output).decode()}


def write_samples(dataset: Path, path: Path) -> int:
    """The canonical solutions as an EvalPlus samples file; returns the number of samples."""
    rows = [{"task_id": task["task_id"], "solution": solution_code(task)} for task in read_tasks(dataset)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return len(rows)


def ours(name: str, dataset: Path, samples: Path, workers: int, tmp: Path) -> dict:
    """`python -m runner.evaluate` as a user runs it (the default cache directory: expected outputs, gold check),
    limited to SUITES."""
    out = tmp / f"ours-{name}.jsonl"
    command = [sys.executable, "-m", "runner.evaluate", f"samples={samples}", f"out={out}", f"task_set={name}",
               f"task_set.path={dataset}", f"workers={workers}", f"suites={SUITES}"]  # fmt: skip
    result = run_measured(command, dict(os.environ), ROOT)
    verdicts = {}
    if out.exists():
        for line in out.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            base = bool(row.get("hidden", False))
            verdicts[row["task_id"]] = (base, base and bool(row.get("properties", True)))
    return {**result, "verdicts": verdicts}


def warm_ours(name: str, dataset: Path, samples: Path, workers: int, tmp: Path) -> float:
    """One unmeasured run, so our expected outputs and gold check are cached (as EvalPlus's ground truth is);
    its seconds. Verdicts are never cached: the measured run judges every sample again."""
    start = time.perf_counter()
    ours(name, dataset, samples, workers, tmp)
    return time.perf_counter() - start


def evalplus_python(option: str) -> str:
    """An interpreter with evalplus installed: `option`, or our own virtualenv (made once)."""
    if option:
        return option
    venv = RESULTS / "evalplus-venv"
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"installing evalplus=={EVALPLUS_VERSION} into {venv} (once)", flush=True)
        base_python = str(Path(sys.base_prefix) / "bin" / "python3")  # this venv has no uv; its base may
        uv = [shutil.which("uv")] if shutil.which("uv") else [base_python, "-m", "uv"]
        subprocess.run([*uv, "venv", "-q", str(venv)], check=True)
        subprocess.run([*uv, "pip", "install", "-q", "--python", str(python), f"evalplus=={EVALPLUS_VERSION}"],
                       check=True)  # fmt: skip
    # Bytecode, as a user's pip install writes it and uv does not, so that EvalPlus never compiles its modules
    # from source here (PYTHONDONTWRITEBYTECODE is set on this machine). Measured, it is not what EvalPlus's
    # time turns on (42.4 s with it, 46.1 s without: forking its ~1.2 GB process per sample is); the call takes
    # 0.7 s once the venv is compiled (28.6 s the first time).
    subprocess.run([python, "-m", "compileall", "-q", str(venv / "lib")], check=True)
    return str(python)


def theirs(python: str, name: str, dataset: Path, samples: Path, workers: int, tmp: Path) -> dict:
    """`python -m evalplus.evaluate` on the same file, pointed at the same local dataset."""
    env = {**os.environ, OVERRIDE[name]: str(dataset)}
    result_file = samples.with_name(samples.stem + "_eval_results.json")  # where evalplus 0.3.1 writes
    result_file.unlink(missing_ok=True)  # else --i-just-wanna-run stops to ask before overwriting it
    command = [python, "-m", "evalplus.evaluate", "--dataset", EVALPLUS_DATASET[name], "--samples", str(samples),
               "--parallel", str(workers), "--i-just-wanna-run"]  # fmt: skip
    result = run_measured(command, env, tmp)
    verdicts = {}
    if result_file.exists():
        for task_id, runs in json.loads(result_file.read_text())["eval"].items():
            run = runs[0]
            base = run["base_status"] == "pass"
            verdicts[task_id] = (base, base and run["plus_status"] == "pass")
    return {**result, "verdicts": verdicts}


WALL_TARGET = {"humanevalplus": 0.40, "mbppplus": 0.30}
"""Issue 24's targets: our wall time over EvalPlus 0.3.1's on the canonical solutions."""


def _show(side: str, result: dict, n: int) -> str:
    base = sum(b for b, _ in result["verdicts"].values())
    plus = sum(p for _, p in result["verdicts"].values())
    return (f"  {side:<9} {result['seconds']:7.1f} s  peak {result['peak_mb']:7.0f} MB  "
            f"base {base}/{n}  base+plus {plus}/{n}  exit {result['code']}")  # fmt: skip


def bench(name: str, datasets: Path, workers: int, python: str, tmp: Path, repeats: int = 1) -> None:
    dataset = datasets / FILES[name]
    samples = tmp / f"{name}-samples.jsonl"
    n = write_samples(dataset, samples)
    warm_s = warm_ours(name, dataset, samples, workers, tmp)  # computes (or finds cached) what ours caches
    theirs(python, name, dataset, samples, workers, tmp)  # warms EvalPlus's ground-truth cache
    load = load_average()
    rounds = []
    for _ in range(repeats):  # interleaved, so a drift of the shared machine's speed hits every side alike
        before = load_average()
        mine, other = ours(name, dataset, samples, workers, tmp), theirs(python, name, dataset, samples, workers, tmp)
        rounds.append((mine, other, floor(dataset, workers), before))
    print(f"{name}: {n} canonical solutions, {workers} workers, load before {load}"
          f" (our unmeasured warm-up run: {warm_s:.1f} s)")  # fmt: skip
    for i, (m, o, bare, before) in enumerate(rounds, 1):
        runner_s, evalplus_s, bare_s = m["seconds"], o["seconds"], bare["wall_s"]
        print(
            f"  round {i}: runner {runner_s:.1f} s, evalplus {evalplus_s:.1f} s, "
            f"bare judge {bare_s:.1f} s (floor {bare['floor_s']:.1f} s); runner/evalplus {runner_s / evalplus_s:.2f}x, "
            f"bare/evalplus {bare_s / evalplus_s:.2f}x, runner/bare {runner_s / bare_s:.2f}x (load before {before})"
        )
    if repeats > 1:
        for label, ratio in (("runner/evalplus", lambda r: r[0]["seconds"] / r[1]["seconds"]),
                             ("bare/evalplus", lambda r: r[2]["wall_s"] / r[1]["seconds"]),
                             ("runner/bare", lambda r: r[0]["seconds"] / r[2]["wall_s"])):  # fmt: skip
            ratios = sorted(map(ratio, rounds))
            print(f"  median {label} of {repeats} rounds: {ratios[len(ratios) // 2]:.2f}x "
                  f"(range {ratios[0]:.2f}-{ratios[-1]:.2f})")  # fmt: skip
    median = sorted(rounds, key=lambda r: r[0]["seconds"] / r[1]["seconds"])[len(rounds) // 2]
    print("  " + describe(name, median[2], workers).replace("\n", "\n  "))
    mine, other = median[0], median[1]
    for side, result in (("runner", mine), ("evalplus", other)):
        print(_show(side, result, n))
        if result["code"] not in (0, 2) or not result["verdicts"]:
            print("    " + "\n    ".join(result["output"].strip().splitlines()[-15:]))
    time_ratio = mine["seconds"] / other["seconds"]
    memory_ratio = mine["peak_mb"] / other["peak_mb"] if other["peak_mb"] else float("nan")
    print(
        f"  runner/evalplus: wall {time_ratio:.2f}x (target <= {WALL_TARGET[name]:.2f}), "
        f"peak memory {memory_ratio:.2f}x (target <= 0.25)"
    )
    if median[2]["wall_s"] / other["seconds"] > WALL_TARGET[name]:
        print(f"  the bare judge alone takes {median[2]['wall_s'] / other['seconds']:.2f}x EvalPlus's time: no harness "
              f"meets the {WALL_TARGET[name]:.2f}x target here")  # fmt: skip
    differ = sorted(t for t in mine["verdicts"].keys() | other["verdicts"].keys()
                    if mine["verdicts"].get(t) != other["verdicts"].get(t))  # fmt: skip
    print(
        f"  verdicts (base, base+plus) differ on {len(differ)} of {n} tasks"
        + (f": {', '.join(differ[:20])}" if differ else "")
    )
    for task_id in differ[:20]:
        print(f"    {task_id}: runner {mine['verdicts'].get(task_id)}, evalplus {other['verdicts'].get(task_id)}")


def main(argv: list[str]) -> int:
    options = dict(arg.split("=", 1) for arg in argv if "=" in arg)
    unknown = set(options) - {"datasets", "workers", "sets", "evalplus", "repeats"}
    if unknown or any("=" not in arg for arg in argv):
        raise SystemExit(
            "usage: bench_evalplus.py [datasets=DIR] [workers=N] [sets=humanevalplus,mbppplus] [evalplus=PYTHON] "
            "[repeats=N]"
        )
    default = os.environ.get("RUNNER_DATASETS_DIR") or str(ROOT.parent / "shared" / "datasets")
    datasets = Path(options.get("datasets", default)).resolve()
    if not all((datasets / f).exists() for f in FILES.values()):
        raise SystemExit(f"{datasets} lacks {', '.join(FILES.values())}: pass datasets=DIR")
    workers = int(options.get("workers", 2))
    python = evalplus_python(options.get("evalplus", ""))
    RESULTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=RESULTS) as tmp:
        for name in options.get("sets", "humanevalplus,mbppplus").split(","):
            bench(name, datasets, workers, python, Path(tmp), int(options.get("repeats", 1)))
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
