"""Durations in words ("3 minutes", "an hour") and as clock text ("1:02:03")."""

from datetime import timedelta

MINUTE = 60
HOUR = 60 * MINUTE
DAY = 24 * HOUR
MONTH = 30 * DAY
YEAR = 365 * DAY

# (unit length in seconds, singular phrase, unit name), largest unit first
_UNITS = [
    (YEAR, "a year", "year"),
    (MONTH, "a month", "month"),
    (DAY, "a day", "day"),
    (HOUR, "an hour", "hour"),
    (MINUTE, "a minute", "minute"),
    (1, "a second", "second"),
]


def naturaldelta(value: float | timedelta) -> str:
    """Return a non-negative duration in words, rounded down to its largest whole unit.

    ``naturaldelta(90) == "a minute"``, ``naturaldelta(7200) == "2 hours"``; under a second is
    ``"a moment"``. Months are 30 days and years 365 days. A negative duration is a ValueError.
    """
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds < 0:
        raise ValueError(f"duration must not be negative, got {seconds}")
    for length, singular, name in _UNITS:
        count = int(seconds // length)
        if count == 1:
            return singular
        if count > 1:
            return f"{count} {name}s"
    return "a moment"


def clock(value: float | timedelta) -> str:
    """Return a duration as ``H:MM:SS`` (hours not wrapped at 24), ``-`` prefixed if negative."""
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    sign = "-" if seconds < 0 else ""
    whole = int(abs(seconds))
    hours, rest = divmod(whole, HOUR)
    minutes, secs = divmod(rest, MINUTE)
    return f"{sign}{hours}:{minutes:02d}:{secs:02d}"
