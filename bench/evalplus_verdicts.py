"""EvalPlus's own verdicts on a few samples: its `check_correctness`, the code path `evalplus.evaluate` runs.

    HUMANEVAL_OVERRIDE_PATH=... MBPP_OVERRIDE_PATH=... PYTHON_WITH_EVALPLUS bench/evalplus_verdicts.py \\
        mbpp|humaneval SAMPLES.jsonl > VERDICTS.jsonl

Run it with an interpreter that has EvalPlus 0.3.1 (bench/bench_evalplus.py makes one under
bench/results/evalplus-venv), the override paths naming our dataset files. `evalplus.evaluate` insists on a
sample for every task of the set; this judges only the samples given (`{task_id, solution[, label]}` lines),
each with every input run (no fast check), and prints one line per sample: its label, task, base and plus
status and the first failing inputs' indices. tests/fixtures/evalplus_rule_answers.jsonl's EvalPlus verdicts
were recorded with it (docs/benchmarks.md).
"""

import json
import sys

from evalplus.data import get_human_eval_plus, get_human_eval_plus_hash, get_mbpp_plus, get_mbpp_plus_hash
from evalplus.eval._special_oracle import MBPP_OUTPUT_NOT_NONE_TASKS
from evalplus.evaluate import check_correctness, get_groundtruth


def main(dataset: str, samples: str) -> None:
    if dataset == "mbpp":
        problems = get_mbpp_plus()
        truth = get_groundtruth(problems, get_mbpp_plus_hash(), MBPP_OUTPUT_NOT_NONE_TASKS)
    else:
        problems = get_human_eval_plus()
        truth = get_groundtruth(problems, get_human_eval_plus_hash(), [])
    with open(samples, encoding="utf-8") as handle:
        for line in handle:
            sample = json.loads(line)
            task_id = sample["task_id"]
            result = check_correctness(
                dataset, 0, problems[task_id], sample["solution"], truth[task_id], fast_check=False
            )
            (base, base_details), (plus, plus_details) = result["base"], result["plus"]
            row = {
                "label": sample.get("label", ""),
                "task_id": task_id,
                "base": base,
                "plus": plus,
                "base_failed": [i for i, ok in enumerate(base_details) if not ok][:5],
                "plus_failed": [i for i, ok in enumerate(plus_details) if not ok][:5],
            }
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
