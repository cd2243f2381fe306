"""The resource limits every sandboxed suite run is held to."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Limits:
    """Limits for one suite run of one candidate.

    `memory_mb` is address space allowed ABOVE the sandboxed child's own baseline (the warm worker
    has pytest and hypothesis loaded), never an absolute figure; it holds for the whole session that
    runs a job's suites. `timeout_s` (wall clock) and `cpu_s` hold per suite, counted from the suite's
    first test; `max_output_kb` too. The session may run `timeout_s` per suite in all.
    """

    timeout_s: float = 10.0
    cpu_s: float = 10.0
    memory_mb: int = 512
    max_file_mb: int = 16
    max_open_files: int = 64
    max_output_kb: int = 64
    max_processes: int = 16
    network: bool = False
    drop_privileges: bool = True
    hypothesis_examples: int = 100

    @classmethod
    def from_config(cls, cfg) -> Limits:
        """Limits from a `runner.config.SandboxConfig` (or a DictConfig / mapping with those keys).

        Keys the config does not have keep their defaults; keys Limits does not know are ignored.
        """
        names = {f.name for f in fields(cls)}
        if isinstance(cfg, dict):
            values = {k: v for k, v in cfg.items() if k in names}
        else:
            values = {name: getattr(cfg, name) for name in names if _has(cfg, name)}
        return cls(**values)


def _has(cfg, name: str) -> bool:
    try:
        return name in cfg  # DictConfig and other mappings
    except TypeError:
        return hasattr(cfg, name)
