"""Version ranges such as ``">=1.2.0, <2.0.0"``, ``"^1.2.3"`` and ``"~1.4"``."""

import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from versionkit.version import Version

_OPERATORS: dict[str, Callable[[Version, Version], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": operator.eq,
    "!=": operator.ne,
}
_CLAUSE = re.compile(r"^(>=|<=|>|<|==|!=|\^|~)?\s*(\d+(?:\.\d+){0,2}(?:[-+].*)?)$")


@dataclass(frozen=True)
class Spec:
    """A conjunction of comparisons; a version matches when it satisfies every one of them.

    Clauses are separated by commas. ``^1.2.3`` means ``>=1.2.3, <2.0.0`` (``^0.2.3`` means
    ``>=0.2.3, <0.3.0``); ``~1.2.3`` and ``~1.2`` mean ``>=1.2.x, <1.3.0``. A clause without an
    operator means ``==``. Partial versions (``1.2``) are filled with zeros.
    """

    clauses: tuple[tuple[str, Version], ...]

    @classmethod
    def parse(cls, text: str) -> "Spec":
        """Parse a comma-separated range; ValueError naming the clause that is not understood."""
        clauses: list[tuple[str, Version]] = []
        for raw in text.split(","):
            match = _CLAUSE.match(raw.strip())
            if not match:
                raise ValueError(f"cannot understand version clause {raw.strip()!r}")
            op, version_text = match.group(1) or "==", match.group(2)
            version = Version.parse(_fill(version_text))
            if op == "^":
                upper = version.bump_major() if version.major else version.bump_minor()
                clauses += [(">=", version), ("<", upper)]
            elif op == "~":
                clauses += [(">=", version), ("<", version.bump_minor())]
            else:
                clauses.append((op, version))
        return cls(tuple(clauses))

    def contains(self, version: Version | str) -> bool:
        """True when `version` satisfies every clause."""
        if isinstance(version, str):
            version = Version.parse(version)
        return all(_OPERATORS[op](version, bound) for op, bound in self.clauses)

    def __contains__(self, version: Version | str) -> bool:
        return self.contains(version)

    def filter(self, versions: Iterable[Version | str]) -> list[Version]:
        """The versions that satisfy the range, in the order given."""
        parsed = [v if isinstance(v, Version) else Version.parse(v) for v in versions]
        return [v for v in parsed if self.contains(v)]


def max_satisfying(versions: Iterable[Version | str], spec: Spec | str) -> Version | None:
    """The highest version that satisfies `spec`, or None."""
    if isinstance(spec, str):
        spec = Spec.parse(spec)
    matching = spec.filter(versions)
    return max(matching) if matching else None


def _fill(text: str) -> str:
    """``"1"`` -> ``"1.0.0"``, ``"1.2"`` -> ``"1.2.0"``; anything longer is left alone."""
    core, rest = re.match(r"^([\d.]+)(.*)$", text).groups()
    parts = core.split(".")
    return ".".join(parts + ["0"] * (3 - len(parts))) + rest
