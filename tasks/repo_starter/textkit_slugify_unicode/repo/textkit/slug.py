"""URL slugs from arbitrary titles."""

import re

_NON_WORD = re.compile(r"[^a-z0-9]+")


def slugify(text: str, separator: str = "-", max_length: int | None = None) -> str:
    """Return a lowercase URL slug for `text`.

    Runs of anything that is not a letter or digit become one `separator`; the slug never starts
    or ends with the separator. With `max_length`, the slug is cut at the last separator that keeps
    it within `max_length` characters (a single over-long word is cut hard).
    """
    if len(separator) != 1 or separator.isalnum():
        raise ValueError(f"separator must be one non-alphanumeric character, got {separator!r}")
    if max_length is not None and max_length < 1:
        raise ValueError(f"max_length must be at least 1, got {max_length}")
    words = [word for word in _NON_WORD.split(text.lower()) if word]
    slug = separator.join(words)
    if max_length is not None:
        slug = _truncate(slug, separator, max_length)
    return slug


def _truncate(slug: str, separator: str, max_length: int) -> str:
    """Cut `slug` to at most `max_length` characters, preferring a word boundary."""
    if len(slug) <= max_length:
        return slug
    cut = slug[: max_length + 1]
    boundary = cut.rfind(separator)
    if boundary > 0:
        return cut[:boundary]
    return slug[:max_length]
