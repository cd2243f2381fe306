"""The verdict channel between the confined child and its worker: one dataclass per message kind.

The child (`Channel.send`) writes each message as one line, `<nonce> <JSON object>`, on a pipe the
candidate's stdout/stderr never touch; the worker (`decode`) turns a line back into its dataclass and
refuses anything else. Sent by the child, in the order they normally arrive:

- `Isolation`: which protections `isolation.confine` could apply;
- `Armed`: the candidate's code started executing (the audit hook is armed);
- `Collected`: every suite file has been collected (imported and assertion-rewritten);
- `CollectError`: a suite file (or a node in it) could not be collected;
- `Start`, `Report`: a test started; one phase (setup, call, teardown) of it has a result;
- `Tamper`: the audit hook refused an introspection tool the candidate used;
- `Internal`: pytest's internal error;
- `SuiteDone`: the integrity checks after a suite file's last test, and whether the candidate loaded;
- `Done`: the end of the session, with pytest's exit code and the last integrity checks.

`Failure` carries the plain facts about an exception that the worker classifies (see `suite_result`).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import MISSING, dataclass, field, fields
from typing import ClassVar

PHASES = ("setup", "call", "teardown")

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")


@dataclass
class Failure:
    """Facts about a failed collection or test phase: exception types, errnos, and a short message."""

    exc: list = field(default_factory=list)
    """Names of the leaf exceptions' types (an exception group is flattened)."""
    errno: list = field(default_factory=list)
    """The `errno` of every leaf that is an OSError (whatever the candidate set it to)."""
    assertion: bool = False
    """Every leaf is an assertion failure (or pytest.fail): a plain test failure."""
    missing_module: str | None = None
    in_candidate: bool = False
    """The exception passed through the candidate's module."""
    msg: str = ""

    def __post_init__(self) -> None:
        # An object's default repr names its address, which differs run to run; records and repair prompts must not.
        self.msg = _ADDRESS.sub(" at 0x...>", self.msg)


@dataclass
class Isolation:
    """Which protections `isolation.confine` applied in the child (name -> in force)."""

    kind: ClassVar[str] = "isolation"
    applied: dict


@dataclass
class Armed:
    """The candidate's code started executing; the audit hook is armed."""

    kind: ClassVar[str] = "armed"


@dataclass
class Collected:
    """Every suite file of the session has been collected."""

    kind: ClassVar[str] = "collected"


@dataclass
class CollectError:
    """A suite file, or a node in it, could not be collected."""

    kind: ClassVar[str] = "collect"
    id: str
    outcome: str
    failure: Failure = field(default_factory=Failure)


@dataclass
class Start:
    """A test started (its node id names its suite file)."""

    kind: ClassVar[str] = "start"
    id: str


@dataclass
class Report:
    """One phase (`setup`, `call`, `teardown`) of a test has a result."""

    kind: ClassVar[str] = "report"
    id: str
    when: str
    outcome: str
    xfail: bool = False
    failure: Failure | None = None

    @property
    def msg(self) -> str:
        """The failure's message ("" for a phase that passed)."""
        return self.failure.msg if self.failure is not None else ""


@dataclass
class Tamper:
    """The audit hook refused a tool the candidate used to reach into the harness."""

    kind: ClassVar[str] = "tamper"
    why: str


@dataclass
class Internal:
    """pytest's internal error."""

    kind: ClassVar[str] = "internal"
    msg: str


@dataclass
class SuiteDone:
    """A suite file's last test has finished: the integrity checks then, and whether the candidate loaded."""

    kind: ClassVar[str] = "suite_done"
    file: str
    tamper: list = field(default_factory=list)
    load: str | None = None
    """Why the candidate could not be loaded (`ExcType: message`), or None."""


@dataclass
class Done:
    """The end of the session: pytest's exit code, the last integrity checks, whether the candidate loaded."""

    kind: ClassVar[str] = "done"
    exit: int
    tamper: list = field(default_factory=list)
    load: str | None = None


Message = Isolation | Armed | Collected | CollectError | Start | Report | Tamper | Internal | SuiteDone | Done
KINDS: dict[str, type] = {cls.kind: cls for cls in Message.__args__}
"""Each message class by its kind on the wire."""
_TYPES: dict[str, type | tuple[type, ...]] = {
    "str": str, "int": int, "bool": bool, "list": list, "dict": dict, "str | None": (str, type(None)),
}  # fmt: skip
_SCHEMAS = {
    cls: tuple((f.name, f.type, f.default is MISSING and f.default_factory is MISSING) for f in fields(cls))
    for cls in (*KINDS.values(), Failure)
}
"""Per class: (field name, annotation, required) for decoding."""


class Channel:
    """The child's end of the verdict channel: one message per line, `<nonce> <JSON>`.

    It keeps its own references to `os.write`, `os.getpid`, `json.dumps` and `vars`, taken before
    the candidate is imported, and only ever writes from the process that created it.
    """

    def __init__(self, fd: int, nonce: str) -> None:
        self._fd, self._nonce = fd, nonce
        self._pid = os.getpid()
        self._write, self._getpid, self._dumps, self._vars = os.write, os.getpid, json.dumps, vars

    def send(self, message: Message) -> None:
        """Send one message; a no-op in any process the candidate forked."""
        if self._getpid() != self._pid:
            return
        body = {"k": message.kind, **self._vars(message)}
        failure = body.get("failure")
        if failure is not None:
            body["failure"] = self._vars(failure)
        data = (self._nonce + " " + self._dumps(body) + "\n").encode("utf-8", "replace")
        while data:
            data = data[self._write(self._fd, data) :]


def decode(text: str) -> Message:
    """The message one channel line carries (after its nonce); ValueError unless it is well formed."""
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("not a message")
    kind = value.pop("k", None)
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError("a message of no known kind")
    message = _build(KINDS[kind], value)
    if isinstance(message, Report) and message.when not in PHASES:
        raise ValueError("report without a phase")
    return message


def _build(cls: type, data: dict):
    values = {}
    for name, annotation, required in _SCHEMAS[cls]:
        if name not in data:
            if required:
                raise ValueError(f"{cls.__name__} without {name}")
            continue
        value = data[name]
        if annotation.startswith("Failure"):
            if value is not None or annotation == "Failure":
                if not isinstance(value, dict):
                    raise ValueError(f"{cls.__name__}.{name} is not an object")
                value = _build(Failure, value)
        elif not isinstance(value, _TYPES[annotation]):
            raise ValueError(f"{cls.__name__}.{name} is not of type {annotation}")
        values[name] = value
    return cls(**values)


def authenticated(raw_lines, nonce: str, violations: list[str]):
    """The payload of each non-empty channel line that starts with `nonce`; any other line is a violation."""
    prefix = nonce + " "
    for raw in raw_lines:
        if not raw:
            continue
        line = raw.decode("utf-8", "replace")
        if line.startswith(prefix):
            yield line[len(prefix) :]
        else:
            violations.append("an unauthenticated message on the verdict channel")
