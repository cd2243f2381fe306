"""OmegaConf resolvers the config tree uses: a model's default name, and output folders no two jobs share.

`${model_name:${.id}}` is `model.name`'s default, so a run overridden with only `model.id=...` is named
after the model it actually ran. `${unique_dir:'outputs/...'}` (hydra.run.dir and hydra.sweep.dir)
creates the folder atomically and, when another job already holds it, takes the next free `-2`, `-3`, ...
`unique_dir` is cached: Hydra copies the launching process's resolver cache into every job's config
(`load_sweep_config`), so a job that a launcher runs in another process or on another node (joblib, Ray,
Slurm) gets the launching process's sweep folder, not a `-2` of its own.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from omegaconf import OmegaConf

_claimed: dict[str, str] = {}  # path asked for -> folder this process created for it


def model_name_from_id(model_id: str) -> str:
    """A folder- and label-safe name: the last path part without `.gguf`, other than [A-Za-z0-9.] as `_`.

    "qwen3:8b" -> "qwen3_8b", "smollm2-135m" -> "smollm2_135m", "/models/Foo-7B.Q4.gguf" -> "Foo_7B.Q4".
    """
    last = str(model_id).rstrip("/").rsplit("/", 1)[-1].removesuffix(".gguf")
    return re.sub(r"[^A-Za-z0-9.]+", "_", last).strip("_") or "model"


def unique_dir(path: str) -> str:
    """`path`, or `path-2`, `path-3`, ... : the first that this process could create (mkdir is atomic).

    The same `path` asked for again in this process gives the same folder (Hydra resolves it more than once).
    """
    if path in _claimed:
        return _claimed[path]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    candidate, n = path, 1
    while True:
        try:
            os.mkdir(candidate)
            break
        except FileExistsError:
            n += 1
            candidate = f"{path}-{n}"
    _claimed[path] = candidate
    return candidate


def register_resolvers() -> None:
    """Register the resolvers above (idempotent)."""
    OmegaConf.register_new_resolver("model_name", model_name_from_id, replace=True)
    OmegaConf.register_new_resolver("unique_dir", unique_dir, replace=True, use_cache=True)
