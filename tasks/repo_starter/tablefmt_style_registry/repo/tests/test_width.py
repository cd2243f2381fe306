import pytest

from tablefmt import display_width, pad


def test_display_width():
    assert display_width("abc") == 3
    assert display_width("東京") == 4
    assert display_width("e\u0301") == 1
    assert display_width("") == 0


def test_pad():
    assert pad("ab", 5) == "ab   "
    assert pad("ab", 5, "right") == "   ab"
    assert pad("ab", 5, "center") == " ab  "
    assert pad("東京", 6, "center") == " 東京 "
    assert pad("toolong", 3) == "toolong"
    with pytest.raises(ValueError):
        pad("x", 3, "middle")
