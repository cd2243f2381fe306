"""The ETA from measured throughput (runner.job.progress): never from the first sample alone, nor from the time
before the work began; "ETA estimating…" until there is enough to go on. Times are given, not slept."""

import io

import pytest

from runner.job.progress import ESTIMATING, Progress, Throughput


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _progress(total: int, parallel: int = 1, repairs: int = 0, start: float = 1000.0):
    clock = Clock(start)
    throughput = Throughput(parallel, repairs, clock=clock)
    return Progress(total, stream=io.StringIO(), throughput=throughput), throughput, clock


def test_the_first_sample_alone_gives_no_eta():
    progress, _, clock = _progress(10)
    clock.now += 166  # the demo's first sample: everything before it was waiting (model, gold check)
    progress.advance(False)
    assert progress.throughput.eta(1, 10) is None
    assert progress.line().endswith(ESTIMATING)


def test_the_samples_rate_once_a_few_are_done_and_the_time_before_the_work_is_not_counted():
    clock = Clock(0.0)
    clock.now = 166.0  # loading the model and the gold check took 166 s; the job creates the Progress now
    progress = Progress(10, stream=io.StringIO(), throughput=Throughput(1, clock=clock))
    for _ in range(3):
        clock.now += 4.0
        progress.advance(True)
    assert progress.throughput.eta(3, 10) == pytest.approx(7 * 4.0)  # 4 s a sample, 7 to go
    assert "ETA 0:00:28" in progress.line() and "elapsed 0:00:12" in progress.line()


def test_with_parallel_requests_a_whole_first_wave_before_the_samples_rate():
    progress, throughput, clock = _progress(32, parallel=8)
    clock.now += 20.0
    for _ in range(5):  # five of the first wave of 8 finish together: their rate would say 5 per 20 s
        progress.advance(True)
    assert throughput.eta(5, 32) is None  # no answers measured, and the wave is not complete
    for _ in range(3):
        progress.advance(True)
    assert throughput.eta(8, 32) == pytest.approx(20.0 / 8 * 24)  # three more waves of 20 s


def test_before_a_wave_ends_the_answers_tokens_per_second_and_lengths_give_it():
    progress, throughput, clock = _progress(9, parallel=4)
    throughput.answer(tokens=100, seconds=10.0)
    throughput.answer(tokens=300, seconds=30.0)  # 10 tokens/s a request, 200 tokens an answer: 20 s each
    clock.now += 30.0
    progress.advance(True)
    assert throughput.tokens_per_second() == pytest.approx(10.0)
    assert throughput.eta(1, 9, passed=1) == pytest.approx(2 * 20.0)  # 8 to go, 4 at a time: 2 waves of 1 answer
    assert "10 tokens/s a request" in progress.line() and "ETA 0:00:40" in progress.line()


def test_failed_samples_count_their_repairs():
    _, throughput, _ = _progress(9, parallel=4, repairs=1)
    throughput.answer(tokens=200, seconds=20.0)
    throughput.answer(tokens=200, seconds=20.0)
    assert throughput.eta(1, 9, passed=0) == pytest.approx(2 * 2 * 20.0)  # a failed sample: answer and repair


def test_one_answer_is_not_enough_and_empty_answers_are_not_counted():
    _, throughput, _ = _progress(10, parallel=4)
    throughput.answer(tokens=0, seconds=3.0)  # a backend error: no tokens, no throughput
    throughput.answer(tokens=100, seconds=5.0)
    assert throughput.answers == 1 and throughput.eta(1, 10, passed=1) is None


def test_the_demo_job_on_a_loaded_two_core_machine():
    """The measured numbers of a real `python -m runner` (SmolLM2-135M, seed10, 8 slots, repair one): the
    first sample finished 73 s into the work, after these five answers (tokens, seconds of the request); the
    job ended 187 s later. The old estimate, elapsed / done x remaining, said 657 s (it printed 0:11:04)."""
    progress, throughput, clock = _progress(10, parallel=8, repairs=1)
    for tokens, seconds in [(134, 24.8), (232, 34.8), (512, 12.8), (128, 32.9), (140, 34.6)]:
        throughput.answer(tokens, seconds)
    clock.now += 73.0
    progress.advance(False)
    eta = throughput.eta(1, 10, passed=0)
    assert eta is not None and 187 / 2 < eta < 187 * 2, eta
    assert abs(eta - 187) < abs(73.0 / 1 * 9 - 187)


def test_done_is_zero_to_go():
    _, throughput, _ = _progress(2)
    assert throughput.eta(2, 2) == 0.0
