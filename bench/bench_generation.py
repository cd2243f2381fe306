"""Generation throughput of the embedded model: slots x threads, and what stopping at the closing fence saves.

For each thread count and slot count (`backend.max_concurrency`), loads the model once and sends `requests`
HumanEval prompts of the evalplus prompt set at once (greedy, the job's own request bodies), so that the
slots batch them; prints the tokens per second over the batch's wall time, beside the load average.
Then, at the default slots, the same prompts with and without the prompt set's stop strings: the tokens per
answer each way and how many extracted-and-sanitized modules differ.

    uv run python bench/bench_generation.py [model=smollm2-135m|qwen25_coder_05b|/path/x.gguf]
        [threads=1,2] [slots=1,4,8] [speculative=none,ngram] [rounds=1] [requests=8] [num_predict=256]
        [compare_stops=true]

More requests than slots measure the sustained rate of a job (the server starts each queued request as a slot
frees); `compare_stops=false` leaves out the stop-string comparison. `speculative` lists the
`backend.speculative` settings to compare, each at every thread and slot count; `rounds=N` repeats the whole
table N times, so that settings compared are measured interleaved.

`model` is a model config name (conf/model/) or a model id (a GGUF path, hf:..., smollm2-135m).
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from load_average import load_average  # this script's folder is on sys.path

from runner.compose import compose_config
from runner.config import BackendConfig, ModelConfig
from runner.generation.backends import GenerationOptions, make_backend
from runner.generation.extract import extract
from runner.generation.prompts import answer_text, first_messages
from runner.generation.sanitize import sanitized
from runner.tasks import load_task_set


def _model(name: str) -> ModelConfig:
    if (Path(__file__).parents[1] / "conf" / "model" / f"{name}.yaml").is_file():
        cfg = compose_config([f"model={name}"])
        return ModelConfig(name=name, id=cfg.model.id, sha256=cfg.model.sha256, num_ctx=2048)
    return ModelConfig(name="bench", id=name, num_ctx=2048)


async def _batch(
    model: ModelConfig, threads: int, slots: int, requests: list, options, speculative: str
) -> tuple[float, list]:
    config = BackendConfig(name="llamacpp", n_threads=threads, max_concurrency=slots, speculative=speculative)
    backend = make_backend(config, model)
    try:
        await backend.describe()  # loads the model outside the timing
        start = time.perf_counter()
        answers = await asyncio.gather(*(backend.generate(m, options) for m in requests))
        wall = time.perf_counter() - start
    finally:
        await backend.aclose()
    return sum(a.completion_tokens for a in answers) / wall, answers


def main(argv: list[str]) -> int:
    args = dict(a.split("=", 1) for a in argv)
    model = _model(args.get("model", "smollm2-135m"))
    threads = [int(t) for t in args.get("threads", "1,2").split(",")]
    slots = [int(s) for s in args.get("slots", "1,4,8").split(",")]
    drafting = args.get("speculative", "none,ngram").split(",")
    count, num_predict = int(args.get("requests", 8)), int(args.get("num_predict", 256))
    cfg = compose_config(["task_set=humaneval", f"task_set.limit={count}"])
    tasks = load_task_set(cfg.task_set, cfg.cache_dir)
    requests = [first_messages(cfg.prompts, task) for task in tasks]
    stops = tuple(cfg.prompts.stop)
    with_stop = GenerationOptions(seed=42, num_predict=num_predict, num_ctx=2048, stop=stops)
    print(f"model {model.id}: {count} HumanEval prompts (prompts=evalplus), num_predict {num_predict}")
    print("| threads | slots | speculative | tokens/s | load average |\n|---|---|---|---|---|")
    for _round in range(int(args.get("rounds", 1))):
        for n_threads in threads:
            for n_slots in slots:
                for speculative in drafting:
                    rate, _ = asyncio.run(_batch(model, n_threads, n_slots, requests, with_stop, speculative))
                    print(f"| {n_threads} | {n_slots} | {speculative} | {rate:.1f} | {load_average()} |", flush=True)
    if args.get("compare_stops", "true") == "false":
        return 0
    without_stop = GenerationOptions(seed=42, num_predict=num_predict, num_ctx=2048)
    _, stopped = asyncio.run(_batch(model, threads[-1], slots[-1], requests, with_stop, drafting[-1]))
    _, unstopped = asyncio.run(_batch(model, threads[-1], slots[-1], requests, without_stop, drafting[-1]))
    differ = 0
    for task, messages, a, b in zip(tasks, requests, stopped, unstopped, strict=True):
        modules = [sanitized(extract(answer_text(messages, g.text), task.entry_point), (task.entry_point,)).code
                   for g in (a, b)]  # fmt: skip
        differ += modules[0] != modules[1]
    mean = [sum(g.completion_tokens for g in answers) / len(answers) for answers in (stopped, unstopped)]
    print(f"stop strings {list(stops)}: {mean[0]:.0f} tokens per answer with them, {mean[1]:.0f} without "
          f"({1 - mean[0] / mean[1]:.0%} fewer); judged modules that differ: {differ} of {len(tasks)}; "
          f"load {load_average()}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
