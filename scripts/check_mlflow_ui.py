"""Check that the MLflow UI shows a sweep's parent run with its nested job runs.

    python scripts/check_mlflow_ui.py                                  # the default store
    python scripts/check_mlflow_ui.py --store sqlite:///mlruns/mlflow.db --experiment runner --port 5055
    python scripts/check_mlflow_ui.py --demo /tmp/mlflow-demo          # populate a demo store first

Steps: (1) read the newest sweep parent run (tag runner.role=sweep, or --parent) and its nested runs
straight from the store; (2) start `mlflow ui --backend-store-uri STORE --host 127.0.0.1 --port P`
and wait for /health; (3) cross-check through the REST API that the server returns the same parent
and children; (4) render pages in headless Chromium (`--dump-dom` after a virtual-time budget, since the UI
is a JavaScript app): the experiment's runs page must list the parent run and count parent +
children ("3 matching runs"; the table nests children under the parent, collapsed), and each
child's run page must name the parent under "Parent run"; (5) save screenshots of the runs page
and of the first child's page (--screenshot, plus a _run0 variant). The server is stopped at the
end. Needs the Debian package `chromium` (`apt-get install -y chromium`). Exit code 0 = all checks
passed.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def populate_demo(directory: Path, experiment: str) -> str:
    """Simulate a two-job sweep (the sweep callback plus two log_job calls) into a new store."""
    sys.path.insert(0, str(ROOT))
    from omegaconf import OmegaConf

    from runner.config import Config, ModelConfig, TrackingConfig
    from runner.records import AttemptRecord
    from runner.results.scoring import summarize, task_table
    from runner.tracking.runs import log_job
    from runner.tracking.sweep_callback import MlflowSweepCallback

    directory.mkdir(parents=True, exist_ok=True)
    uri = f"sqlite:///{directory.resolve()}/mlflow.db"
    tracking = {"enabled": True, "uri": uri, "experiment": experiment, "artifact_root": str(directory / "artifacts")}
    sweep = directory / "multirun" / "demo"
    callback = MlflowSweepCallback()
    callback.on_multirun_start(OmegaConf.create({"tracking": tracking, "hydra": {"sweep": {"dir": str(sweep)}}}))
    for num, (model, seed) in enumerate((("demo_model_a", 1), ("demo_model_b", 1))):
        cfg = Config(model=ModelConfig(name=model, id=model), seed=seed, tracking=TrackingConfig(**tracking))
        records = [
            AttemptRecord(
                f"task_{i}",
                0,
                0,
                seed,
                model,
                [],
                {},
                "",
                "def f(): pass\n",
                "passed" if (i + num) % 3 else "failed",
                True,
            )  # fmt: skip
            for i in range(6)
        ]
        out = sweep / f"{num}_{model}_s{seed}"
        out.mkdir(parents=True, exist_ok=True)
        (out / "attempts.jsonl").write_text("".join(r.to_json() + "\n" for r in records))
        log_job(cfg, out, records, summarize(records, resamples=200), {"demo": "true"}, task_table(records))
    callback.on_multirun_end(OmegaConf.create({"hydra": {"sweep": {"dir": str(sweep)}}}))
    return uri


def expected_runs(store: str, experiment: str, parent: str | None) -> tuple[str, dict, list[dict], int]:
    """(experiment id, parent run, nested runs, number of active runs) read directly from the store."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=store)
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        raise SystemExit(f"no experiment {experiment!r} in {store}")
    if parent is None:
        sweeps = client.search_runs(
            [exp.experiment_id], "tags.`runner.role` = 'sweep'", order_by=["attributes.start_time DESC"]
        )
        if not sweeps:
            raise SystemExit(f"no sweep parent run (tag runner.role=sweep) in experiment {experiment!r}")
        parent = sweeps[0].info.run_id
    parent_run = client.get_run(parent)
    children = client.search_runs([exp.experiment_id], f"tags.mlflow.parentRunId = '{parent}'")
    as_dict = [{"run_id": r.info.run_id, "run_name": r.info.run_name} for r in children]
    total = len(client.search_runs([exp.experiment_id], max_results=50000))
    return exp.experiment_id, {"run_id": parent, "run_name": parent_run.info.run_name}, as_dict, total


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url: str, timeout_s: float, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"mlflow ui exited early with code {server.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(1)
    raise SystemExit(f"mlflow ui did not answer {url} within {timeout_s:.0f}s")


def rest_children(base: str, experiment_id: str, parent: str) -> list[str]:
    """Run ids the server returns for the parent's nested runs (REST API runs/search)."""
    body = json.dumps(
        {"experiment_ids": [experiment_id], "filter": f"tags.mlflow.parentRunId = '{parent}'", "max_results": 1000}
    ).encode()
    request = urllib.request.Request(f"{base}/api/2.0/mlflow/runs/search", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return [r["info"]["run_id"] for r in json.load(response).get("runs", [])]


def chromium(binary: str, args: list[str], timeout_s: float) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        return subprocess.run(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )


def render(binary: str, url: str, budget_ms: int, screenshot: Path | None = None) -> str:
    """The text of `url`'s DOM after `budget_ms` of virtual time; optionally also a 1600x1000 screenshot."""
    budget = f"--virtual-time-budget={budget_ms}"
    dom = chromium(binary, [budget, "--dump-dom", url], 240).stdout
    if screenshot is not None:
        chromium(binary, [budget, "--window-size=1600,1000", f"--screenshot={screenshot.resolve()}", url], 240)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", dom)).split())  # the page's visible text


def check(ok: bool, what: str, failures: list[str]) -> None:
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        failures.append(what)


def main(argv: list[str] | None = None) -> int:
    """Run the check; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", default="sqlite:///mlruns/mlflow.db", help="backend store URI")
    parser.add_argument("--experiment", default="runner")
    parser.add_argument("--parent", help="sweep parent run id (default: the newest sweep run)")
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument("--screenshot", type=Path, default=Path("mlflow_ui.png"))
    parser.add_argument("--demo", type=Path, help="first populate a demo store in this directory and use it")
    parser.add_argument("--budget-ms", type=int, default=30000, help="Chromium virtual-time budget")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for the server")
    args = parser.parse_args(argv)

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        print("chromium not found: apt-get install -y chromium", file=sys.stderr)
        return 2
    store = populate_demo(args.demo, args.experiment) if args.demo else args.store
    experiment_id, parent, children, total = expected_runs(store, args.experiment, args.parent)
    print(f"store: parent {parent['run_name']!r} ({parent['run_id']}) with {len(children)} nested run(s):")
    for c in children:
        print(f"  - {c['run_name']!r} ({c['run_id']})")

    port = args.port or free_port()
    base = f"http://127.0.0.1:{port}"
    mlflow = Path(sys.executable).with_name("mlflow")
    server = subprocess.Popen(
        [str(mlflow), "ui", "--backend-store-uri", store, "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group, so we stop exactly the server and its workers
    )
    failures = []
    try:
        wait_for(f"{base}/health", args.timeout, server)
        print(f"server: {base} is up")
        served = rest_children(base, experiment_id, parent["run_id"])
        same = sorted(served) == sorted(c["run_id"] for c in children)
        check(same, f"REST API returns the same {len(served)} nested run(s) as the store", failures)

        url = f"{base}/#/experiments/{experiment_id}/runs"
        dom = render(binary, url, args.budget_ms, args.screenshot)
        # The runs table nests children under their parent, collapsed; it counts every active run.
        check(parent["run_name"] in dom, f"experiment page lists the parent run {parent['run_name']!r}", failures)
        count = f"{total} matching runs"
        check(count in dom, f"experiment page says {count!r} (the store's active runs, nested ones included)", failures)
        for i, c in enumerate(children):
            shot = args.screenshot.with_name(f"{args.screenshot.stem}_run{i}.png") if i == 0 else None
            page = render(binary, f"{url}/{c['run_id']}", args.budget_ms, shot)
            shown = c["run_name"] in page and "Parent run" in page and parent["run_name"] in page
            check(shown, f"run page of {c['run_name']!r} names parent run {parent['run_name']!r}", failures)
        for png in (args.screenshot, args.screenshot.with_name(f"{args.screenshot.stem}_run0.png")):
            check(png.is_file() and png.stat().st_size > 10_000, f"screenshot {png} written", failures)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    print("OK" if not failures else f"{len(failures)} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
