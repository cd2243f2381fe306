"""From a git log to release notes."""

from collections.abc import Iterable
from datetime import date

from relnotes.commits import Commit, parse_commit
from relnotes.render import render_notes


def collect(log: Iterable[tuple[str, str]]) -> list[Commit]:
    """Parse (sha, message) pairs, newest first as `git log` gives them, into commits oldest first.

    Messages that are not conventional commits, and the release commits themselves
    (``chore(release): ...``), are skipped; so are reverted commits: a ``revert`` commit whose
    footer ``Refs: <sha>`` names an earlier commit removes both.
    """
    commits = [c for sha, message in log if (c := parse_commit(sha, message))]
    commits.reverse()
    reverted = {
        value
        for c in commits
        if c.type == "revert"
        for token, value in c.footers
        if token == "Refs"
    }
    return [
        c
        for c in commits
        if not (c.type == "chore" and c.scope == "release")
        and c.type != "revert"
        and not any(c.sha.startswith(ref) for ref in reverted)
    ]


def release_notes(
    version: str, day: date, log: Iterable[tuple[str, str]], repo_url: str | None = None
) -> str:
    """The Markdown notes of `version` from the git log since the previous release."""
    return render_notes(version, day, collect(log), repo_url)
