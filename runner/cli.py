"""Shared entry for the command-line tools: bad input ends in one clear line, not a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable

from hydra.errors import HydraException
from omegaconf.errors import OmegaConfBaseException

from runner.tasks.loader import TaskError


def run(main: Callable[[list[str]], int]) -> None:
    """Run a tool's `main(argv)` and exit with its code; input errors print `error: ...` and exit 1."""
    try:
        code = main(sys.argv[1:])
    except (TaskError, HydraException, OmegaConfBaseException, ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        code = 1
    except KeyboardInterrupt:  # Ctrl-C: the tool's `with` blocks have stopped its workers
        print("interrupted", file=sys.stderr)
        code = 130
    sys.exit(code)
