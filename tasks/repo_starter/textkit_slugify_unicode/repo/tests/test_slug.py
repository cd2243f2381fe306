import pytest

from textkit import slugify


def test_ascii_title():
    assert slugify("Hello World") == "hello-world"


def test_punctuation_and_spaces_collapse():
    assert slugify("  Hello,   World!! -- again ") == "hello-world-again"


def test_underscore_is_a_separator():
    assert slugify("snake_case__title") == "snake-case-title"


def test_digits_kept():
    assert slugify("Top 10 tips for 2024") == "top-10-tips-for-2024"


def test_custom_separator():
    assert slugify("Hello World", separator="_") == "hello_world"


def test_nothing_left():
    assert slugify("!!! ??? ...") == ""


def test_max_length_cuts_at_word_boundary():
    assert slugify("the quick brown fox", max_length=13) == "the-quick"
    assert slugify("the quick brown fox", max_length=15) == "the-quick-brown"
    assert slugify("supercalifragilistic", max_length=5) == "super"


@pytest.mark.parametrize("separator", ["", "--", "a", "1"], ids=["empty", "two", "letter", "digit"])
def test_bad_separator(separator):
    with pytest.raises(ValueError):
        slugify("x", separator=separator)


def test_accents_are_dropped():
    assert slugify("Crème brûlée") == "creme-brulee"
    assert slugify("Ångström über Straßen") == "angstrom-uber-strassen"


def test_decomposed_accents_are_not_separators():
    # "e" followed by U+0301 COMBINING ACUTE ACCENT, as macOS file names store it
    assert slugify("Cafe\u0301 au lait") == "cafe-au-lait"


def test_other_scripts_are_kept():
    assert slugify("Привет, мир!") == "привет-мир"
    assert slugify("Καλημέρα κόσμε") == "καλημερα-κοσμε"
    assert slugify("東京 2024") == "東京-2024"


def test_compatibility_characters():
    assert slugify("ＡＢＣ １２３") == "abc-123"
    assert slugify("ﬁle ﬂow") == "file-flow"


def test_max_length_counts_slug_characters():
    assert slugify("Crème brûlée à la carte", max_length=12) == "creme-brulee"
    assert slugify("Привет мир", max_length=8) == "привет"
