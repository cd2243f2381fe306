"""One job of a sweep: load tasks, gold-check them, generate and judge, score, track, summarise."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from omegaconf import OmegaConf

import runner
from runner.cache import Cache, content_key
from runner.config import Config
from runner.experiment import AttemptWriter, Experiment, verdict_key
from runner.fingerprint import harness_fingerprint
from runner.generation.backends import make_backend
from runner.generation.backends.base import BackendError
from runner.records import AttemptRecord
from runner.sandbox.pool import Limits, WorkerPool
from runner.store import StoreError
from runner.tasks import EVALPLUS_IMPORTERS, Task, load_task_set, subset_tag, task_set_hash
from runner.tracking import JobRun, end_status

log = logging.getLogger("runner")


class JobError(RuntimeError):
    """The job could not run; the message says what to change."""


def run_job(cfg: Config, out_dir: Path) -> int:
    """Run one job; returns the exit code (0 trustworthy, 2 finished with unscored or excluded work).

    The job's MLflow run (when tracking is on) is opened as the job starts and ends FINISHED, FAILED or
    KILLED (SIGINT / SIGTERM, see runner.interrupt) with it.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    tasks = load_task_set(cfg.task_set, cfg.cache_dir)
    if not tasks:
        raise JobError(f"task set {cfg.task_set.name!r} selects no tasks; check task_set.ids/limit/created_after")
    if cfg.sampling.temperature == 0 and cfg.sampling.n > 1:
        log.warning("sampling.n=%d at temperature 0: samples differ only by seed (flagged in the run)", cfg.sampling.n)
    runs: list[JobRun] = []  # _run opens the run (at most one); ended here, however _run ends
    try:
        code = asyncio.run(_run(cfg, out_dir, tasks, runs))
    except BaseException as exc:
        for run in runs:
            run.end(end_status(exc))
        raise
    for run in runs:
        run.end("FINISHED")
    return code


def _open_run(cfg: Config, out_dir: Path) -> JobRun:
    try:
        return JobRun(cfg, out_dir)
    except StoreError as exc:
        raise JobError(str(exc)) from None


async def _run(cfg: Config, out_dir: Path, tasks: list[Task], runs: list[JobRun]) -> int:
    from runner.judging.judge import judge
    from runner.repo.env import environments
    from runner.repo.judge import judge_repo

    # Opening the run may create the store (seconds on a fresh one) and the gold check runs the references'
    # tests (seconds of CPU): both start first, to overlap loading the model (the gold check also the
    # first generations), and a store that cannot be used stops the job before any sample is generated.
    opening = asyncio.ensure_future(asyncio.to_thread(_open_run, cfg, out_dir)) if cfg.tracking.enabled else None

    async def opened() -> None:  # the run, once open, is ended by run_job however the job ends
        nonlocal opening
        if opening is not None:
            pending, opening = opening, None
            runs.append(await pending)

    pool = backend = ready = None
    try:
        cache = Cache(cfg.cache_dir)
        limits = Limits.from_config(cfg.sandbox)
        envs = environments(cfg)
        pool = WorkerPool(cfg.sandbox.workers, limits, wait=False)
        excluded: list[dict] = []

        async def gold_check() -> set[str]:
            excluded.extend(await asyncio.to_thread(_gold_gate, cfg, tasks, pool, limits, cache, out_dir, envs))
            return {row["task_id"] for row in excluded}

        ready = asyncio.ensure_future(gold_check())
        backend = make_backend(cfg.backend, cfg.model)
        try:
            identity = await backend.describe()
        except BackendError as exc:
            raise JobError(str(exc)) from None
        finally:
            await opened()
        gate_key, repo_key, limits_key = asdict(cfg.gate), _repo_key(cfg), asdict(limits)

        def judge_task(task, code):
            if task.kind == "repo":
                return judge_repo(task, code, pool, envs, cfg.repo.answer, cfg.repo.timeout_s)
            return judge(task, code, pool, cfg.gate)

        experiment = Experiment(
            cfg=cfg,
            backend=backend,
            model_identity=identity,
            judge=judge_task,
            judge_key=lambda task, code: verdict_key(
                task, code, repo_key if task.kind == "repo" else gate_key, limits_key
            ),  # fmt: skip
            cache=cache,
            writer=AttemptWriter(out_dir / "attempts.jsonl"),
            judge_slots=cfg.sandbox.workers,
            excluded=ready,
            on_progress=runs[0].progress if runs else None,
        )
        records = await experiment.run(tasks)
        await ready
        isolation = pool.isolation
        tasks = [t for t in tasks if t.id not in {row["task_id"] for row in excluded}]
    finally:
        if ready is not None:
            ready.cancel()
        if pool is not None:
            pool.close()
        if backend is not None:
            await backend.aclose()
        await opened()  # the job failed before the model was loaded
    return _finish(cfg, out_dir, tasks, excluded, records, identity, isolation, cache, runs[0] if runs else None)


def _gold_gate(
    cfg: Config, tasks: list[Task], pool: WorkerPool, limits: Limits, cache: Cache, out_dir: Path, envs=None
) -> list[dict]:
    """Run the gold check (cached); returns the failing rows, or aborts when configured to."""
    if not cfg.gold.enabled:
        return []
    from runner.gold import gold_check

    gate = asdict(cfg.gate)  # the task set's own gate, profile and mode
    repo = {}  # repo tasks: their environments and time limit (a function-only set keeps its key and call)
    if any(t.kind == "repo" for t in tasks):
        repo = {"envs": envs, "repo_timeout_s": cfg.repo.timeout_s}
    key = content_key(harness_fingerprint(), task_set_hash(tasks), asdict(limits), gate,
                      *([_repo_key(cfg)] if repo else []))  # fmt: skip
    rows = cache.get("gold", key)
    if rows is None:
        results = gold_check(tasks, pool, cfg.gate, **repo)
        rows = [{"task_id": r.task_id, "status": r.status, "detail": r.detail} for r in results]
        rows = cache.put("gold", key, rows)
    (out_dir / "gold.json").write_text(json.dumps(rows, indent=2))
    bad = [r for r in rows if r["status"] != "ok"]
    if bad:
        lines = "\n".join(f"  {r['task_id']}: {r['status']} {r['detail']}" for r in bad)
        if cfg.gold.on_failure == "abort":
            raise JobError(f"gold check failed for {len(bad)} task(s); their references fail their own tests:\n{lines}")
        log.error("GOLD CHECK FAILED for %d task(s); excluded from scoring:\n%s", len(bad), lines)
    return bad


def _repo_key(cfg: Config) -> dict:
    """What of the repo config decides a repo task's verdict (not where its environments are kept)."""
    return {"repo": {k: v for k, v in asdict(cfg.repo).items() if k != "env_dir"}}


def _finish(
    cfg: Config,
    out_dir: Path,
    tasks: list[Task],
    excluded: list[dict],
    records: list[AttemptRecord],
    identity: dict,
    isolation: dict,
    cache: Cache,
    run: JobRun | None,
) -> int:
    from runner.scoring import DEFAULT_LEVELS, EVALPLUS_LEVELS, summarize, task_table
    from runner.strength.audit import latest_audit_scores
    from runner.summary import summary_table

    started = time.perf_counter()
    metrics = summarize(
        records,
        ks=tuple(cfg.scoring.k),
        ci_level=cfg.scoring.ci_level,
        resamples=cfg.scoring.bootstrap_resamples,
        seed=cfg.scoring.bootstrap_seed,
        levels=(*DEFAULT_LEVELS, *(EVALPLUS_LEVELS if cfg.task_set.importer in EVALPLUS_IMPORTERS else ())),
    )
    metrics["generations_cached"] = float(cache.hits_by_namespace.get("generation", 0))  # a resumed run's hits
    rows = task_table(records, latest_audit_scores(cfg.task_set.name, cfg.cache_dir))
    table = summary_table(cfg, metrics, rows)
    print(table)
    (out_dir / "summary.md").write_text(table + "\n")
    (out_dir / "summary.json").write_text(json.dumps(metrics, indent=2, sort_keys=True))
    tags = {
        "harness_version": f"{runner.__version__}+h{harness_fingerprint()[:12]}",
        "task_set": cfg.task_set.name,
        "task_set_hash": task_set_hash(tasks),
        "gate": f"{cfg.gate.name} ({cfg.gate.mode})",
        "backend": identity.get("backend", cfg.backend.name),
        "backend_version": identity.get("server_version", ""),
        "model_id": identity.get("model", cfg.model.id),
        "model_digest": identity.get("model_digest", ""),
        "backend_threads": identity.get("threads", ""),
        "git_commit": _git_commit(),
        "isolation": ",".join(k for k, v in sorted(isolation.items()) if v) or "none",
        "gold_excluded": ",".join(r["task_id"] for r in excluded),
        "created_after": cfg.task_set.created_after,
        "task_subset": subset_tag(cfg.task_set),
        "flag_temperature0_multisample": str(cfg.sampling.temperature == 0 and cfg.sampling.n > 1).lower(),
    }
    run_info = {"tags": tags, "isolation": isolation, "timings": {"scoring_s": round(time.perf_counter() - started, 3)}}
    (out_dir / "run.json").write_text(json.dumps(run_info, indent=2))
    if run is not None:
        started = time.perf_counter()
        run.log_results(cfg, records, metrics, tags, rows)
        run_info["timings"]["tracking_s"] = round(time.perf_counter() - started, 3)
        (out_dir / "run.json").write_text(json.dumps(run_info, indent=2))
        print(f"MLflow run {run.run_id} in {cfg.tracking.uri} (experiment {cfg.tracking.experiment!r})")
    gold = "off" if not cfg.gold.enabled else f"{len(tasks)}/{len(tasks) + len(excluded)} references pass their suites"
    print(f"gold check: {gold}; isolation in force: {tags['isolation']}")
    print(f"cache: {cache.hits} hits, {cache.misses} misses; records in {out_dir / 'attempts.jsonl'}")
    unscored = sum(1 for r in records if r.final and not r.outcome.scored)
    if unscored:
        print(
            f"WARNING: {unscored} sample(s) unscored (backend or harness errors); see attempts.jsonl",
            file=sys.stderr,
        )
    return 2 if unscored or excluded else 0


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).parent)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""
