import pytest

from textkit import initials, truncate


def test_short_text_is_only_collapsed():
    assert truncate("  hello   world ", 20) == "hello world"


def test_cut_after_a_whole_word():
    assert truncate("The quick brown fox jumps", 16) == "The quick brown…"
    assert truncate("The quick, brown fox", 11) == "The quick…"
    assert truncate("The quick brown fox", 12, ellipsis="...") == "The quick..."


def test_single_long_word_is_cut_hard():
    assert truncate("Supercalifragilistic", 6) == "Super…"


def test_limit_too_small():
    with pytest.raises(ValueError):
        truncate("abc", 1)


def test_initials():
    assert initials("Ada King Lovelace") == "AKL"
    assert initials("jean-luc picard") == "JLP"
    assert initials("Grace Brewster Murray Hopper", limit=2) == "GB"
    assert initials("  42 Douglas  ") == "D"
