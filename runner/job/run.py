"""One job of a sweep: load tasks, gold-check them, generate and judge, score, track, summarise."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from omegaconf import OmegaConf

import runner
from runner import interrupt
from runner.caches.content import Cache
from runner.caches.fingerprint import harness_fingerprint
from runner.config import Config
from runner.generation.backends import make_backend
from runner.generation.backends.base import BackendError
from runner.generation.backends.server_pool import server_urls
from runner.job.attempts import AttemptWriter, Experiment
from runner.job.phases import Announced, Phases, gold_with_progress
from runner.job.progress import Progress, Throughput
from runner.judging.reference_limits import cpu_limits as reference_cpu_limits
from runner.kinds.base import Bench
from runner.kinds.registry import kind_of
from runner.records import AttemptRecord
from runner.sandbox.workers.pool import Limits, WorkerPool
from runner.tasks import EVALPLUS_IMPORTERS, Task, load_task_set, subset_tag, task_set_hash
from runner.tracking.local_store import StoreError, sqlite_path
from runner.tracking.run_views import log_job_views
from runner.tracking.runs import JobRun, end_status, ensure_store

log = logging.getLogger("runner")


class JobError(RuntimeError):
    """The job could not run; the message says what to change."""


class NotStarted(JobError):
    """The job stopped on bad input before any work: no run opened, no sample generated (runner.job.unstarted)."""


def run_job(cfg: Config, out_dir: Path) -> int:
    """Run one job; returns the exit code (0 trustworthy, 2 finished with unscored or excluded work).

    The job's MLflow run (when tracking is on) is opened once the model answered its preflight (before:
    NotStarted, and no run) and ends FINISHED, FAILED or KILLED (SIGINT / SIGTERM, see runner.interrupt)
    with the job. Each phase of the start says so on stderr (runner.job.phases).
    """
    phases = Phases(cfg.progress)
    phases.job(out_dir, cfg.model.name, cfg.backend.name, cfg.task_set.name)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    tasks = load_task_set(cfg.task_set, cfg.cache_dir)
    if not tasks:
        raise NotStarted(f"task set {cfg.task_set.name!r} selects no tasks; check task_set.ids/limit/created_after")
    tasks = _with_twins(cfg, tasks, out_dir, phases)
    phases.tasks(cfg.task_set.name, len(tasks), cfg.sampling.n)
    if cfg.sampling.temperature == 0 and cfg.sampling.n > 1:
        log.warning("sampling.n=%d at temperature 0: samples differ only by seed (flagged in the run)", cfg.sampling.n)
    runs: list[JobRun] = []  # _run opens the run (at most one); ended here, however _run ends
    try:
        code = asyncio.run(_run(cfg, out_dir, tasks, runs, phases))
    except BaseException as exc:
        for run in runs:
            run.end(end_status(exc))
        raise
    for run in runs:
        run.end("FINISHED")
    return code


def _with_twins(cfg: Config, tasks: list[Task], out_dir: Path, phases: Phases) -> list[Task]:
    """The tasks and their twins (runner.twins; none with twins=off), twins.json written when there are any."""
    if cfg.twins.family == "off":
        return tasks
    from runner.twins.make import twins_record, with_twins

    tasks, skipped, line = with_twins(tasks, cfg.twins.family, cfg.twins.seed, cfg.cache_dir)
    phases.say(line)
    (out_dir / "twins.json").write_text(json.dumps(twins_record(tasks, skipped), indent=2))
    return tasks


def _open_run(cfg: Config, out_dir: Path) -> JobRun:
    try:
        return JobRun(cfg, out_dir)
    except StoreError as exc:
        raise JobError(str(exc)) from None


def _prepare_store(cfg: Config, phases: Phases) -> None:
    started, db = time.monotonic(), sqlite_path(cfg.tracking.uri)
    if db is not None and not db.is_file():
        phases.say(f"tracking store: creating {db} (the first store of an MLflow version takes seconds more)")
    try:
        ensure_store(cfg.tracking)
    except StoreError as exc:
        raise NotStarted(str(exc)) from None
    phases.say(f"tracking store ready in {time.monotonic() - started:.1f}s: {cfg.tracking.uri}")


async def _run(cfg: Config, out_dir: Path, tasks: list[Task], runs: list[JobRun], phases: Phases) -> int:
    from runner.repo.env import environments

    # Preparing the store may create it (seconds on a fresh one) and the gold check runs the references'
    # tests (seconds of CPU): both start first, to overlap loading the model (the gold check also the
    # first generations). The run is opened once the model answered, so a job that stops before (bad
    # input: NotStarted) leaves no run; a store that cannot be used stops the job before any sample.
    store = asyncio.ensure_future(asyncio.to_thread(_prepare_store, cfg, phases)) if cfg.tracking.enabled else None

    async def opened() -> None:  # the run, once open, is ended by run_job however the job ends
        nonlocal store
        if store is not None:
            pending, store = store, None
            await pending
            runs.append(await asyncio.to_thread(_open_run, cfg, out_dir))

    pool = backend = ready = sandbox = None
    try:
        cache = Cache(cfg.cache_dir)
        limits = Limits.from_config(cfg.sandbox)
        envs = environments(cfg)
        pool = WorkerPool(cfg.sandbox.workers, limits, wait=False)
        sandbox = asyncio.ensure_future(phases.watch_sandbox(pool, cfg.sandbox.workers))
        excluded: list[dict] = []

        cpu_limits: dict[str, float] = {}  # from the gold check, which every judging waits for

        async def gold_check() -> set[str]:
            rows = await asyncio.to_thread(_gold_gate, cfg, tasks, pool, limits, cache, out_dir, envs, phases)
            excluded.extend(row for row in rows if row["status"] != "ok")
            cpu_limits.update(reference_cpu_limits(rows))
            return {row["task_id"] for row in excluded}

        ready = asyncio.ensure_future(gold_check())
        backend = make_backend(cfg.backend, cfg.model)
        phases.loading_model(cfg.backend.name, cfg.model.id, cfg.model.name, cfg.backend.base_url)
        started = time.monotonic()
        try:
            identity = await backend.describe()
        except BackendError as exc:
            raise NotStarted(str(exc)) from None
        phases.model_ready(identity, time.monotonic() - started)
        await opened()
        bench = Bench(pool, cfg.gate, cfg.repo, envs, cpu_limits, asdict(limits))
        measure = None
        if cfg.efficiency.enabled:  # passing final answers' cost against the references (runner.efficiency)
            from runner.efficiency.cached_measure import CachedMeasure

            measure = CachedMeasure(pool, cfg.efficiency, cache, bench.limits_key, cfg.task_set.importer)
            phases.say("efficiency: each passing answer is measured against its reference (efficiency=off: not)")

        parallel = max(1, cfg.backend.max_concurrency) * max(1, len(server_urls(cfg.backend)))  # as Experiment runs
        samples = len(tasks) * cfg.sampling.n
        throughput = Throughput(parallel, cfg.repair.max_repairs)  # the work starts now: the ETA counts from here
        progress = Progress(samples, enabled=cfg.progress, throughput=throughput)
        on_progress = runs[0].progress if runs else None

        def advance(done: int, passed: int, total: int) -> None:
            progress.advance(passed > progress.passed)
            if on_progress is not None:
                on_progress(done, passed, total)

        experiment = Experiment(
            cfg=dataclasses.replace(cfg, progress=False),  # the job shows progress itself, with the throughput
            backend=Announced(backend, phases, throughput, samples, parallel),
            model_identity=identity,
            judge=lambda task, code: kind_of(task).judge(task, code, bench),
            judge_key=lambda task, code: kind_of(task).verdict_key(task, code, bench),
            cache=cache,
            writer=AttemptWriter(out_dir / "attempts.jsonl"),
            judge_slots=cfg.sandbox.workers,
            excluded=ready,
            on_progress=advance,
            measure=measure,
        )
        records = await experiment.run(tasks)
        await ready
        isolation = pool.isolation
        tasks = [t for t in tasks if t.id not in {row["task_id"] for row in excluded}]
    finally:
        if sandbox is not None:
            sandbox.cancel()
        if ready is not None:
            ready.cancel()
        if pool is not None:
            pool.close(kill=interrupt.received() is not None)  # interrupted: the jobs in flight are discarded
        if backend is not None:
            await backend.aclose()
        if store is not None:  # the job stopped before the model answered: the store is made, no run opened
            await asyncio.gather(store, return_exceptions=True)
    return _finish(cfg, out_dir, tasks, excluded, records, identity, isolation, cache, runs[0] if runs else None)


def _gold_gate(cfg: Config, tasks: list[Task], pool: WorkerPool, limits: Limits, cache: Cache, out_dir: Path,
               envs=None, phases: Phases | None = None) -> list[dict]:  # fmt: skip
    """Run the gold check (cached; `gold check i/N` lines on `phases`); returns every task's row, or aborts
    when configured to."""
    if not cfg.gold.enabled:
        return []
    from runner.judging.gold_check import gold_rows

    # the task set's own gate (profile and mode) and repo settings; each reference run judging.repeats times
    bench = Bench(pool, cfg.gate, cfg.repo, envs, gold_repeats=cfg.judging.repeats)
    phases = phases or Phases(enabled=False)

    def check(tasks: list) -> list:  # task by task, 4 at a time, to count them done
        return gold_with_progress(tasks, lambda t: kind_of(t).gold(t, bench), phases)

    repeats = () if cfg.judging.repeats == 1 else (("repeats", cfg.judging.repeats),)  # 1: the key it always had
    rows, cached = gold_rows(tasks, cache, (asdict(limits), *repeats), check, lambda t: kind_of(t).config_key(bench))
    if cached:
        phases.say(f"gold check: {cached} of {len(rows)} tasks' results cached from an earlier job")
    (out_dir / "gold.json").write_text(json.dumps(rows, indent=2))
    bad = [r for r in rows if r["status"] != "ok"]
    phases.say(f"gold check: {len(rows) - len(bad)}/{len(rows)} references pass their own tests")
    twins = {t.id for t in tasks if getattr(t, "twin_of", "")}
    if any(r["task_id"] in twins for r in bad):  # a twin whose reference fails is excluded, never judged
        phases.say(f"gold check: {sum(r['task_id'] in twins for r in bad)} twin(s) excluded (reasons: gold.json)")
        bad = [r for r in bad if r["task_id"] not in twins]
    if bad:
        lines = "\n".join(f"  {r['task_id']}: {r['status']} {r['detail']}" for r in bad)
        if cfg.gold.on_failure == "abort":
            raise JobError(f"gold check failed for {len(bad)} task(s); their references fail their own tests:\n{lines}")
        log.error("GOLD CHECK FAILED for %d task(s); excluded from scoring:\n%s", len(bad), lines)
    return rows


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
    from runner.results.efficiency_scores import score_records
    from runner.results.job_figures import figures_for_job
    from runner.results.run_limits import noise_metrics
    from runner.results.scoring import DEFAULT_LEVELS, EVALPLUS_LEVELS, summarize, task_table
    from runner.results.summary import files_line, summary_table
    from runner.results.twin_summary import twin_part
    from runner.strength.mutation_audit import latest_audit_scores

    started = time.perf_counter()
    twins = twin_part(cfg, excluded, records, out_dir)  # the headline is the originals' alone
    metrics = summarize(
        twins.originals,
        ks=tuple(cfg.scoring.k),
        ci_level=cfg.scoring.ci_level,
        resamples=cfg.scoring.bootstrap_resamples,
        seed=cfg.scoring.bootstrap_seed,
        levels=(*DEFAULT_LEVELS, *(EVALPLUS_LEVELS if cfg.task_set.importer in EVALPLUS_IMPORTERS else ())),
    )
    metrics["generations_cached"] = float(cache.hits_by_namespace.get("generation", 0))  # a resumed run's hits
    scoring, eff = cfg.scoring, cfg.efficiency
    efficiency, by_task = score_records(twins.originals, eff.slow_ratio, eff.lean_ratio, scoring.ci_level,
                                        scoring.bootstrap_resamples, scoring.bootstrap_seed)  # fmt: skip
    metrics.update(efficiency)  # empty unless efficiency.enabled measured a passing answer
    rows = [{**r, **by_task.get(r["task_id"], {})}
            for r in task_table(twins.originals, latest_audit_scores(cfg.task_set.name, cfg.cache_dir))]  # fmt: skip
    metrics.update(noise_metrics(rows))  # the score's data and prediction noise (runner.results.noise)
    figures = twins.figures + figures_for_job(cfg, out_dir, twins.originals, metrics, run)  # logged to the run
    table = "\n".join([summary_table(cfg, metrics, rows), *twins.lines, files_line(out_dir, figures)])
    print(table)
    (out_dir / "summary.md").write_text(table + "\n")
    metrics.update(twins.flat)  # MLflow metrics twins_<family>_<key>; summary.json also has them nested
    summary = {**metrics, "twins": twins.nested} if twins.nested else metrics
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True))
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
        # requests answered together at most: a server's requests in flight, or the embedded model's slots
        "backend_in_flight": identity.get("in_flight", identity.get("slots", "")),
        "backend_speculative": identity.get("speculative", ""),  # the embedded model's drafts, when on
        "git_commit": _git_commit(),
        "isolation": ",".join(k for k, v in sorted(isolation.items()) if v) or "none",
        "gold_excluded": ",".join(r["task_id"] for r in excluded),
        "created_after": cfg.task_set.created_after,
        "task_subset": subset_tag(cfg.task_set),
        "flag_temperature0_multisample": str(cfg.sampling.temperature == 0 and cfg.sampling.n > 1).lower(),
    }
    run_info = {"tags": tags, "isolation": isolation, "timings": {"scoring_s": round(time.perf_counter() - started, 3)}}
    run_info["timings"].update(log_job_views(cfg, out_dir, tasks, excluded, records, run))  # dataset, samples, traces
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
    return 2 if unscored or any(r["task_id"] not in twins.twin_ids for r in excluded) else 0


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).parent)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""
