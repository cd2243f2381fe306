"""A finished job's folder read back: its records and the settings that label and score it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import OmegaConf

from runner.records import AttemptRecord, read_attempts


@dataclass
class Job:
    """One job's records and the settings that label and score it."""

    path: Path
    model: str
    seed: int
    records: list[AttemptRecord]
    task_set: str = "?"
    ks: tuple[int, ...] = (1,)
    ci_level: float = 0.95
    resamples: int = 2000
    boot_seed: int = 0
    label: str = ""
    metrics: dict = field(default_factory=dict)
    recorded: dict = field(default_factory=dict)  # the job's own summary.json, if it has one


def natural_key(text: str) -> tuple:
    """Sort key that orders the numbers inside ids by value: HumanEval/2 before HumanEval/10."""
    return tuple(int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", text))


def load_job(job_dir: Path) -> Job:
    """Read a job directory: attempts.jsonl plus .hydra/config.yaml (or config.yaml) if present."""
    job_dir = Path(job_dir)
    records = read_attempts(job_dir / "attempts.jsonl")
    cfg = None
    for candidate in (job_dir / ".hydra" / "config.yaml", job_dir / "config.yaml"):
        if candidate.is_file():
            cfg = OmegaConf.load(candidate)
            break

    def pick(key: str, fallback):
        value = OmegaConf.select(cfg, key, default=None) if cfg is not None else None
        return fallback if value is None else value

    model = pick("model.name", records[0].model if records else job_dir.name)
    seed = pick("seed", records[0].seed if records else 0)
    summary = job_dir / "summary.json"
    return Job(
        path=job_dir,
        model=str(model),
        seed=int(seed),
        records=records,
        task_set=str(pick("task_set.name", "?")),
        recorded=json.loads(summary.read_text()) if summary.is_file() else {},
        ks=tuple(pick("scoring.k", [1])),
        ci_level=float(pick("scoring.ci_level", 0.95)),
        resamples=int(pick("scoring.bootstrap_resamples", 2000)),
        boot_seed=int(pick("scoring.bootstrap_seed", 0)),
    )


def find_job_dirs(paths: list[Path]) -> list[Path]:
    """Expand sweep directories into their job directories; job directories stay as they are."""
    jobs: list[Path] = []
    for p in map(Path, paths):
        if (p / "attempts.jsonl").is_file():
            jobs.append(p)
        else:
            jobs.extend(sorted(q.parent for q in p.glob("*/attempts.jsonl")))
    return jobs
