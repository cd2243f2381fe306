"""Moments relative to now, in words: "just now", "5 minutes ago", "yesterday"."""

from datetime import datetime

from humantime.duration import DAY, naturaldelta

JUST_NOW_SECONDS = 10


def naturaltime(value: datetime, now: datetime | None = None) -> str:
    """Return how long ago `value` was, in words.

    Under 10 seconds ago is ``"just now"``; from one day to under two days ago is
    ``"yesterday"``; anything else is ``"<naturaldelta> ago"`` (``"3 minutes ago"``).
    `now` defaults to the current time, timezone-aware in `value`'s timezone when `value` is aware,
    naive local time when it is naive.
    """
    if now is None:
        now = datetime.now(value.tzinfo) if value.tzinfo is not None else datetime.now()
    seconds = (now - value).total_seconds()
    if seconds < JUST_NOW_SECONDS:
        return "just now"
    if DAY <= seconds < 2 * DAY:
        return "yesterday"
    return f"{naturaldelta(seconds)} ago"
