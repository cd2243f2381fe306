"""Commit messages in the Conventional Commits 1.0.0 format, parsed into their parts.

A message is a header ``type(scope): description``, then optionally a body and a last paragraph of
footers (``Token: value`` or ``Token #value`` lines, the token made of letters, digits and hyphens).
See https://www.conventionalcommits.org/en/v1.0.0/.
"""

import re
from dataclasses import dataclass

_HEADER = re.compile(
    r"^(?P<type>[A-Za-z]+)(?:\((?P<scope>[^()\s][^()]*)\))?: (?P<description>\S.*)$"
)
_FOOTER = re.compile(r"^(?P<token>[A-Za-z0-9-]+)(?::\s+|\s+#)(?P<value>.*)$")


@dataclass(frozen=True)
class Commit:
    """One conventional commit: its type (lowercased), optional scope, description and the rest."""

    sha: str
    type: str
    scope: str | None
    description: str
    body: str = ""
    footers: tuple[tuple[str, str], ...] = ()

    @property
    def short_sha(self) -> str:
        """The first seven characters of the commit hash."""
        return self.sha[:7]


def parse_commit(sha: str, message: str) -> Commit | None:
    """Parse `message`; None when its first line is not a conventional commit header."""
    lines = message.strip().splitlines()
    if not lines:
        return None
    header = _HEADER.match(lines[0].strip())
    if not header:
        return None
    paragraphs = _paragraphs(lines[1:])
    footers: list[tuple[str, str]] = []
    if paragraphs and all(_FOOTER.match(line) for line in paragraphs[-1]):
        for line in paragraphs.pop():
            match = _FOOTER.match(line)
            footers.append((match["token"], match["value"].strip()))
    body = "\n\n".join("\n".join(p) for p in paragraphs)
    return Commit(
        sha=sha,
        type=header["type"].lower(),
        scope=header["scope"].strip() if header["scope"] else None,
        description=header["description"].strip(),
        body=body,
        footers=tuple(footers),
    )


def _paragraphs(lines: list[str]) -> list[list[str]]:
    """Split lines into paragraphs at blank lines, dropping trailing whitespace."""
    paragraphs: list[list[str]] = []
    current: list[str] = []
    for line in lines:
        if line.strip():
            current.append(line.rstrip())
        elif current:
            paragraphs.append(current)
            current = []
    if current:
        paragraphs.append(current)
    return paragraphs
