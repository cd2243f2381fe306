from datetime import date

from syrupy.assertion import SnapshotAssertion

from relnotes import release_notes

DAY = date(2024, 5, 1)
URL = "https://git.example.com/acme/widgets"

LOG = [  # newest first, as git log prints it
    ("9" * 40, "chore(release): 1.4.0"),
    ("8" * 40, "docs: explain the cache"),
    ("7" * 40, "perf(cache): skip hashing twice"),
    ("6" * 40, "fix: crash on empty input"),
    ("5" * 40, "Revert accidental commit"),
    ("4" * 40, "fix(parser): handle CRLF"),
    ("3" * 40, "feat(api): add pagination\n\nRefs: #12"),
    ("2" * 40, "feat: dark mode"),
    ("1" * 40, "feat(Auth): single sign-on"),
]

BREAKING_LOG = [
    ("f" * 40, "refactor(core)!: rename Client to Session"),
    ("e" * 40, "fix(config): read TOML\n\nBREAKING CHANGE: INI files are no longer read"),
    ("d" * 40, "feat: dark mode"),
    ("c" * 40, "feat(api)!: drop v1\n\nBREAKING CHANGE: /v1 routes are gone,\n  use /v2 instead"),
    ("b" * 40, "docs!: the manual moved to the wiki"),
]


def test_release_notes(snapshot: SnapshotAssertion):
    assert release_notes("1.4.0", DAY, LOG, URL) == snapshot


def test_release_notes_without_links(snapshot: SnapshotAssertion):
    assert release_notes("1.4.0", DAY, LOG) == snapshot


def test_reverted_commits_are_left_out(snapshot: SnapshotAssertion):
    log = [("a" * 40, "revert: add pagination\n\nRefs: 3333333")] + LOG
    assert release_notes("1.4.1", DAY, log) == snapshot


def test_nothing_notable():
    assert release_notes("1.4.2", DAY, [("a", "docs: typo"), ("b", "chore: bump deps")]) == (
        "## 1.4.2 (2024-05-01)\n\n_No notable changes._\n"
    )


def test_breaking_changes_section(snapshot: SnapshotAssertion):
    assert release_notes("2.0.0", DAY, BREAKING_LOG, URL) == snapshot


def test_breaking_change_of_an_unlisted_type_only(snapshot: SnapshotAssertion):
    log = [("a" * 40, "build!: require Python 3.11"), ("b" * 40, "chore: tidy")]
    assert release_notes("3.0.0", DAY, log) == snapshot
