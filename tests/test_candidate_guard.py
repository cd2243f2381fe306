"""The plain-data guard: exact standard types pass (recursively), anything that could fake equality does not."""

import collections
import re

import pytest

from runner.suites.candidate_guard import NotPlainData, check_plain


@pytest.mark.parametrize(
    "value",
    [
        1, 2.5, 1j, "s", b"b", True, None, [1, (2, {3})], frozenset({1}), {"a": [1]},
        collections.Counter("aab"), collections.OrderedDict(a=1), collections.defaultdict(list, a=[1]),
        collections.deque([1, 2]), re.match("a", "abc"), re.match(b"a", b"abc"),
    ],
)  # fmt: skip
def test_plain_and_standard_values_pass(value):
    check_plain(value)


class Always:
    def __eq__(self, other):
        return True

    def __hash__(self):
        return 0


class Text(str):
    def __getitem__(self, key):
        return Always()


class MyCounter(collections.Counter):
    pass


@pytest.mark.parametrize(
    "value",
    [
        Always(), [1, Always()], {"k": Always()}, {Always(): 1}, collections.Counter({"a": Always()}),
        collections.deque([Always()]), MyCounter("a"), Text("abc"), re.match("a", Text("abc")),
        [*range(1000), Always()], (*"abc", Text("d")), {**dict.fromkeys(range(100)), "k": [Always()]},
    ],
)  # fmt: skip
def test_anything_that_could_fake_equality_is_rejected(value):
    with pytest.raises(NotPlainData):
        check_plain(value)
