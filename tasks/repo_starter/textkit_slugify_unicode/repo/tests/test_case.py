import pytest

from textkit import camel_to_snake, snake_to_camel, wrap


@pytest.mark.parametrize(
    ("camel", "snake"),
    [("parseHTTPResponse", "parse_http_response"), ("UserID", "user_id"), ("x", "x"), ("", "")],
    ids=["acronym", "trailing_acronym", "single", "empty"],
)
def test_camel_to_snake(camel, snake):
    assert camel_to_snake(camel) == snake


def test_snake_to_camel():
    assert snake_to_camel("user_id") == "userId"
    assert snake_to_camel("user_id", upper_first=True) == "UserId"
    assert snake_to_camel("_private_name") == "_privateName"


def test_wrap_keeps_paragraphs():
    text = "one two three four five\n\nsix seven"
    assert (
        wrap(text, width=10, indent="> ") == "> one two\n> three\n> four\n> five\n\n> six\n> seven"
    )
