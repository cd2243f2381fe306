from datetime import timedelta

import pytest

from humantime import clock, naturaldelta, parse_duration


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (0.5, "a moment"),
        (1, "a second"),
        (59.9, "59 seconds"),
        (90, "a minute"),
        (3599, "59 minutes"),
        (7200, "2 hours"),
        (86400 * 3, "3 days"),
        (86400 * 45, "a month"),
        (86400 * 800, "2 years"),
    ],
    ids=lambda v: str(v).replace(" ", "_"),
)
def test_naturaldelta(seconds, words):
    assert naturaldelta(seconds) == words
    assert naturaldelta(timedelta(seconds=seconds)) == words


def test_naturaldelta_rejects_negative():
    with pytest.raises(ValueError):
        naturaldelta(-1)


def test_clock():
    assert clock(3723) == "1:02:03"
    assert clock(timedelta(hours=30)) == "30:00:00"
    assert clock(-61) == "-0:01:01"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90", timedelta(seconds=90)),
        ("1h30m", timedelta(hours=1, minutes=30)),
        ("2d 4h", timedelta(days=2, hours=4)),
        ("1.5s", timedelta(seconds=1.5)),
        ("1w 250ms", timedelta(weeks=1, milliseconds=250)),
    ],
    ids=["90", "1h30m", "2d_4h", "1.5s", "1w_250ms"],
)
def test_parse_duration(text, expected):
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", "1x", "30m 1h", "1h1h", "h", "1h 2"],
    ids=["empty", "1x", "30m_1h", "1h1h", "h", "1h_2"],
)
def test_parse_duration_rejects(text):
    with pytest.raises(ValueError):
        parse_duration(text)
