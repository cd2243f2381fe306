"""The one hypothesis profile every property suite runs under, and reading its failure reports.

Property suites must give the same verdict on every run: the profile is derandomized (examples are
derived from the test itself, not a random seed), keeps no example database between runs, has a
fixed example budget and no per-example deadline (a slow machine is not a failing candidate).
`PROFILE_SETTINGS` holds the settings as plain data so that the sandbox child, the mutation audit
and this project's tests load the identical profile: in-process via `register_profile`, or inside a
scratch directory via the `conftest.py` that `conftest_source` renders.
"""

from __future__ import annotations

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
    "phases": ["explicit", "reuse", "generate", "target", "shrink"],
}
"""The profile as plain data; `suppress_health_check` names `hypothesis.HealthCheck` members, `phases`
`hypothesis.Phase` members: every phase but `explain`, which only adds comments to a falsifying example
(`falsifying_example` drops them) and, re-running the test a few hundred times under the sandbox's
audit hook, took 8-20 s per failing property suite: enough to turn a plain failure into a timeout."""


def profile_kwargs(max_examples: int | None = None) -> dict[str, Any]:
    """Keyword arguments for `hypothesis.settings`, with an optional example budget override."""
    from hypothesis import HealthCheck, Phase

    kwargs = dict(PROFILE_SETTINGS)
    kwargs["suppress_health_check"] = [HealthCheck[name] for name in PROFILE_SETTINGS["suppress_health_check"]]
    kwargs["phases"] = [Phase[name] for name in PROFILE_SETTINGS["phases"]]
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
    phases = ", ".join(f"Phase.{name}" for name in settings.pop("phases"))
    args = "".join(f"    {key}={value!r},\n" for key, value in settings.items())
    return (
        '"""Loads the runner hypothesis profile (written by runner.suites.hypothesis_profile)."""\n\n'
        "from hypothesis import HealthCheck, Phase, settings\n\n"
        f"settings.register_profile(\n    {PROFILE_NAME!r},\n{args}    suppress_health_check=[{checks}],\n"
        f"    phases=[{phases}],\n)\n"
        f"settings.load_profile({PROFILE_NAME!r})\n"
    )


_EXAMPLE_HEADS = ("Falsifying example:", "Falsifying explicit example:", "Failing test case:")


def falsifying_example(text: str) -> str | None:
    """Hypothesis's shrunk example as one line, `Falsifying example: test_x(a=0, b=0)`, or None.

    Hypothesis spreads the call over several lines and, depending on its version, heads it
    "Falsifying example:" or "Failing test case:"; comments such as "# or any other generated
    value" are dropped.
    """
    lines = text.splitlines()
    for index, line in enumerate(lines):
        head = next((h for h in _EXAMPLE_HEADS if h in line), None)
        if head is None:
            continue
        parts = [line.split(head, 1)[1].strip()]
        if parts[0].endswith("("):
            for follow in lines[index + 1 :]:
                part = follow.split("#", 1)[0].strip().lstrip("E").strip()
                parts.append(part)
                if part == ")":
                    break
        call = " ".join(p for p in parts if p).replace("( ", "(").replace(", )", ")").replace(" )", ")")
        return f"Falsifying example: {call}"
    return None
