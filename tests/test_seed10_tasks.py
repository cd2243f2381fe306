"""The seed-10 task set (tasks/seed10/*.yaml): well-formed, reference passes, suites have teeth.

Every suite runs against the reference under plain pytest in a scratch directory laid out as the
sandbox lays it out (candidate.py, reference.py, candidate_guard.py, test_<suite>.py), with the
project's hypothesis profile loaded from a conftest.py (50 examples, derandomized, no database;
shrinking and explaining are skipped: they change the report of a failure, never the verdict).
Plugin autoloading is off, with hypothesis's plugin loaded explicitly: the venv's other plugins
(hydra's, anyio's) cost about a second per run and nothing the suites need.
Then plausible wrong implementations, written inline below, must fail the suites; for each task at
least one of them passes `visible` and is caught only by `hidden` or `properties`, which shows the
hidden suites carry contracts the visible one does not. Every task declares the edge cases its prompt
states, and some test of its suites exercises each one (the check `runner.audit` reports).
"""

from __future__ import annotations

import ast
import datetime as dt
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml

from runner.config import GateConfig
from runner.judging.gate import check_gate
from runner.judging.suite_module import build_suite_module, suite_file_name
from runner.strength.edge_cases import edge_case_coverage
from runner.suites.hypothesis_profile import conftest_source
from runner.tasks.loader import load_task_file
from runner.tasks.model import SUITES, Task

ROOT = Path(__file__).resolve().parents[1]
TASK_DIR = ROOT / "tasks" / "seed10"
GUARD = ROOT / "runner" / "suites" / "candidate_guard.py"
EXPECTED_IDS = {
    "is_palindrome",
    "two_sum",
    "run_length_encoding",
    "merge_intervals",
    "balanced_brackets",
    "rotate_matrix",
    "common_prefix",
    "top_k_frequent",
    "moving_average",
    "grid_shortest_path",
}
TOP_LEVEL_KEYS = {
    "id",
    "entry_point",
    "signature",
    "prompt",
    "reference",
    "suites",
    "tags",
    "created",
    "edge_cases",
    "perf_inputs",
}
REQUIRED_KEYS = TOP_LEVEL_KEYS - {"tags", "created", "edge_cases", "perf_inputs"}
MAX_EXAMPLES = 50
RUN_TIMEOUT_S = 120
PLUGINS = ("-p", "_hypothesis_pytestplugin")
ENV = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
FAST_FAILURE_PROFILE = """
from hypothesis import Phase

settings.register_profile(
    "seed10_check", parent=settings.get_profile("runner"), phases=[Phase.explicit, Phase.generate]
)
settings.load_profile("seed10_check")
"""

# Plausible wrong solutions, as a model might write them. `True` marks one the visible suite lets
# through (so only `hidden` or `properties` can catch it); `False` one the visible suite already fails.
WRONG: dict[str, dict[str, tuple[bool, str]]] = {
    "is_palindrome": {
        "no_normalisation": (False, "def is_palindrome(s):\n    return s == s[::-1]\n"),
        "letters_only": (
            True,
            "def is_palindrome(s):\n    t = [c.lower() for c in s if c.isalpha()]\n    return t == t[::-1]\n",
        ),
        "spaces_only": (
            True,
            "def is_palindrome(s):\n    t = s.replace(' ', '').lower()\n    return t == t[::-1]\n",
        ),
        "ascii_only": (
            True,
            "def is_palindrome(s):\n"
            "    keep = 'abcdefghijklmnopqrstuvwxyz0123456789'\n"
            "    t = [c for c in s.lower() if c in keep]\n"
            "    return t == t[::-1]\n",
        ),
    },
    "two_sum": {
        "reuses_element": (
            False,
            "def two_sum(nums, target):\n"
            "    for i in range(len(nums)):\n"
            "        for j in range(i, len(nums)):\n"
            "            if nums[i] + nums[j] == target:\n"
            "                return [i, j]\n"
            "    return []\n",
        ),
        "smallest_i_first": (
            True,
            "def two_sum(nums, target):\n"
            "    for i in range(len(nums)):\n"
            "        for j in range(i + 1, len(nums)):\n"
            "            if nums[i] + nums[j] == target:\n"
            "                return [i, j]\n"
            "    return []\n",
        ),
        "last_index_wins": (
            True,
            "def two_sum(nums, target):\n"
            "    seen = {}\n"
            "    for j, v in enumerate(nums):\n"
            "        if target - v in seen:\n"
            "            return [seen[target - v], j]\n"
            "        seen[v] = j\n"
            "    return []\n",
        ),
    },
    "run_length_encoding": {
        "drops_last_run": (
            False,
            "def run_length_encoding(s):\n"
            "    out = []\n"
            "    for i in range(1, len(s)):\n"
            "        if out and out[-1][0] == s[i - 1]:\n"
            "            out[-1] = (s[i - 1], out[-1][1] + 1)\n"
            "        else:\n"
            "            out.append((s[i - 1], 1))\n"
            "    return out\n",
        ),
        "lowercases": (
            True,
            "def run_length_encoding(s):\n"
            "    out = []\n"
            "    for ch in s.lower():\n"
            "        if out and out[-1][0] == ch:\n"
            "            out[-1] = (ch, out[-1][1] + 1)\n"
            "        else:\n"
            "            out.append((ch, 1))\n"
            "    return out\n",
        ),
        "counts_non_adjacent": (
            True,
            "def run_length_encoding(s):\n"
            "    counts = {}\n"
            "    for ch in s:\n"
            "        counts[ch] = counts.get(ch, 0) + 1\n"
            "    return list(counts.items())\n",
        ),
    },
    "merge_intervals": {
        "no_sort": (
            False,
            "def merge_intervals(intervals):\n"
            "    out = []\n"
            "    for a, b in intervals:\n"
            "        if out and a <= out[-1][1]:\n"
            "            out[-1][1] = max(out[-1][1], b)\n"
            "        else:\n"
            "            out.append([a, b])\n"
            "    return out\n",
        ),
        "touching_stay_apart": (
            True,
            "def merge_intervals(intervals):\n"
            "    out = []\n"
            "    for a, b in sorted(intervals):\n"
            "        if out and a < out[-1][1]:\n"
            "            out[-1][1] = max(out[-1][1], b)\n"
            "        else:\n"
            "            out.append([a, b])\n"
            "    return out\n",
        ),
        "sorts_and_updates_in_place": (
            True,
            "def merge_intervals(intervals):\n"
            "    if not intervals:\n"
            "        return []\n"
            "    intervals.sort()\n"
            "    out = [intervals[0]]\n"
            "    for cur in intervals[1:]:\n"
            "        if cur[0] <= out[-1][1]:\n"
            "            out[-1][1] = max(out[-1][1], cur[1])\n"
            "        else:\n"
            "            out.append(cur)\n"
            "    return out\n",
        ),
        "takes_later_end": (
            True,
            "def merge_intervals(intervals):\n"
            "    out = []\n"
            "    for a, b in sorted(intervals):\n"
            "        if out and a <= out[-1][1]:\n"
            "            out[-1][1] = b\n"
            "        else:\n"
            "            out.append([a, b])\n"
            "    return out\n",
        ),
    },
    "balanced_brackets": {
        "no_final_check": (
            False,
            "def balanced_brackets(s):\n"
            "    pairs = {')': '(', ']': '[', '}': '{'}\n"
            "    stack = []\n"
            "    for ch in s:\n"
            "        if ch in '([{':\n"
            "            stack.append(ch)\n"
            "        elif ch in pairs:\n"
            "            if not stack or stack.pop() != pairs[ch]:\n"
            "                return False\n"
            "    return True\n",
        ),
        "counts_per_kind": (
            True,
            "def balanced_brackets(s):\n    return all(s.count(o) == s.count(c) for o, c in ['()', '[]', '{}'])\n",
        ),
        "other_characters_fail": (
            True,
            "def balanced_brackets(s):\n"
            "    pairs = {')': '(', ']': '[', '}': '{'}\n"
            "    stack = []\n"
            "    for ch in s:\n"
            "        if ch in '([{':\n"
            "            stack.append(ch)\n"
            "        elif ch in pairs and stack and stack[-1] == pairs[ch]:\n"
            "            stack.pop()\n"
            "        else:\n"
            "            return False\n"
            "    return not stack\n",
        ),
    },
    "rotate_matrix": {
        "counter_clockwise": (
            False,
            "def rotate_matrix(matrix):\n    return [list(row) for row in zip(*matrix)][::-1]\n",
        ),
        "in_place_square": (
            True,
            "def rotate_matrix(matrix):\n"
            "    n = len(matrix)\n"
            "    for i in range(n):\n"
            "        for j in range(i + 1, n):\n"
            "            matrix[i][j], matrix[j][i] = matrix[j][i], matrix[i][j]\n"
            "    for row in matrix:\n"
            "        row.reverse()\n"
            "    return matrix\n",
        ),
        "assumes_square": (
            True,
            "def rotate_matrix(matrix):\n"
            "    n = len(matrix)\n"
            "    return [[matrix[n - 1 - i][j] for i in range(n)] for j in range(n)]\n",
        ),
    },
    "common_prefix": {
        "first_two_only": (
            False,
            "def common_prefix(strings):\n"
            "    if len(strings) < 2:\n"
            "        return strings[0] if strings else ''\n"
            "    a, b = strings[0], strings[1]\n"
            "    i = 0\n"
            "    while i < min(len(a), len(b)) and a[i] == b[i]:\n"
            "        i += 1\n"
            "    return a[:i]\n",
        ),
        "case_insensitive": (
            True,
            "def common_prefix(strings):\n"
            "    if not strings:\n"
            "        return ''\n"
            "    low = [s.lower() for s in strings]\n"
            "    p = low[0]\n"
            "    for s in low[1:]:\n"
            "        while not s.startswith(p):\n"
            "            p = p[:-1]\n"
            "    return strings[0][:len(p)]\n",
        ),
        "sorts_in_place": (
            True,
            "def common_prefix(strings):\n"
            "    if not strings:\n"
            "        return ''\n"
            "    strings.sort()\n"
            "    a, b = strings[0], strings[-1]\n"
            "    i = 0\n"
            "    while i < min(len(a), len(b)) and a[i] == b[i]:\n"
            "        i += 1\n"
            "    return a[:i]\n",
        ),
        "crashes_on_empty_list": (
            True,
            "def common_prefix(strings):\n"
            "    p = strings[0]\n"
            "    for s in strings[1:]:\n"
            "        while not s.startswith(p):\n"
            "            p = p[:-1]\n"
            "    return p\n",
        ),
    },
    "top_k_frequent": {
        "returns_pairs": (
            False,
            "def top_k_frequent(nums, k):\n"
            "    counts = {}\n"
            "    for v in nums:\n"
            "        counts[v] = counts.get(v, 0) + 1\n"
            "    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:k]\n",
        ),
        "ties_by_first_occurrence": (
            True,
            "def top_k_frequent(nums, k):\n"
            "    if k <= 0:\n"
            "        return []\n"
            "    counts = {}\n"
            "    for v in nums:\n"
            "        counts[v] = counts.get(v, 0) + 1\n"
            "    return sorted(counts, key=lambda v: -counts[v])[:k]\n",
        ),
        "negative_k_slices": (
            True,
            "def top_k_frequent(nums, k):\n"
            "    counts = {}\n"
            "    for v in nums:\n"
            "        counts[v] = counts.get(v, 0) + 1\n"
            "    return sorted(counts, key=lambda v: (-counts[v], v))[:k]\n",
        ),
    },
    "moving_average": {
        "misses_last_window": (
            False,
            "def moving_average(values, window):\n"
            "    if window <= 0 or window > len(values):\n"
            "        raise ValueError('bad window')\n"
            "    return [sum(values[i:i + window]) / window for i in range(len(values) - window)]\n",
        ),
        "empty_instead_of_error": (
            True,
            "def moving_average(values, window):\n"
            "    if window <= 0:\n"
            "        raise ValueError('bad window')\n"
            "    if window > len(values):\n"
            "        return []\n"
            "    return [sum(values[i:i + window]) / window for i in range(len(values) - window + 1)]\n",
        ),
        "rejects_full_window": (
            False,
            "def moving_average(values, window):\n"
            "    if window <= 0 or window >= len(values):\n"
            "        raise ValueError('bad window')\n"
            "    return [sum(values[i:i + window]) / window for i in range(len(values) - window + 1)]\n",
        ),
        "zero_window_divides": (
            True,
            "def moving_average(values, window):\n"
            "    if window > len(values):\n"
            "        raise ValueError('bad window')\n"
            "    return [sum(values[i:i + window]) / window for i in range(len(values) - window + 1)]\n",
        ),
    },
    "grid_shortest_path": {
        "diagonal_moves": (
            False,
            "def grid_shortest_path(grid, start, goal):\n"
            "    rows, cols = len(grid), len(grid[0])\n"
            "    if grid[start[0]][start[1]] or grid[goal[0]][goal[1]]:\n"
            "        return -1\n"
            "    seen = {tuple(start): 0}\n"
            "    queue = [tuple(start)]\n"
            "    for r, c in queue:\n"
            "        if (r, c) == tuple(goal):\n"
            "            return seen[(r, c)]\n"
            "        for dr in (-1, 0, 1):\n"
            "            for dc in (-1, 0, 1):\n"
            "                nr, nc = r + dr, c + dc\n"
            "                if 0 <= nr < rows and 0 <= nc < cols and not grid[nr][nc] and (nr, nc) not in seen:\n"
            "                    seen[(nr, nc)] = seen[(r, c)] + 1\n"
            "                    queue.append((nr, nc))\n"
            "    return -1\n",
        ),
        "marks_grid_visited": (
            True,
            "def grid_shortest_path(grid, start, goal):\n"
            "    rows, cols = len(grid), len(grid[0])\n"
            "    if grid[start[0]][start[1]] or grid[goal[0]][goal[1]]:\n"
            "        return -1\n"
            "    grid[start[0]][start[1]] = 1\n"
            "    queue = [(start[0], start[1], 0)]\n"
            "    for r, c, d in queue:\n"
            "        if (r, c) == tuple(goal):\n"
            "            return d\n"
            "        for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):\n"
            "            if 0 <= nr < rows and 0 <= nc < cols and grid[nr][nc] == 0:\n"
            "                grid[nr][nc] = 1\n"
            "                queue.append((nr, nc, d + 1))\n"
            "    return -1\n",
        ),
        "start_equal_goal_first": (
            True,
            "def grid_shortest_path(grid, start, goal):\n"
            "    if start == goal:\n"
            "        return 0\n"
            "    rows, cols = len(grid), len(grid[0])\n"
            "    seen = {tuple(start): 0}\n"
            "    queue = [tuple(start)]\n"
            "    for r, c in queue:\n"
            "        for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):\n"
            "            if 0 <= nr < rows and 0 <= nc < cols and grid[nr][nc] == 0 and (nr, nc) not in seen:\n"
            "                seen[(nr, nc)] = seen[(r, c)] + 1\n"
            "                if (nr, nc) == tuple(goal):\n"
            "                    return seen[(nr, nc)]\n"
            "                queue.append((nr, nc))\n"
            "    return -1\n",
        ),
        "depth_first": (
            True,
            "def grid_shortest_path(grid, start, goal):\n"
            "    rows, cols = len(grid), len(grid[0])\n"
            "    if grid[start[0]][start[1]] or grid[goal[0]][goal[1]]:\n"
            "        return -1\n"
            "    seen = {tuple(start)}\n"
            "    stack = [(start[0], start[1], 0)]\n"
            "    while stack:\n"
            "        r, c, d = stack.pop()\n"
            "        if (r, c) == tuple(goal):\n"
            "            return d\n"
            "        for nr, nc in ((r - 1, c), (r, c - 1), (r, c + 1), (r + 1, c)):\n"
            "            if 0 <= nr < rows and 0 <= nc < cols and grid[nr][nc] == 0 and (nr, nc) not in seen:\n"
            "                seen.add((nr, nc))\n"
            "                stack.append((nr, nc, d + 1))\n"
            "    return -1\n",
        ),
    },
}


def _task_files() -> list[Path]:
    return sorted(TASK_DIR.glob("*.yaml"))


def _task(path: Path) -> Task:
    data = yaml.safe_load(path.read_text())
    return Task(
        id=data["id"],
        entry_point=data["entry_point"],
        prompt=data["prompt"],
        reference=data["reference"],
        suites=data["suites"],
        signature=data["signature"],
        tags=tuple(data.get("tags", ())),
        created=data.get("created"),
        source=str(path),
    )


TASK_IDS = sorted(path.stem for path in _task_files())
WRONG_CASES = [(task_id, name) for task_id in sorted(WRONG) for name in WRONG[task_id]]


class SuiteResult(NamedTuple):
    ran: int
    passed: int
    failed: tuple[str, ...]


class Run(NamedTuple):
    suites: dict[str, SuiteResult]
    log: str

    def caught_by(self) -> list[str]:
        """The suites with at least one test that did not pass."""
        return [suite for suite, result in self.suites.items() if result.passed < result.ran]


def _run(task: Task, code: str) -> Run:
    """Run every suite of `task` with `code` as the candidate, each test's verdict read from JUnit XML.

    A test passes only if it ran and neither failed, errored nor was skipped.
    """
    with tempfile.TemporaryDirectory(prefix="seed10_") as tmp:
        tmpdir = Path(tmp)
        (tmpdir / "candidate.py").write_text(code)
        (tmpdir / "reference.py").write_text(task.reference)
        shutil.copy(GUARD, tmpdir / "candidate_guard.py")
        (tmpdir / "conftest.py").write_text(conftest_source(MAX_EXAMPLES) + FAST_FAILURE_PROFILE)
        (tmpdir / "pytest.ini").write_text("[pytest]\n")  # keeps pytest from looking above tmpdir
        for suite in SUITES:
            (tmpdir / suite_file_name(suite)).write_text(build_suite_module(task, suite))
        report = tmpdir / "report.xml"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *PLUGINS, f"--junitxml={report}"]
        proc = subprocess.run(
            [*command, str(tmpdir)], cwd=tmpdir, env=ENV, capture_output=True, text=True, timeout=RUN_TIMEOUT_S
        )
        log = (proc.stdout + proc.stderr)[-4000:]
        assert proc.returncode in (0, 1), f"pytest could not run the suites (exit {proc.returncode}):\n{log}"
        ran = dict.fromkeys(SUITES, 0)
        failed: dict[str, list[str]] = {suite: [] for suite in SUITES}
        for case in ET.parse(report).iter("testcase"):
            suite = case.get("classname", "").removeprefix("test_")
            ran[suite] += 1
            if any(child.tag in ("failure", "error", "skipped") for child in case):
                failed[suite].append(case.get("name", "?"))
        result = Run({s: SuiteResult(ran[s], ran[s] - len(failed[s]), tuple(failed[s])) for s in SUITES}, log)
        assert (proc.returncode == 0) == (not result.caught_by()), log
        return result


@functools.cache
def _runs(task_id: str) -> dict[str, Run]:
    """Runs of the reference ("reference") and of every wrong implementation of one task."""
    task = _task(TASK_DIR / f"{task_id}.yaml")
    codes = {"reference": task.reference} | {name: code for name, (_, code) in WRONG[task_id].items()}
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(_run, task, code) for name, code in codes.items()}
        return {name: future.result() for name, future in futures.items()}


def _test_functions(source: str) -> list[ast.FunctionDef]:
    return [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]


def _names(source: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}


def test_the_ten_seed_tasks_are_present():
    assert set(TASK_IDS) == EXPECTED_IDS
    assert set(WRONG) == EXPECTED_IDS


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_file_is_well_formed(task_id):
    path = TASK_DIR / f"{task_id}.yaml"
    data = yaml.safe_load(path.read_text())
    assert REQUIRED_KEYS <= set(data) <= TOP_LEVEL_KEYS
    assert data["id"] == data["entry_point"] == task_id
    assert data["signature"].startswith(f"def {task_id}(") and "->" in data["signature"]
    assert isinstance(data["prompt"], str) and len(data["prompt"]) > 200
    assert set(data["suites"]) == set(SUITES)
    assert isinstance(data["created"], dt.date)
    assert isinstance(data["tags"], list) and data["tags"]
    # The project's own loader accepts the file and reads the same task.
    loaded = load_task_file(path)
    assert loaded.content_hash() == _task(path).content_hash()


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reference_obeys_the_published_rules(task_id):
    task = _task(TASK_DIR / f"{task_id}.yaml")
    assert check_gate(task.reference, GateConfig(), (task.entry_point,)) is None
    body = ast.parse(task.reference).body
    assert len(body) == 1 and isinstance(body[0], ast.FunctionDef) and body[0].name == task.entry_point
    # The reference's parameters match the signature the model is shown.
    signature = ast.parse(task.signature + ": ...").body[0]
    assert [a.arg for a in body[0].args.args] == [a.arg for a in signature.args.args]


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_suites_are_shaped_as_the_design_says(task_id):
    task = _task(TASK_DIR / f"{task_id}.yaml")
    for suite in SUITES:
        tree = ast.parse(task.suites[suite])
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)], suite
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)], suite
        nested = [
            n
            for top in tree.body
            for n in ast.walk(top)
            if n is not top and isinstance(n, ast.FunctionDef) and n.name.startswith("test")
        ]
        assert not nested, f"{suite}: test functions must be top level"
    visible = _test_functions(task.suites["visible"])
    asserts = [n for f in visible for n in ast.walk(f) if isinstance(n, ast.Assert)]
    assert 2 <= len(visible) <= 5 and 4 <= len(asserts) <= 6
    assert "reference" not in _names(task.suites["visible"])
    assert 5 <= len(_test_functions(task.suites["hidden"])) <= 10
    properties = _test_functions(task.suites["properties"])
    assert 2 <= len(properties) <= 4
    for function in properties:
        decorators = [d.func.id for d in function.decorator_list if isinstance(d, ast.Call)]
        assert decorators == ["given"], f"{function.name} must be a plain @given property"
    differential = f"reference.{task.entry_point}"
    assert differential in task.suites["properties"], "properties need a differential test"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reference_passes_every_suite(task_id):
    task = _task(TASK_DIR / f"{task_id}.yaml")
    run = _runs(task_id)["reference"]
    assert not run.caught_by(), f"the reference fails {run.suites}:\n{run.log}"
    for suite in SUITES:
        assert run.suites[suite].ran == len(_test_functions(task.suites[suite])), run.suites


@pytest.mark.parametrize(("task_id", "name"), WRONG_CASES)
def test_wrong_implementation_is_caught(task_id, name):
    sneaky, _ = WRONG[task_id][name]
    run = _runs(task_id)[name]
    caught = run.caught_by()
    assert caught, f"{name} passes every suite of {task_id}"
    if sneaky:
        # The visible suite lets it through: only the hidden contracts (hidden, properties) catch it.
        assert "visible" not in caught, f"{name} was meant to pass `visible`: {run.suites}"
    else:
        assert "visible" in caught, f"{name} was meant to fail `visible`: {run.suites}"


@pytest.mark.parametrize("task_id", sorted(WRONG))
def test_each_task_has_a_wrong_solution_only_hidden_contracts_catch(task_id):
    assert len(WRONG[task_id]) >= 2
    assert any(sneaky for sneaky, _ in WRONG[task_id].values())


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_every_declared_edge_case_is_exercised(task_id, tmp_path):
    task = load_task_file(TASK_DIR / f"{task_id}.yaml")
    assert len(task.edge_cases) >= 6, "declare the classes of input the prompt states"
    coverage = edge_case_coverage(task, workdir=tmp_path)  # the audit's example budget
    assert coverage.errors == {}
    assert coverage.missed == [], f"no test of {task_id} exercises these declared edge cases"
