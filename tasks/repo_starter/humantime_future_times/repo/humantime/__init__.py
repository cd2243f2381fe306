"""humantime: durations and moments in words, and durations parsed from short strings."""

from humantime.duration import clock, naturaldelta
from humantime.parse import parse_duration
from humantime.relative import naturaltime

__all__ = ["clock", "naturaldelta", "naturaltime", "parse_duration"]
