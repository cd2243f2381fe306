"""Render rows of cells as a text table in one of the built-in styles."""

from collections.abc import Iterable, Sequence
from typing import Any

from tablefmt.cells import cell_text, default_alignments
from tablefmt.width import display_width, pad

STYLE_NAMES = ("plain", "simple", "grid", "markdown", "rst")
ALIGNMENTS = ("left", "right", "center")


def render(
    rows: Iterable[Sequence[Any]],
    headers: Sequence[Any] | None = None,
    style: str = "plain",
    align: str | Sequence[str] | None = None,
    missing: str = "",
) -> str:
    """Return `rows` (and `headers`) as a table in `style`, lines joined by newlines.

    Short rows are filled with `missing`, as are None cells. Columns are aligned as `align` says
    (one of "left", "right", "center" for every column, or one per column); by default columns of
    numbers are right-aligned and others left-aligned. Headers are aligned like their column. No
    line ends with a space. Without rows and headers the table is the empty string.
    """
    if style not in STYLE_NAMES:
        raise ValueError(f"unknown style {style!r}; choose one of {', '.join(sorted(STYLE_NAMES))}")
    body = [[cell_text(value, missing) for value in row] for row in rows]
    head = [cell_text(value, "") for value in headers] if headers else []
    ncols = max([len(row) for row in body] + [len(head)], default=0)
    if ncols == 0:
        return ""
    body = [row + [missing] * (ncols - len(row)) for row in body]
    head = head + [""] * (ncols - len(head)) if head else []
    aligns = _alignments(align, body, ncols, missing)
    widths = [
        max(display_width(row[col]) for row in ([head] if head else []) + body)
        for col in range(ncols)
    ]

    def padded(row: list[str]) -> list[str]:
        return [pad(cell, width, a) for cell, width, a in zip(row, widths, aligns)]

    lines: list[str] = []
    if style == "plain":
        if head:
            lines.append("  ".join(padded(head)))
        for row in body:
            lines.append("  ".join(padded(row)))
    elif style == "simple":
        if head:
            lines.append("  ".join(padded(head)))
            lines.append("  ".join("-" * w for w in widths))
        for row in body:
            lines.append("  ".join(padded(row)))
    elif style == "grid":
        rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
        lines.append(rule)
        if head:
            cells = " | ".join(padded(head))
            lines.append("| " + cells + " |")
            lines.append("+" + "+".join("=" * (w + 2) for w in widths) + "+")
        for index, row in enumerate(body):
            if index:
                lines.append(rule)
            cells = " | ".join(padded(row))
            lines.append("| " + cells + " |")
        lines.append(rule)
    elif style == "markdown":
        if head:
            cells = " | ".join(padded(head))
            lines.append("| " + cells + " |")
            markers = []
            for w, a in zip(widths, aligns):
                if a == "left":
                    markers.append(":" + "-" * (w + 1))
                elif a == "right":
                    markers.append("-" * (w + 1) + ":")
                else:
                    markers.append(":" + "-" * w + ":")
            lines.append("|" + "|".join(markers) + "|")
        for row in body:
            cells = " | ".join(padded(row))
            lines.append("| " + cells + " |")
    elif style == "rst":
        rule = "  ".join("=" * w for w in widths)
        lines.append(rule)
        if head:
            lines.append("  ".join(padded(head)))
            lines.append(rule)
        for row in body:
            lines.append("  ".join(padded(row)))
        lines.append(rule)
    return "\n".join(line.rstrip(" ") for line in lines)


def _alignments(
    align: str | Sequence[str] | None, body: list[list[str]], ncols: int, missing: str
) -> list[str]:
    """The alignment of every column, from `align` or the defaults."""
    if align is None:
        return default_alignments(body, ncols, missing)
    aligns = [align] * ncols if isinstance(align, str) else list(align)
    if len(aligns) != ncols:
        raise ValueError(f"align has {len(aligns)} entries for {ncols} columns")
    for value in aligns:
        if value not in ALIGNMENTS:
            raise ValueError(f"align must be one of {', '.join(ALIGNMENTS)}, got {value!r}")
    return aligns
