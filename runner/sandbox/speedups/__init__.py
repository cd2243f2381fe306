"""Speed-ups that reach into CPython or pytest internals, each with its switch (`internals`): with all of them
off the verdicts are the same (tests/test_internals.py)."""
