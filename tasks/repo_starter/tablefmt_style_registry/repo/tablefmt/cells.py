"""Cell values as text, and which columns hold numbers."""

from collections.abc import Sequence
from typing import Any


def cell_text(value: Any, missing: str) -> str:
    """Return the text of one cell: `missing` for None, floats in short form, else str()."""
    if value is None:
        return missing
    if isinstance(value, float):
        return format(value, "g")
    return str(value).replace("\n", " ")


def is_number(text: str) -> bool:
    """True when `text` is a finite decimal number such as "12", "-3.5" or "1e3"."""
    try:
        number = float(text)
    except ValueError:
        return False
    return number - number == 0  # false for inf and nan


def default_alignments(body: Sequence[Sequence[str]], ncols: int, missing: str) -> list[str]:
    """Right for columns whose non-missing cells are all numbers (and at least one), else left."""
    aligns = []
    for col in range(ncols):
        cells = [row[col] for row in body if row[col] != missing]
        aligns.append("right" if cells and all(is_number(c) for c in cells) else "left")
    return aligns
