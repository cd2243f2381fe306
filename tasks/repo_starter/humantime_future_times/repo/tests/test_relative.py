from datetime import UTC, datetime, timedelta, timezone

import pytest
import time_machine

from humantime import naturaltime

NOON = datetime(2024, 5, 17, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def at_noon():
    with time_machine.travel(NOON, tick=False):
        yield NOON


PAST = [
    (timedelta(seconds=0), "just now"),
    (timedelta(seconds=9.9), "just now"),
    (timedelta(seconds=10), "10 seconds ago"),
    (timedelta(seconds=90), "a minute ago"),
    (timedelta(hours=1, minutes=59), "an hour ago"),
    (timedelta(days=1, hours=3), "yesterday"),
    (timedelta(days=2), "2 days ago"),
    (timedelta(days=400), "a year ago"),
]


@pytest.mark.parametrize(
    ("ago", "words"), PAST, ids=[f"{w.replace(' ', '_')}-{d.total_seconds():.1f}s" for d, w in PAST]
)
def test_past(at_noon, ago, words):
    assert naturaltime(at_noon - ago) == words


def test_explicit_now_and_other_timezone():
    tokyo = timezone(timedelta(hours=9))
    value = datetime(2024, 5, 17, 20, 55, tzinfo=tokyo)  # 11:55 UTC
    assert naturaltime(value, now=NOON) == "5 minutes ago"


def test_naive_datetimes_use_local_time(time_machine):
    time_machine.move_to(NOON, tick=False)
    assert naturaltime(datetime.now() - timedelta(minutes=3)) == "3 minutes ago"


FUTURE = [
    (timedelta(seconds=5), "just now"),
    (timedelta(seconds=9.9), "just now"),
    (timedelta(seconds=10), "in 10 seconds"),
    (timedelta(seconds=59.5), "in 59 seconds"),
    (timedelta(seconds=90), "in a minute"),
    (timedelta(minutes=45), "in 45 minutes"),
    (timedelta(hours=1, minutes=59), "in an hour"),
    (timedelta(hours=23, minutes=59), "in 23 hours"),
    (timedelta(days=1), "tomorrow"),
    (timedelta(days=1, hours=23), "tomorrow"),
    (timedelta(days=2), "in 2 days"),
    (timedelta(days=60), "in 2 months"),
    (timedelta(days=365), "in a year"),
]


@pytest.mark.parametrize(
    ("ahead", "words"),
    FUTURE,
    ids=[f"{w.replace(' ', '_')}-{d.total_seconds():.1f}s" for d, w in FUTURE],
)
def test_future(at_noon, ahead, words):
    assert naturaltime(at_noon + ahead) == words


def test_future_with_explicit_now_and_other_timezone():
    tokyo = timezone(timedelta(hours=9))
    value = datetime(2024, 5, 17, 21, 5, tzinfo=tokyo)  # 12:05 UTC
    assert naturaltime(value, now=NOON) == "in 5 minutes"


def test_future_naive(time_machine):
    time_machine.move_to(NOON, tick=False)
    assert naturaltime(datetime.now() + timedelta(hours=3)) == "in 3 hours"
