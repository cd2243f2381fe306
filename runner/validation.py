"""The config at the boundary: Hydra's DictConfig in, a checked `runner.config.Config` out.

Every entry point (`python -m runner`, `runner.gold`, `runner.evaluate`) calls `typed_config` once on
the composed config; everything below takes the dataclasses. A bad value ends in one `ConfigError`
line naming the key, the value and what is allowed, before any work starts.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import sys
from collections.abc import Callable
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import ConfigKeyError, MissingMandatoryValue, ValidationError

from runner.config import GATE_MODES, REPO_ANSWERS, Config

GOLD_ON_FAILURE = ("exclude", "abort")
SPREADABLE = ("ollama", "openai")  # the backends whose requests a base_url list spreads over servers
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")


class ConfigError(ValueError):
    """A config value is wrong; the one-line message names the key, the value and what is allowed."""


def typed_config(cfg: DictConfig) -> Config:
    """The composed config as checked dataclasses; raises ConfigError on an unknown key or a bad value.

    Hydra adds `+key=value` overrides with `force_add`, which passes struct mode, so the config is
    merged once more into the schema here: an appended unknown key fails like a misspelled one.
    """
    try:
        plain = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
        plain.pop("hydra", None)
        config = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(Config), plain))
    except ConfigKeyError as err:
        raise ConfigError(unknown_key(str(err.full_key or err.key))) from None
    except MissingMandatoryValue as err:
        raise ConfigError(f"{err.full_key} has no value; set it, e.g. {err.full_key}=...") from None
    except ValidationError as err:
        raise ConfigError(f"{err.full_key}: {err.msg.splitlines()[0]}") from None
    _renamed_repairs(config)
    validate(config)
    return config


def _renamed_repairs(config: Config) -> None:
    """`repair.max_attempts` (the old name, set by a user's override or config) sets `repair.max_repairs`, with a
    one-line note on stderr."""
    old = config.repair.max_attempts
    if old is None:
        return
    print(f"note: repair.max_attempts is now repair.max_repairs (the same count); read as repair.max_repairs={old}. "
          "The old name goes in the next release.", file=sys.stderr)  # fmt: skip
    config.repair.max_repairs, config.repair.max_attempts = old, None


def unknown_key(key: str) -> str:
    """`unknown config key <key>; the keys there are: ...` (the keys of the section it names)."""
    node: Any = Config
    parts = key.split(".")
    for part in parts[:-1]:
        found = {f.name: f for f in dataclasses.fields(node)}.get(part)
        if found is None or not isinstance(found.default_factory, type):
            break
        node = found.default_factory
    known = ", ".join(f.name for f in dataclasses.fields(node))
    return f"unknown config key {key}; the keys there are: {known}"


def _rules() -> list[tuple[str, Callable[[Any], bool], str]]:
    from runner.generation.backends.factory import BACKENDS
    from runner.tasks import IMPORTERS

    positive = (lambda v: v > 0, "> 0")
    count = (lambda v: v >= 1, ">= 1")
    not_negative = (lambda v: v >= 0, ">= 0")
    text = (lambda v: bool(str(v).strip()), "a non-empty string")

    def one_of(*choices: str) -> tuple[Callable[[Any], bool], str]:
        return (lambda v: v in choices, "one of " + ", ".join(choices))

    table: dict[str, tuple[Callable[[Any], bool], str]] = {
        "backend.name": one_of(*sorted(BACKENDS)),
        "backend.base_url": (_is_base_url, "a URL, or a list of distinct URLs (a list: backend=ollama or openai)"),
        "backend.timeout_s": positive,
        "backend.request_timeout_s": positive,
        "backend.retry_total_s": positive,
        "backend.max_concurrency": count,
        "backend.max_retries": not_negative,
        "backend.retry_backoff_s": not_negative,
        "backend.probe_after_s": positive,
        "backend.n_threads": not_negative,
        "model.name": text,
        "model.id": text,
        "model.num_ctx": count,
        "sampling.temperature": not_negative,
        "sampling.top_p": (lambda v: 0 < v <= 1, "in (0, 1]"),
        "sampling.num_predict": count,
        "sampling.n": count,
        "gate.name": text,
        "gate.mode": one_of(*GATE_MODES),
        "gate.allowed_imports": (lambda v: all(_NAME.match(m) for m in v), "a list of module names"),
        "gate.forbidden_calls": (lambda v: all(_NAME.match(m) for m in v), "a list of (dotted) names"),
        "repair.max_repairs": not_negative,
        "repair.feedback_max_chars": (lambda v: v >= 100, ">= 100"),
        "task_set.name": text,
        "task_set.importer": one_of(*IMPORTERS),
        "task_set.gate_mode": one_of(*GATE_MODES),
        "task_set.limit": not_negative,
        "task_set.created_after": (lambda v: v == "" or _is_date(v), "an ISO date YYYY-MM-DD or empty"),
        "tracking.uri": text,
        "tracking.experiment": text,
        "sandbox.workers": count,
        "sandbox.timeout_s": positive,
        "sandbox.cpu_s": positive,
        "sandbox.memory_mb": positive,
        "sandbox.max_file_mb": positive,
        "sandbox.max_open_files": count,
        "sandbox.max_output_kb": count,
        "sandbox.max_processes": count,
        "sandbox.hypothesis_examples": count,
        "gold.on_failure": one_of(*GOLD_ON_FAILURE),
        "repo.answer": one_of(*REPO_ANSWERS),
        "repo.timeout_s": positive,
        "scoring.k": (lambda v: bool(v) and all(k >= 1 for k in v), "a non-empty list of counts >= 1"),
        "scoring.ci_level": (lambda v: 0 < v < 1, "in (0, 1), e.g. 0.95"),
        "scoring.bootstrap_resamples": count,
        "efficiency.budget": (lambda v: v >= 1, ">= 1 (times the reference's instructions)"),
        "efficiency.slow_ratio": positive,
        "efficiency.lean_ratio": positive,
        "efficiency.inputs_per_task": count,
        "efficiency.memory_floor_kb": count,
        "seed": not_negative,
        "cache_dir": text,
    }
    return [(key, check, allowed) for key, (check, allowed) in table.items()]


def rule_text(key: str) -> str | None:
    """What `validate` allows for `key` (e.g. `>= 0`, `one of exclude, abort`), or None when it checks no range."""
    return next((allowed for name, _, allowed in _rules() if name == key), None)


def _is_base_url(value: Any) -> bool:
    if isinstance(value, str):
        return True
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(url, str) and url.strip() for url in value)
        and len({url.rstrip("/") for url in value}) == len(value)
    )


def _is_date(value: str) -> bool:
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _value(cfg: Config, key: str) -> Any:
    node: Any = cfg
    for part in key.split("."):
        node = getattr(node, part)
    return node


def validate(cfg: Config) -> None:
    """Check every value against its range or choices; raises ConfigError naming the first bad one."""
    for key, check, allowed in _rules():
        value = _value(cfg, key)
        if not check(value):
            raise ConfigError(f"{key}={value!r} is not allowed; it must be {allowed}")
    if cfg.efficiency.slow_ratio > cfg.efficiency.budget:  # a too_slow answer counts as a slow pass
        raise ConfigError(
            f"efficiency.slow_ratio={cfg.efficiency.slow_ratio!r} exceeds efficiency.budget={cfg.efficiency.budget!r}; "
            "set slow_ratio at most the budget"
        )
    if isinstance(cfg.backend.base_url, list) and len(cfg.backend.base_url) > 1 and cfg.backend.name not in SPREADABLE:
        raise ConfigError(
            f"backend.base_url lists {len(cfg.backend.base_url)} servers, but backend={cfg.backend.name} talks to no "
            f"server; a list needs backend={' or '.join(SPREADABLE)}"
        )
