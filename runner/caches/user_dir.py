"""Where the runner keeps what it can recompute: `$XDG_CACHE_HOME/runner/` (default `~/.cache/runner/`)."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir(*parts: str) -> Path:
    """`<user cache>/runner/<parts...>` (not created here)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "runner", *parts)
