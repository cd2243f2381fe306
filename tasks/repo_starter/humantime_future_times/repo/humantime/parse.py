"""Durations from short strings such as "1h30m", "90s" or "2d 4h"."""

import re
from datetime import timedelta

_PART = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(ms|w|d|h|m|s)\s*")
_UNIT_SECONDS = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1, "ms": 0.001}


def parse_duration(text: str) -> timedelta:
    """Parse a duration made of number+unit parts (units w, d, h, m, s, ms), e.g. ``"1h 30m"``.

    Each unit may appear once, largest first. A plain number is seconds. Anything else is a
    ValueError naming the text.
    """
    stripped = text.strip()
    if not stripped:
        raise ValueError("empty duration")
    try:
        return timedelta(seconds=float(stripped))
    except ValueError:
        pass
    total = 0.0
    seen: list[str] = []
    position = 0
    for match in _PART.finditer(stripped):
        if match.start() != position:
            break
        number, unit = match.groups()
        if seen and list(_UNIT_SECONDS).index(unit) <= list(_UNIT_SECONDS).index(seen[-1]):
            raise ValueError(f"units out of order or repeated in duration {text!r}")
        seen.append(unit)
        total += float(number) * _UNIT_SECONDS[unit]
        position = match.end()
    if position != len(stripped) or not seen:
        raise ValueError(f"not a duration: {text!r}")
    return timedelta(seconds=total)
