"""What the worker is told about a failed test or collection: plain facts taken from the exception itself.

Part of the confined child (runner.sandbox.child.pytest_child): the trusted worker classifies these facts
(`runner.sandbox.suite_result`), and the message is what users and repair prompts see.
"""

from __future__ import annotations

import pytest

from runner.sandbox.protocol import Failure
from runner.suites.hypothesis_profile import falsifying_example

MESSAGE_CHARS = 1500
MESSAGE_LINES = 12


def _leaf_exceptions(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaf_exceptions(sub)]
    return [exc]


def _message(excinfo: pytest.ExceptionInfo) -> str:
    notes = [n for n in getattr(excinfo.value, "__notes__", None) or [] if isinstance(n, str)]
    try:
        text = excinfo.exconly()
    except Exception as err:  # a hostile exception's __str__ may raise
        text = f"{type(err).__name__} while describing the failure"
    for note in notes:
        text = text.replace("\n" + note, "")
    message = "\n".join(text.splitlines()[:MESSAGE_LINES])
    example = falsifying_example("\n".join([*notes, text]))
    if example:
        message += "\n" + example
    return message[:MESSAGE_CHARS]


def describe(excinfo: pytest.ExceptionInfo | None, candidate_path: str) -> Failure | None:
    """Plain facts about a failure that the trusted worker classifies (None without an exception)."""
    if excinfo is None:
        return None
    value = excinfo.value
    # pytest wraps a module's import failure in a CollectError raised `from` the original exception
    while isinstance(value, pytest.Collector.CollectError) and value.__cause__ is not None:
        value = value.__cause__
    leaves = _leaf_exceptions(value)
    in_candidate = False
    tb = value.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == candidate_path:
            in_candidate = True
        tb = tb.tb_next
    missing = [leaf.name for leaf in leaves if isinstance(leaf, ModuleNotFoundError)]
    return Failure(
        exc=[type(leaf).__name__ for leaf in leaves],
        errno=[getattr(leaf, "errno", None) for leaf in leaves if isinstance(leaf, OSError)],
        assertion=all(isinstance(leaf, (AssertionError, pytest.fail.Exception)) for leaf in leaves),
        missing_module=missing[0] if missing and isinstance(missing[0], str) else None,
        in_candidate=in_candidate,
        msg=_message(excinfo),
    )
