"""Greedy paragraph wrapping that keeps blank lines between paragraphs."""


def wrap(text: str, width: int = 72, indent: str = "") -> str:
    """Wrap each paragraph of `text` to `width` columns, prefixing every line with `indent`.

    Paragraphs are separated by blank lines and stay separated by exactly one blank line.
    A word longer than the available width is put on its own line, not broken.
    """
    if width <= len(indent):
        raise ValueError(f"width {width} leaves no room after indent {indent!r}")
    paragraphs = [p.split() for p in text.split("\n\n")]
    return "\n\n".join(_wrap_words(words, width, indent) for words in paragraphs if words)


def _wrap_words(words: list[str], width: int, indent: str) -> str:
    lines: list[str] = []
    current = ""
    for word in words:
        candidate = f"{current} {word}" if current else word
        if current and len(indent) + len(candidate) > width:
            lines.append(indent + current)
            current = word
        else:
            current = candidate
    if current:
        lines.append(indent + current)
    return "\n".join(lines)
