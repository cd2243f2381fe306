"""Release notes as Markdown, one section per kind of change."""

from collections.abc import Iterable
from datetime import date

from relnotes.commits import Commit

# commit type -> section title, in the order the sections appear
SECTIONS = {"feat": "Features", "fix": "Bug Fixes", "perf": "Performance"}


def render_notes(
    version: str, day: date, commits: Iterable[Commit], repo_url: str | None = None
) -> str:
    """Return the Markdown notes of one release.

    A ``## <version> (<day>)`` heading, then a ``### <title>`` section for each type in SECTIONS
    that has commits, each commit one bullet: ``- **scope:** description (sha)``, the scope part
    left out for unscoped commits, the short sha linked to ``<repo_url>/commit/<sha>`` when
    `repo_url` is given. Within a section, scoped commits come first, sorted by scope, then the
    unscoped ones; otherwise the given order is kept. Other types are left out; a release
    without any listed commit says ``_No notable changes._``.
    """
    commits = list(commits)
    out = [f"## {version} ({day.isoformat()})", ""]
    listed = False
    for kind, title in SECTIONS.items():
        entries = [c for c in commits if c.type == kind]
        if not entries:
            continue
        listed = True
        out += [f"### {title}", ""]
        out += [_bullet(c, c.description, repo_url) for c in _by_scope(entries)]
        out.append("")
    if not listed:
        out += ["_No notable changes._", ""]
    return "\n".join(out)


def _by_scope(commits: list[Commit]) -> list[Commit]:
    scoped = sorted((c for c in commits if c.scope), key=lambda c: c.scope.lower())
    return scoped + [c for c in commits if not c.scope]


def _bullet(commit: Commit, text: str, repo_url: str | None) -> str:
    scope = f"**{commit.scope}:** " if commit.scope else ""
    sha = commit.short_sha
    ref = f"[{sha}]({repo_url.rstrip('/')}/commit/{commit.sha})" if repo_url else sha
    return f"- {scope}{text} ({ref})"
