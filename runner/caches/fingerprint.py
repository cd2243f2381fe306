"""Content fingerprints of the harness's own code, so that cached verdicts follow the code, not a hand-bumped number.

`harness_fingerprint()` hashes every module of the package that can change a verdict (everything but the
pure reporting modules) together with the installed pytest and hypothesis; it is part of every verdict key,
the gold check's key and the `harness_version` tag. The mutation audit hashes its own modules with
`files_digest` too.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from importlib.metadata import version
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
REPORTING_ONLY = frozenset({
    "report.py", "docs_config.py", "results/compare.py", "results/summary.py", "results/report_figures.py",
    "results/job_figures.py", "results/sweep_figures.py", "results/dataset_record.py", "tracking/runs.py",
    "tracking/sweep_callback.py", "tracking/traces.py", "tracking/run_views.py", "job/progress.py", "job/phases.py",
})  # fmt: skip
"""Modules (relative to the package root) that only present results: editing them keeps cached verdicts."""
VERDICT_LIBRARIES = ("pytest", "hypothesis")


def files_digest(paths: Iterable[Path], *extra: str, root: Path | None = None) -> str:
    """SHA-256 over the files' contents (each prefixed by its path relative to `root`) and `extra` strings."""
    digest = hashlib.sha256()
    for part in extra:
        digest.update(part.encode() + b"\0")
    for path in paths:
        name = str(path.relative_to(root)) if root is not None else path.name
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def harness_sources(root: Path) -> list[Path]:
    """The package's .py files that can change a verdict, in a stable order."""
    return sorted(p for p in root.rglob("*.py") if str(p.relative_to(root)) not in REPORTING_ONLY)


@functools.cache
def fingerprint_of(root: Path) -> str:
    """The fingerprint of the harness whose package lives at `root` (computed once per root and process)."""
    libraries = [f"{name}=={version(name)}" for name in VERDICT_LIBRARIES]
    return files_digest(harness_sources(root), *libraries, root=root)


def harness_fingerprint() -> str:
    """The fingerprint of this harness: its verdict-relevant sources and the pytest/hypothesis versions."""
    return fingerprint_of(PACKAGE_ROOT)
