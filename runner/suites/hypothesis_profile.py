"""The one hypothesis profile every property suite runs under, and reading its failure reports.

Property suites must give the same verdict on every run: the profile is derandomized (examples are
derived from the test itself, not a random seed), keeps no example database between runs, has a
fixed example budget and no per-example deadline (a slow machine is not a failing candidate).
`PROFILE_SETTINGS` holds the settings as plain data so that the sandbox child, the mutation audit
and this project's tests load the identical profile: in-process via `register_profile`, or inside a
scratch directory via the `conftest.py` that `conftest_source` renders.
"""

from __future__ import annotations

import re
from typing import Any

PROFILE_NAME = "runner"
"""Name under which the profile is registered with hypothesis."""

PROFILE_SETTINGS: dict[str, Any] = {
    "derandomize": True,
    "database": None,
    "max_examples": 100,
    "deadline": None,
    "print_blob": False,
    "suppress_health_check": ["too_slow"],
}
"""The profile as plain data; `suppress_health_check` names `hypothesis.HealthCheck` members."""


def profile_kwargs(max_examples: int | None = None) -> dict[str, Any]:
    """Keyword arguments for `hypothesis.settings`, with an optional example budget override."""
    from hypothesis import HealthCheck

    kwargs = dict(PROFILE_SETTINGS)
    kwargs["suppress_health_check"] = [HealthCheck[name] for name in PROFILE_SETTINGS["suppress_health_check"]]
    if max_examples is not None:
        kwargs["max_examples"] = max_examples
    return kwargs


def register_profile(max_examples: int = 100) -> None:
    """Register the "runner" profile with `max_examples` examples per property and load it."""
    from hypothesis import settings

    settings.register_profile(PROFILE_NAME, **profile_kwargs(max_examples))
    settings.load_profile(PROFILE_NAME)


def conftest_source(max_examples: int = 100) -> str:
    """Source of a self-contained `conftest.py` that registers and loads the profile.

    It needs only hypothesis, not this package, so it works in any scratch directory.
    """
    settings = dict(PROFILE_SETTINGS, max_examples=max_examples)
    checks = ", ".join(f"HealthCheck.{name}" for name in settings.pop("suppress_health_check"))
    args = "".join(f"    {key}={value!r},\n" for key, value in settings.items())
    return (
        '"""Loads the runner hypothesis profile (written by runner.suites.hypothesis_profile)."""\n\n'
        "from hypothesis import HealthCheck, settings\n\n"
        f"settings.register_profile(\n    {PROFILE_NAME!r},\n{args}    suppress_health_check=[{checks}],\n)\n"
        f"settings.load_profile({PROFILE_NAME!r})\n"
    )


_EXAMPLE_START = re.compile(r"(Falsifying (?:explicit )?example|Failing (?:test case|explicit example)): (.*)$")
_TRACEBACK_PREFIX = re.compile(r"^E?\s*")


def falsifying_example(text: str) -> str | None:
    """The shrunk falsifying example from a failing property's output, as one line.

    Hypothesis prints the example as a call spread over several lines, possibly behind pytest's
    `E   ` prefix: `Falsifying example: test_x(\\n    x=5,\\n)` in older hypothesis releases,
    `Failing test case: test_x(...)` in newer ones (6.170 here). This returns the first one
    joined into a line with hypothesis's own prefix, e.g. `Failing test case: test_x(x=5)`;
    None when the text has no example.
    """
    lines = text.splitlines()
    for index, line in enumerate(lines):
        match = _EXAMPLE_START.search(line)
        if match is None:
            continue
        prefix, head = match.group(1), match.group(2).rstrip()
        if not head.endswith("("):
            return f"{prefix}: {head}"
        column = match.start(1)
        parts: list[str] = []
        for follow in lines[index + 1 :]:
            if follow.rstrip() == follow[:column] + ")" and follow[:column].strip() in ("", "E"):
                break  # the call's closing parenthesis, aligned with the prefix
            parts.append(_TRACEBACK_PREFIX.sub("", follow).strip())
        else:
            return f"{prefix}: {head}{' '.join(parts)}"
        args = " ".join(parts).rstrip(",")
        return f"{prefix}: {head}{args})"
    return None
