"""Bad command-line input in one line: Hydra's and OmegaConf's override errors named by key, value and what is allowed.

Hydra reports `sampling.temperature=abc` in six lines (its message, OmegaConf's, the config's class,
a hint to set HYDRA_FULL_ERROR) and `model=nope` with every option on its own line and its config
search path. `message(exc)` says the same in one line, e.g.
`sampling.temperature=abc: 'abc' is not a number; sampling.temperature takes a number >= 0`.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from runner.config import Config

_KINDS = {float: "a number", int: "a whole number", bool: "true or false", str: "a string"}


def message(exc: BaseException) -> str:
    """One line for an input error raised while the config is composed (any exception: Hydra's made specific)."""
    options = getattr(exc, "options", None)
    missing = getattr(exc, "missing_cfg_file", None)
    if options is not None and missing:  # hydra.errors.MissingConfigException: an unknown group option
        group, _, name = str(missing).rpartition("/")
        return f"{group}={name}: Could not find '{missing}'; the options of {group} are: {', '.join(options)}"
    override = getattr(exc, "override", None)
    if override is not None:  # hydra.errors.OverrideParseException: not Hydra's override grammar
        reason = str(getattr(exc, "message", exc)).splitlines()[0]
        return (f"{override}: not a valid override ({reason}); write key=value, quoting values with spaces or "
                "brackets, see https://hydra.cc/docs/advanced/override_grammar/basic/")  # fmt: skip
    cause = exc.__cause__
    key = getattr(cause, "full_key", None)
    text = str(exc)
    if key and text.startswith("Error merging override "):  # a value of the wrong type, or not one of the choices
        from runner.validation import choices, not_a_choice

        given = text[len("Error merging override ") :].partition("=")[2]
        if (allowed := choices(str(key))) is not None:
            return not_a_choice(str(key), given, allowed)
        return f"{key}={given}: {given!r} is not {_kind(key)}; {key} takes {_allowed(key)}"
    if key and text.startswith("Could not override "):  # an unknown key
        from runner.validation import unknown_key

        given = text.rpartition(" use +")[2] or str(key)
        return f"{given}: {unknown_key(str(key))}"
    return one_line(text + (f"\n{cause}" if cause is not None and str(cause) not in text else ""))


def one_line(message: str) -> str:
    """A multi-line error message (Hydra's: an unknown config and its choices) folded into one line."""
    kept = []
    for line in message.splitlines():
        if line.startswith("Config search path") or line.startswith("    full_key:"):  # internals, not input
            break
        if line.strip():
            kept.append(line.strip())
    if len(kept) > 2 and kept[1].endswith(":"):  # "Available options in 'task_set':" then one per line
        return f"{kept[0]}; {kept[1]} {', '.join(kept[2:])}"
    return "; ".join(kept)


def field_type(key: str) -> Any:
    """The declared type of a dotted config key (runner.config), or None when the key is not in the schema."""
    node: Any = Config
    hint: Any = None
    for part in key.split("."):
        if not (isinstance(node, type) and dataclasses.is_dataclass(node)):
            return None
        hint = typing.get_type_hints(node).get(part)
        if hint is None:
            return None
        node = hint
    return hint


def _kind(key: str) -> str:
    hint = field_type(key)
    if hint in _KINDS:
        return _KINDS[hint]
    origin = typing.get_origin(hint)
    if origin in (list, tuple):
        item = next(iter(typing.get_args(hint)), None)
        if item in (int, float):
            return f"a list of {_KINDS[item].removeprefix('a ')}s, e.g. [1,5]"
        return "a list, e.g. [a,b]"
    return "a valid value"


def _allowed(key: str) -> str:
    from runner.validation import rule_text

    kind, rule = _kind(key), rule_text(key)
    if rule is None:
        return kind
    return rule if rule.startswith(("a ", "an ", "one of")) else f"{kind} {rule}"
