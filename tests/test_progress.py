"""The progress display: redrawn in place on a terminal, whole lines into a file or pipe."""

import io

from runner.job.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_not_a_terminal_gets_whole_lines_never_carriage_returns():
    stream = io.StringIO()
    progress = Progress(3, "samples", stream=stream)
    for passed in (True, False, True):
        progress.advance(passed)
    text = stream.getvalue()
    assert "\r" not in text and text.endswith("\n")
    lines = text.splitlines()
    assert lines[0].split("] ")[1].startswith("1/3 samples, 1 passed")  # the first update, then every few seconds
    assert "3/3 samples, 2 passed" in lines[-1]


def test_a_terminal_redraws_one_line():
    stream = Terminal()
    progress = Progress(2, "samples", stream=stream)
    progress.advance(True)
    progress.advance(True)
    assert stream.getvalue().count("\r") == 2 and stream.getvalue().count("\n") == 1
