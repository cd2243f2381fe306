import pytest

from versionkit import Spec, Version, max_satisfying


def test_comparison_clauses():
    spec = Spec.parse(">=1.2.0, <2.0.0")
    assert "1.2.0" in spec and "1.9.9" in spec
    assert "2.0.0" not in spec and "1.1.9" not in spec
    assert Spec.parse("!=1.5.0").contains("1.5.1")
    assert Spec.parse("1.5.0").contains(Version.parse("1.5.0"))


def test_caret_and_tilde():
    assert Spec.parse("^1.2.3").clauses == Spec.parse(">=1.2.3, <2.0.0").clauses
    assert Spec.parse("^0.2.3").clauses == Spec.parse(">=0.2.3, <0.3.0").clauses
    assert Spec.parse("~1.4").clauses == Spec.parse(">=1.4.0, <1.5.0").clauses


def test_bad_clause():
    with pytest.raises(ValueError, match="cannot understand version clause '=>1.0'"):
        Spec.parse(">=0.1, =>1.0")


def test_filter_and_max_satisfying_releases():
    versions = ["1.2.0", "1.10.0", "2.0.0", "1.9.0"]
    assert [str(v) for v in Spec.parse("^1.2").filter(versions)] == ["1.2.0", "1.10.0", "1.9.0"]
    assert max_satisfying(versions, "^1.0") == Version.parse("1.10.0")
    assert max_satisfying(versions, ">=3") is None


def test_max_satisfying_prefers_the_release_over_its_candidates():
    versions = ["1.3.9", "1.4.0", "1.4.0-rc.1", "1.4.0-rc.2", "1.4.0+build.9"]
    assert str(max_satisfying(versions, "^1.0.0")) in ("1.4.0", "1.4.0+build.9")
    assert max_satisfying(["1.4.0-rc.10", "1.4.0-rc.9"], ">=1.4.0-rc.1") == Version.parse(
        "1.4.0-rc.10"
    )
    assert Spec.parse(">1.4.0-rc.1").contains("1.4.0")
