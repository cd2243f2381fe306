import pytest

from versionkit import Version

V = Version.parse


@pytest.mark.parametrize("text", ["1.2.3", "0.0.0", "10.20.30-rc.1+build.5", "1.0.0-x-y.7.z--"])
def test_round_trip(text):
    assert str(V(text)) == text


@pytest.mark.parametrize(
    "text", ["1.2", "01.2.3", "1.2.3-", "1.2.3+", "1.2.3-01", "1.2.3-a..b", "v1.2.3", ""]
)
def test_invalid(text):
    with pytest.raises(ValueError):
        V(text)


def test_core_order_is_numeric():
    assert V("1.2.3") < V("1.10.0") < V("2.0.0")
    assert V("1.2.3") <= V("1.2.3") and V("1.2.3") >= V("1.2.3")
    assert max([V("0.9.0"), V("0.10.0"), V("0.2.0")]) == V("0.10.0")


def test_bumps():
    assert V("1.4.2-rc.1").bump_major() == V("2.0.0")
    assert V("1.4.2").bump_minor() == V("1.5.0")
    assert V("1.4.2").bump_patch() == V("1.4.3")
    assert V("1.4.2-rc.1").bump_patch() == V("1.4.2")


def test_equality_with_other_types():
    assert V("1.0.0") != "1.0.0"
    with pytest.raises(TypeError):
        V("1.0.0") < "1.0.0"


def test_release_outranks_its_prereleases():
    assert V("1.0.0-rc.1") < V("1.0.0")
    assert V("1.0.0") > V("1.0.0-alpha")
    assert V("1.0.0-rc.1") > V("0.9.9")
    assert max([V("2.0.0"), V("2.0.0-rc.2")]) == V("2.0.0")


def test_semver_spec_example_order():
    ordered = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
    ]
    shuffled = [ordered[i] for i in (5, 2, 7, 0, 3, 6, 1, 4)]
    assert [str(v) for v in sorted(V(t) for t in shuffled)] == ordered
    for low, high in zip(ordered, ordered[1:]):
        assert V(low) < V(high) and V(high) > V(low) and V(low) <= V(high)


def test_numeric_identifiers_rank_below_alphanumeric_ones():
    assert V("1.0.0-2") < V("1.0.0-10") < V("1.0.0-a")
    assert V("1.0.0-alpha.9") < V("1.0.0-alpha.10") < V("1.0.0-alpha.a1")
    assert V("1.0.0-rc.1.2") < V("1.0.0-rc.1.2.0")


def test_build_metadata_is_ignored_for_precedence():
    assert V("1.0.0+build.1") == V("1.0.0+build.2") == V("1.0.0")
    assert not V("1.0.0+b") < V("1.0.0+a")
    assert V("1.0.0+b") <= V("1.0.0+a")
    assert len({V("1.0.0+a"), V("1.0.0+b"), V("1.0.0")}) == 1
    assert V("1.0.0-rc.1+exp.sha.5114f85") < V("1.0.0+20130313144700")
    assert str(V("1.0.0+build.1")) == "1.0.0+build.1"
