"""The experiment config composed from conf/ with Hydra overrides, as `python -m runner` composes it.

A tool's start-up is mostly waiting for this: importing Hydra and composing take about 0.5-0.7 s,
more than judging a hundred samples. So each composed config is kept, unresolved (`${...}` stays as
written and resolves when used), under `<user cache>/runner/config/`, keyed by the SHA-256 of
everything the composition reads: every file under conf/, the schema and resolvers
(`runner/config.py`, `runner/resolvers.py`), the Hydra and OmegaConf versions and the overrides in
order. Changing any of them composes afresh; a composition that fails is never kept, so bad input
fails the same way every time.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
from collections.abc import Sequence
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from runner.caches.content import write_atomic
from runner.caches.user_dir import user_cache_dir

PACKAGE_DIR = Path(__file__).resolve().parent
CONF_DIR = PACKAGE_DIR.parent / "conf"
INPUTS = (PACKAGE_DIR / "config.py", PACKAGE_DIR / "resolvers.py")
"""Besides conf/: the schema the composition merges into and the resolvers it names."""


def compose_config(overrides: Sequence[str] | None = None, cache: Path | None = None) -> DictConfig:
    """The experiment config with Hydra `overrides` applied, in struct mode: from `cache` (default: the
    user cache) when this composition was done before, else composed by Hydra and stored there."""
    from runner.resolvers import register_resolvers

    register_resolvers()
    overrides = list(overrides or [])
    path = (cache or user_cache_dir("config")) / f"{composition_key(overrides)}.yaml"
    with contextlib.suppress(OSError, ValueError):  # a missing or unreadable entry: compose
        cfg = OmegaConf.create(path.read_text(encoding="utf-8"))
        if isinstance(cfg, DictConfig):
            OmegaConf.set_struct(cfg, True)
            return cfg
    cfg = compose_with_hydra(overrides)
    with contextlib.suppress(OSError):  # a read-only cache only costs the next start-up its time
        write_atomic(path, OmegaConf.to_yaml(cfg).encode())
    return cfg


def compose_with_hydra(overrides: Sequence[str]) -> DictConfig:
    """Hydra's composition of conf/config.yaml with `overrides` (no cache)."""
    from hydra import compose, initialize_config_dir

    from runner.config import register_configs

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def composition_key(overrides: Sequence[str]) -> str:
    """SHA-256 of the composition's inputs: conf/'s files (names and bytes), INPUTS, versions, overrides."""
    digest = hashlib.sha256()
    files = [(f"conf/{p.relative_to(CONF_DIR)}", p) for p in sorted(CONF_DIR.rglob("*")) if p.is_file()]
    for name, path in (*files, *((f"runner/{p.name}", p) for p in INPUTS)):
        data = path.read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    for name in ("hydra-core", "omegaconf"):
        digest.update(f"{name}=={importlib.metadata.version(name)}\0".encode())
    for override in overrides:
        digest.update(f"{len(override)}:{override}\0".encode())
    return digest.hexdigest()
