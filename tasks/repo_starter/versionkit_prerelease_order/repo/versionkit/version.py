"""Semantic versions (https://semver.org, 2.0.0): parsing, printing, ordering, bumping."""

import re
from dataclasses import dataclass

_NUMBER = r"0|[1-9]\d*"
_IDENT = r"[0-9A-Za-z-]+"
_PATTERN = re.compile(
    rf"^(?P<major>{_NUMBER})\.(?P<minor>{_NUMBER})\.(?P<patch>{_NUMBER})"
    rf"(?:-(?P<pre>{_IDENT}(?:\.{_IDENT})*))?"
    rf"(?:\+(?P<build>{_IDENT}(?:\.{_IDENT})*))?$"
)


@dataclass(frozen=True, eq=False)
class Version:
    """A semantic version: MAJOR.MINOR.PATCH, optional pre-release and build identifiers.

    Versions compare by precedence as the SemVer 2.0.0 specification defines it (section 11).
    """

    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()
    build: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> "Version":
        """Parse `text` such as ``"1.4.0-rc.1+build.7"``; ValueError when it is not SemVer."""
        match = _PATTERN.match(text.strip())
        if not match:
            raise ValueError(f"not a semantic version: {text!r}")
        pre = tuple(match["pre"].split(".")) if match["pre"] else ()
        for identifier in pre:
            if identifier.isdigit() and identifier != "0" and identifier.startswith("0"):
                raise ValueError(f"numeric pre-release identifier with leading zero in {text!r}")
        build = tuple(match["build"].split(".")) if match["build"] else ()
        return cls(int(match["major"]), int(match["minor"]), int(match["patch"]), pre, build)

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(self.prerelease)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    @property
    def is_prerelease(self) -> bool:
        """True for versions with pre-release identifiers, such as ``1.0.0-beta``."""
        return bool(self.prerelease)

    def bump_major(self) -> "Version":
        """The next major version: ``1.4.2-rc.1`` -> ``2.0.0``."""
        return Version(self.major + 1, 0, 0)

    def bump_minor(self) -> "Version":
        """The next minor version: ``1.4.2`` -> ``1.5.0``."""
        return Version(self.major, self.minor + 1, 0)

    def bump_patch(self) -> "Version":
        """The next patch version: ``1.4.2`` -> ``1.4.3``; a pre-release becomes its release."""
        if self.prerelease:
            return Version(self.major, self.minor, self.patch)
        return Version(self.major, self.minor, self.patch + 1)

    def _key(self) -> tuple:
        return (self.major, self.minor, self.patch, self.prerelease, self.build)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __lt__(self, other: "Version") -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()

    def __le__(self, other: "Version") -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self == other or self < other

    def __gt__(self, other: "Version") -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return other < self

    def __ge__(self, other: "Version") -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self == other or other < self
