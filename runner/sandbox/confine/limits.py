"""The resource limits every sandboxed suite run is held to."""

from __future__ import annotations

from dataclasses import dataclass, fields

from runner.config import SandboxConfig

_DEFAULTS = SandboxConfig()


@dataclass(frozen=True)
class Limits:
    """Limits for one suite run of one candidate; defaults from `runner.config.SandboxConfig`.

    `memory_mb` is address space allowed ABOVE the sandboxed child's own baseline (the warm worker
    has pytest and hypothesis loaded), never an absolute figure; it holds for the whole session that
    runs a job's suites. `timeout_s` (wall clock) and `cpu_s` hold per suite, counted from the suite's
    first test; `max_output_kb` too. The session may run `timeout_s` per suite in all.
    """

    timeout_s: float = _DEFAULTS.timeout_s
    cpu_s: float = _DEFAULTS.cpu_s
    memory_mb: int = _DEFAULTS.memory_mb
    max_file_mb: int = _DEFAULTS.max_file_mb
    max_open_files: int = _DEFAULTS.max_open_files
    max_output_kb: int = _DEFAULTS.max_output_kb
    max_processes: int = _DEFAULTS.max_processes
    network: bool = _DEFAULTS.network
    drop_privileges: bool = _DEFAULTS.drop_privileges
    hypothesis_examples: int = _DEFAULTS.hypothesis_examples

    @classmethod
    def from_config(cls, cfg: SandboxConfig) -> Limits:
        """The limits a sandbox config sets (its `workers` is the pool's size, not a limit)."""
        return cls(**{f.name: getattr(cfg, f.name) for f in fields(cls)})
