"""The command line of a tool that writes a generated file and whose only option is `--check`."""

from __future__ import annotations

import sys


def check_option(argv: list[str], usage: str) -> int | None:
    """The exit code when `argv` is answered here: 0 after printing `usage` for -h/--help, 1 after one line
    for any argument but --check; None when the tool goes on (`"--check" in argv` tells which way)."""
    if {"-h", "--help"} & set(argv):
        print(usage)
        return 0
    unknown = [a for a in argv if a != "--check"]
    if unknown:
        print(f"error: unknown argument {unknown[0]!r}; the only option is --check (see --help)", file=sys.stderr)
        return 1
    return None
