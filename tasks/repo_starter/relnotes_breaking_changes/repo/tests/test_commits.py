from relnotes import parse_commit


def test_header_scope_and_description():
    commit = parse_commit("a" * 40, "Feat(Parser): accept tabs\n")
    assert (commit.type, commit.scope, commit.description) == ("feat", "Parser", "accept tabs")
    assert commit.short_sha == "aaaaaaa"
    assert parse_commit("b", "fix: off by one").scope is None


def test_not_conventional():
    assert parse_commit("c", "Update README") is None
    assert parse_commit("c", "feat:missing space") is None
    assert parse_commit("c", "") is None


def test_body_and_footers():
    message = "fix(io): close files\n\nThe reader leaked.\nTwice.\n\nSecond paragraph.\n\n"
    message += "Refs: #123\nReviewed-by: Ada\nCloses #7"
    commit = parse_commit("d", message)
    assert commit.body == "The reader leaked.\nTwice.\n\nSecond paragraph."
    assert commit.footers == (("Refs", "#123"), ("Reviewed-by", "Ada"), ("Closes", "7"))


def test_last_paragraph_that_is_not_footers_is_body():
    commit = parse_commit("e", "feat: x\n\nJust text: with a colon\nand more")
    assert commit.body == "Just text: with a colon\nand more"
    assert commit.footers == ()


def test_plain_commits_are_not_breaking():
    commit = parse_commit("f", "feat(api): add endpoint\n\nRefs: #1")
    assert commit.breaking is False
    assert commit.breaking_description is None


def test_bang_marks_a_breaking_change():
    commit = parse_commit("g", "feat(api)!: drop the v1 endpoints")
    assert (commit.type, commit.scope, commit.description) == (
        "feat",
        "api",
        "drop the v1 endpoints",
    )
    assert commit.breaking is True
    assert commit.breaking_description == "drop the v1 endpoints"
    unscoped = parse_commit("h", "refactor!: rename Client to Session")
    assert (unscoped.type, unscoped.scope, unscoped.breaking) == ("refactor", None, True)


def test_breaking_change_footer():
    commit = parse_commit(
        "i", "fix(config): read TOML\n\nBody text.\n\nBREAKING CHANGE: INI files are no longer read"
    )
    assert commit.breaking is True
    assert commit.breaking_description == "INI files are no longer read"
    assert commit.body == "Body text."
    assert commit.footers == (("BREAKING CHANGE", "INI files are no longer read"),)
    hyphen = parse_commit("j", "feat: x\n\nBREAKING-CHANGE: the y option is gone")
    assert hyphen.breaking_description == "the y option is gone"


def test_footer_text_wins_over_description_and_may_span_lines():
    message = (
        "feat(cli)!: new flags\n\n"
        "BREAKING CHANGE: --out is now --output,\n"
        "  and -q was removed\n"
        "Refs: #42"
    )
    commit = parse_commit("k", message)
    assert commit.breaking_description == "--out is now --output,\nand -q was removed"
    assert commit.footers == (
        ("BREAKING CHANGE", "--out is now --output,\nand -q was removed"),
        ("Refs", "#42"),
    )
