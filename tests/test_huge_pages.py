"""Collapsing the warm worker's heap into huge pages: best effort, and harmless where unsupported."""

import os

from runner.sandbox import huge_pages


def test_collapse_is_best_effort_and_keeps_memory_intact():
    data = [bytearray(os.urandom(64)) for _ in range(50_000)]
    before = [bytes(b) for b in data[::997]]
    collapsed = huge_pages.collapse_heap()
    assert collapsed >= 0 and collapsed % (2 << 20) == 0
    assert [bytes(b) for b in data[::997]] == before


def test_only_private_writable_anonymous_mappings_are_candidates():
    ranges = huge_pages._private_anonymous_ranges()
    assert ranges and all(start < end for start, end in ranges)
