"""Terminal display width of text, and padding to a width."""

import unicodedata


def display_width(text: str) -> int:
    """Columns `text` takes in a terminal: wide East Asian characters count 2, combining marks 0."""
    width = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def pad(text: str, width: int, align: str = "left") -> str:
    """Pad `text` with spaces to `width` display columns.

    `align` is "left", "right" or "center" (an odd leftover space goes to the right).
    Text already wider than `width` is returned unchanged.
    """
    missing = max(0, width - display_width(text))
    if align == "left":
        return text + " " * missing
    if align == "right":
        return " " * missing + text
    if align == "center":
        left = missing // 2
        return " " * left + text + " " * (missing - left)
    raise ValueError(f"align must be 'left', 'right' or 'center', got {align!r}")
