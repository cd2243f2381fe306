"""Generation speed of the embedded model against its thread count, alone and beside a test sandbox.

For each n_threads (default: 1, the number of usable cores, and 0 = the runner's own choice), loads
the model once and times `--requests` generations at temperature 0, first with nothing else of ours
running, then beside `--busy` busy-looping children at the sandbox's priority (nice 10, as
runner.sandbox.confine.isolation sets it), which stand in for candidate tests running while the model
generates. Prints tokens per second per case and the load average before and after, since other work
on the machine distorts the figures.

    uv run python bench/bench_threads.py [--model smollm2-135m] [--threads 1,2,0] [--requests 4] [--busy 1]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import time

from load_average import load_average  # this script's folder is on sys.path

from runner.config import BackendConfig, ModelConfig
from runner.generation.backends import GenerationOptions, make_backend

MESSAGES = [
    {"role": "system", "content": "You write Python functions."},
    {"role": "user", "content": "Write a Python function that returns the n-th Fibonacci number, with a docstring."},
]


def _spin() -> None:
    os.nice(10)  # the sandbox children's priority (runner/sandbox/confine/isolation.py)
    while True:
        pass


async def _tokens_per_s(backend, requests: int) -> float:
    options = GenerationOptions(temperature=0.0, seed=42, num_predict=128, num_ctx=2048)
    await backend.generate(MESSAGES, options)  # warm-up: load the model, fill caches
    tokens, seconds = 0, 0.0
    for _ in range(requests):
        gen = await backend.generate(MESSAGES, options)
        tokens += gen.completion_tokens
        seconds += gen.duration_s
    return tokens / seconds if seconds else 0.0


def main() -> None:
    """Print tokens/s per (n_threads, sandbox load) case."""
    cores = len(os.sched_getaffinity(0))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2-135m", help="model.id (packaged name, .gguf path, hf:...)")
    parser.add_argument("--threads", default=",".join(sorted({"1", str(cores)}) + ["0"]), help="n_threads, 0 = auto")
    parser.add_argument("--requests", type=int, default=4)
    parser.add_argument("--busy", type=int, default=1, help="busy children at nice 10 in the second case")
    args = parser.parse_args()
    print(f"cores {cores}, load average before: {load_average()}")
    for n in (int(x) for x in args.threads.split(",")):
        backend = make_backend(BackendConfig(name="llamacpp", n_threads=n), ModelConfig(name="m", id=args.model))
        alone = asyncio.run(_tokens_per_s(backend, args.requests))
        spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
        for p in spinners:
            p.start()
        time.sleep(0.5)
        try:
            beside = asyncio.run(_tokens_per_s(backend, args.requests))
        finally:
            for p in spinners:
                p.kill()
                p.join()
        name = f"0 (auto: {backend.threads_in_use})" if n == 0 else str(n)
        asyncio.run(backend.aclose())
        print(f"n_threads={name}: {alone:6.1f} tokens/s alone, {beside:6.1f} tokens/s beside {args.busy} niced loop(s)")
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
