"""Pick real answers of distinct shapes from jobs' attempts.jsonl into the answer-shape fixture.

    python scripts/record_answer_shapes.py outputs/.../attempts.jsonl [more.jsonl ...] \
        [out=tests/fixtures/answer_shapes.jsonl] [per_shape=2]

Each answer is classified by what its extracted code holds besides the entry point (runner.generation.extract,
then the shapes below, read from the code before sanitizing): the model's own asserts, example prints or calls,
an `if __name__` block, a test function, a helper defined after its caller, a second fenced block, an answer cut
off at the token limit, or none of these. Up to `per_shape` answers of each shape are kept, each as the job
recorded it (an attempts.jsonl line: request, response, the module judged and its verdict) plus `shape`,
`entry_point` and `source`; tests/test_answer_shapes.py replays them through a real job and checks each
module and verdict.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

from runner.generation.extract import _fenced_blocks, extract
from runner.generation.prompts import answer_text
from runner.records import read_attempts

SHAPES = ("self_test_asserts", "example_prints", "main_guard", "test_function", "helper_after_caller",
          "second_block", "cut_off", "clean")  # fmt: skip


def _entry_point(record) -> str:
    """The entry point, read from the prompt's code (the last `def` of the fenced task prompt)."""
    names = [n.name for n in ast.walk(ast.parse(_prompt_code(record))) if isinstance(n, ast.FunctionDef)]
    return names[-1]


def _prompt_code(record) -> str:
    user = next(m["content"] for m in record.messages if m["role"] == "user")
    return user.split("```")[1].strip("\n")


def shapes(record) -> list[str]:
    """The shapes of one recorded answer (see the module docstring)."""
    answer = answer_text(record.messages, record.response)
    found = []
    if record.finish_reason == "length":
        found.append("cut_off")
    if len(_fenced_blocks(answer)) > 2:  # the pre-filled prompt block counts as one
        found.append("second_block")
    entry = _entry_point(record)
    code = extract(answer, entry).code or ""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return found
    defs = [n.name for n in body if isinstance(n, ast.FunctionDef)]
    for node in body:
        if isinstance(node, ast.Assert):
            found.append("self_test_asserts")
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            found.append("example_prints")
        elif isinstance(node, ast.If) and "__name__" in ast.unparse(node.test):
            found.append("main_guard")
        elif isinstance(node, ast.FunctionDef) and node.name.startswith(("test", "check")):
            found.append("test_function")
    if entry in defs:
        entry_node = next(n for n in body if isinstance(n, ast.FunctionDef) and n.name == entry)
        called = {n.func.id for n in ast.walk(entry_node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        if called & set(defs[defs.index(entry) + 1 :]):
            found.append("helper_after_caller")
    return sorted(set(found), key=SHAPES.index) or ["clean"]


def main(argv: list[str]) -> int:
    options = dict(a.split("=", 1) for a in argv if "=" in a)
    files = [Path(a) for a in argv if "=" not in a]
    out = Path(options.get("out", "tests/fixtures/answer_shapes.jsonl"))
    per_shape = int(options.get("per_shape", 2))
    answers = []  # (record, its shapes, the file), first attempts, one per task (the first file's first)
    for path in files:
        for record in read_attempts(path):
            if record.attempt == 0 and all(record.task_id != r.task_id for r, _, _ in answers):
                answers.append((record, shapes(record), path))
    count = {shape: sum(shape in found for _, found, _ in answers) for shape in SHAPES}
    picked: dict[str, list[dict]] = {shape: [] for shape in SHAPES}
    used = set()
    for shape in sorted(SHAPES, key=lambda shape: count[shape]):  # the rarest shapes choose first
        for record, found, path in answers:
            if shape in found and record.task_id not in used and len(picked[shape]) < per_shape:
                extra = {"shape": shape, "source": path.parent.name, "entry_point": _entry_point(record)}
                picked[shape].append({**json.loads(record.to_json()), **extra})
                used.add(record.task_id)
    rows = [row for shape in SHAPES for row in picked[shape]]
    out.write_text("".join(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n" for row in rows))
    for row in rows:
        print(f"{row['shape']:20} {row['task_id']:14} {row['outcome']:10} {row['source']}")
    print(f"{len(rows)} answers -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
