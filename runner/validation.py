"""The config at the boundary: Hydra's DictConfig in, a checked `runner.config.Config` out.

Every entry point (`python -m runner`, `runner.gold`, `runner.evaluate`) calls `typed_config` once on
the composed config; everything below takes the dataclasses. A bad value ends in one `ConfigError`
line naming the key, the value and what is allowed, before any work starts.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import typing
from collections.abc import Iterator
from enum import Enum
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import ConfigKeyError, MissingMandatoryValue, ValidationError

from runner.config import SPREADABLE, Config, Rule


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
        if (allowed := choices(str(err.full_key))) is not None:
            raise ConfigError(not_a_choice(str(err.full_key), err.value, allowed)) from None
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


def not_a_choice(key: str, value: Any, allowed: tuple[str, ...]) -> str:
    """`<key>=<value> is not allowed; it must be one of ...` for a value outside an enum field's choices."""
    return f"{key}={value!r} is not allowed; it must be one of {', '.join(allowed)}"


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


def _schema_fields(node: type = Config, prefix: str = "") -> Iterator[tuple[str, dataclasses.Field, Any]]:
    """Every leaf field of the schema as (dotted key, field, its type), in declaration order."""
    hints = typing.get_type_hints(node)
    for item in dataclasses.fields(node):
        hint = hints[item.name]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            yield from _schema_fields(hint, f"{prefix}{item.name}.")
        else:
            yield f"{prefix}{item.name}", item, hint


@functools.cache
def _rules() -> tuple[tuple[str, Rule], ...]:
    """The schema's ruled fields and their rules (`runner.config.ruled`), generated from the dataclasses."""
    return tuple((key, item.metadata["rule"]) for key, item, _ in _schema_fields() if "rule" in item.metadata)


def choices(key: str) -> tuple[str, ...] | None:
    """The allowed values of an enum-typed config key (e.g. gate.mode: enforce, report), or None for another key."""
    hint = next((hint for name, _, hint in _schema_fields() if name == key), None)
    return tuple(member.value for member in hint) if isinstance(hint, type) and issubclass(hint, Enum) else None


def rule_text(key: str) -> str | None:
    """What the schema allows for `key` beyond its type (e.g. `>= 0`, `one of exclude, abort`), or None."""
    allowed = choices(key)
    if allowed is not None:
        return "one of " + ", ".join(allowed)
    return next((rule.allowed for name, rule in _rules() if name == key), None)


def _value(cfg: Config, key: str) -> Any:
    node: Any = cfg
    for part in key.split("."):
        node = getattr(node, part)
    return node


def validate(cfg: Config) -> None:
    """Check every value against its range or choices; raises ConfigError naming the first bad one."""
    for key, rule in _rules():
        value = _value(cfg, key)
        if not rule.check(value):
            raise ConfigError(f"{key}={value!r} is not allowed; it must be {rule.allowed}")
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
