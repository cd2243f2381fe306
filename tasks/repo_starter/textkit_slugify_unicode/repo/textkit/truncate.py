"""Shortening text for previews and titles without cutting words in half."""

ELLIPSIS = "…"


def truncate(text: str, limit: int, ellipsis: str = ELLIPSIS) -> str:
    """Return `text` cut to at most `limit` characters, ending with `ellipsis` when it was cut.

    Whitespace runs are collapsed to single spaces first. The cut falls after the last whole word
    that fits together with the ellipsis; when not even the first word fits, the word is cut hard.
    """
    if limit < len(ellipsis) + 1:
        raise ValueError(f"limit {limit} leaves no room for text before {ellipsis!r}")
    collapsed = " ".join(text.split())
    if len(collapsed) <= limit:
        return collapsed
    room = limit - len(ellipsis)
    head = collapsed[: room + 1]
    cut = head.rfind(" ")
    if cut > 0:
        return collapsed[:cut].rstrip(" ,;:.-") + ellipsis
    return collapsed[:room] + ellipsis


def initials(name: str, limit: int = 3) -> str:
    """Upper-case initials of the words of `name`, at most `limit` of them.

    ``"Ada King Lovelace"`` -> ``"AKL"``. Hyphenated parts count as words (``"Jean-Luc Picard"``
    -> ``"JLP"``); a word's initial is its first letter, and words without a letter are skipped.
    """
    words = name.replace("-", " ").split()
    letters = [next((ch for ch in word if ch.isalpha()), "") for word in words]
    return "".join(letter.upper() for letter in letters if letter)[:limit]
