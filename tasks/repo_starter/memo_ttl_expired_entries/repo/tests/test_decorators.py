from freezegun import freeze_time

from memo import cached


def test_results_are_reused_until_they_expire():
    calls = []

    @cached(ttl=30)
    def square(x):
        calls.append(x)
        return x * x

    with freeze_time("2024-03-01 12:00:00") as clock:
        assert square(3) == 9
        assert square(3) == 9
        clock.tick(30)
        assert square(3) == 9
    assert calls == [3, 3]


def test_keyword_order_does_not_matter_and_unhashable_args_pass_through():
    calls = []

    @cached()
    def join(items, sep="-", end=""):
        calls.append(1)
        return sep.join(items) + end

    assert join(("a", "b"), sep="+", end="!") == "a+b!"
    assert join(("a", "b"), end="!", sep="+") == "a+b!"
    assert join(["a", "b"]) == "a-b"
    assert join(["a", "b"]) == "a-b"
    assert len(calls) == 3
    join.cache_clear()
    assert len(join.cache) == 0
