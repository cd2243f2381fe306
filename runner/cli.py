"""The one command-line layer of the `python -m runner.<tool>` tools (evaluate, gold, audit).

Every tool takes `key=value` arguments: its own options (declared as `Option`s) and, for every other
key, a Hydra override of the experiment config, composed by `runner.compose.compose_config` exactly as
`python -m runner` composes it. `-h`/`--help` prints the options with their defaults; bad input ends
in one line on stderr and exit code 1, never a traceback (`run`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from omegaconf.errors import OmegaConfBaseException

from runner.override_errors import message
from runner.tasks.loader import TaskError


class UsageError(ValueError):
    """The command line is wrong; the message says which argument and what to write instead."""


@dataclass(frozen=True)
class Option:
    """One of a tool's own `name=value` options. `default` None means absent unless given."""

    name: str
    help: str
    default: Any = None
    type: Callable[[str], Any] = str
    required: bool = False
    default_text: str = ""  # how to show a default that comes from elsewhere, e.g. "sandbox.workers"
    metavar: str = "VALUE"

    def shown_default(self) -> str:
        """`required`, or `default: ...` as --help shows it."""
        if self.required:
            return "required"
        return "default: " + (self.default_text or ("none" if self.default is None else str(self.default)))


def boolean(text: str) -> bool:
    """`true`/`false` (any case) as a bool."""
    value = {"true": True, "false": False}.get(text.lower())
    if value is None:
        raise ValueError(text)
    return value


_KINDS = {int: "a whole number", float: "a number", boolean: "true or false"}


def help_text(prog: str, about: str, options: Sequence[Option]) -> str:
    """The `--help` page: usage, `about` (a module docstring; its `python -m` usage paragraph left out),
    each option with its default, and a word on the Hydra overrides."""
    width = max([len(o.name) + len(o.metavar) for o in options] + [4]) + 2
    paragraphs = [p for p in about.strip().split("\n\n") if not p.lstrip().startswith("python -m")]
    lines = [f"usage: python -m {prog} [option=value ...] [hydra.override=value ...]", "", "\n\n".join(paragraphs), "",
             "options:"]  # fmt: skip
    lines += [f"  {o.name + '=' + o.metavar:<{width}} {o.help} ({o.shown_default()})"
              for o in options]  # fmt: skip
    lines += ["", "Every other key=value is a Hydra override of the experiment config (conf/), e.g.",
              "  task_set=humanevalplus task_set.limit=20 gate=off sandbox.timeout_s=10"]  # fmt: skip
    return "\n".join(lines)


def parse_args(argv: Sequence[str], options: Sequence[Option], prog: str, about: str) -> tuple[dict, list[str]]:
    """Split `argv` into this tool's options (converted, defaults filled in) and Hydra overrides.

    `-h`/`--help` prints `help_text` and exits 0; a malformed argument raises UsageError.
    """
    if {"-h", "--help"} & set(argv):
        print(help_text(prog, about, options))
        raise SystemExit(0)
    own = {o.name: o for o in options}
    values = {o.name: o.default for o in options if o.default is not None}
    overrides = []
    for arg in argv:
        key, sep, text = arg.partition("=")
        if not sep:
            raise UsageError(f"{prog}: expected key=value arguments, got {arg!r} (see python -m {prog} --help)")
        if key not in own:
            overrides.append(arg)
            continue
        try:
            values[key] = own[key].type(text)
        except (ValueError, KeyError):
            raise UsageError(f"{prog}: {arg!r}: {key} must be {_KINDS.get(own[key].type, 'valid')}") from None
    missing = [o.name for o in options if o.required and o.name not in values]
    if missing:
        raise UsageError(f"{prog}: missing {', '.join(m + '=...' for m in missing)} (see python -m {prog} --help)")
    return values, overrides


def input_errors() -> tuple[type[Exception], ...]:
    """The exceptions that mean bad input, not a bug: Hydra's only if Hydra was imported (a cached
    config needs no Hydra, runner.compose), so that the tools do not import it to catch them."""
    errors: tuple[type[Exception], ...] = (TaskError, OmegaConfBaseException, ValueError, FileNotFoundError)
    hydra_errors = sys.modules.get("hydra.errors")
    return errors if hydra_errors is None else (*errors, hydra_errors.HydraException)


def run(main: Callable[[list[str]], int]) -> None:
    """Run a tool's `main(argv)` and exit with its code; input errors print `error: ...` and exit 1."""
    try:
        code = main(sys.argv[1:])
    except input_errors() as exc:
        print(f"error: {message(exc)}", file=sys.stderr)
        code = 1
    except BrokenPipeError:  # the reader left (`--help | head`): as Python's docs advise, no second error at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    except KeyboardInterrupt:  # Ctrl-C: the tool's `with` blocks have stopped its workers
        print("interrupted", file=sys.stderr)
        code = 130
    sys.exit(code)
