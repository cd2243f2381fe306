"""relnotes: Markdown release notes from Conventional Commits messages."""

from relnotes.changelog import collect, release_notes
from relnotes.commits import Commit, parse_commit
from relnotes.render import render_notes

__all__ = ["Commit", "collect", "parse_commit", "release_notes", "render_notes"]
