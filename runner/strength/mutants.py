"""Run mutmut 3 on one task's reference against one of its suites, in a scratch directory.

The scratch directory is laid out like a sandboxed candidate's: `candidate.py` holds the reference
source (the module mutmut mutates), `reference.py` an unmutated copy (so differential properties
compare each mutant with the original, never with itself), `candidate_guard.py`, a `conftest.py`
loading the hypothesis profile, and one `test_<suite>.py` per suite. Suites reach the candidate
through `candidate_guard`, which imports module `candidate`: mutmut places its mutated copy in
`mutants/` at the front of `sys.path` and picks the active mutant through its trampoline.

Each mutant ends in one of three statuses: `killed` (some selected test failed or crashed),
`timeout` (it ran past its time limit; counted as killed, as mutmut does) or `survived` (every test
passed, or no test of the suite called the mutated function).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from runner.judging.suite_module import build_suite_module, suite_file_name
from runner.suites import candidate_guard
from runner.suites.hypothesis_profile import conftest_source
from runner.tasks.model import Task

MEMORY_LIMIT_MB = 2048
"""Address-space limit for mutmut and every test process it forks (a mutant may allocate forever)."""

HYPOTHESIS_PLUGIN = "_hypothesis_pytestplugin"
"""The only pytest plugin the suites need; other installed plugins are not auto-loaded."""

_NO_TESTS_MARKERS = (
    "could not find any test case for any mutant",
    "failed to collect stats. runner returned 5",
    "no active tests found",
)


class MutationRunError(RuntimeError):
    """mutmut could not judge the mutants (e.g. the reference fails its own suite)."""


@dataclass(frozen=True)
class SuiteMutation:
    """Verdict of every mutant of a task's reference against one suite (or several, joined by '+')."""

    suite: str
    statuses: dict[str, str]
    seconds: float = 0.0
    diffs: dict[str, str] = field(default_factory=dict)

    def count(self, status: str) -> int:
        """How many mutants ended with `status`."""
        return sum(1 for s in self.statuses.values() if s == status)


def mutmut_version() -> str:
    """Installed mutmut version (part of the audit cache key)."""
    from importlib.metadata import version

    return version("mutmut")


def write_workspace(task: Task, directory: Path, candidate_source: str, max_examples: int = 100) -> list[str]:
    """Lay out a task's suites around `candidate_source` in `directory`; return the suite file names.

    The layout is the sandbox's: `candidate.py`, `reference.py` (the task's reference, unmodified),
    `candidate_guard.py`, `conftest.py` (the hypothesis profile) and `test_<suite>.py` per suite.
    """
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "candidate.py").write_text(candidate_source)
    (directory / "reference.py").write_text(task.reference)
    shutil.copyfile(candidate_guard.__file__, directory / "candidate_guard.py")
    (directory / "conftest.py").write_text(conftest_source(max_examples))
    files = []
    for suite in task.suites:
        name = suite_file_name(suite)
        (directory / name).write_text(build_suite_module(task, suite))
        files.append(name)
    return files


def mutmut_config(test_files: Iterable[str], basetemp: Path, timeout_s: float) -> str:
    """The `[tool.mutmut]` table for a workspace.

    mutmut's limit per mutant is (clean run time of its tests + timeout_constant) x
    timeout_multiplier of wall time (twice that of CPU time); with the values below that is
    2 x clean time + `timeout_s` seconds.
    """
    selection = ", ".join(json.dumps(f) for f in test_files)
    return (
        "[tool.mutmut]\n"
        'source_paths = ["candidate.py"]\n'
        'also_copy = ["reference.py", "candidate_guard.py", "conftest.py"]\n'
        f"pytest_add_cli_args_test_selection = [{selection}]\n"
        f'pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "{HYPOTHESIS_PLUGIN}", "--basetemp={basetemp}"]\n'
        "timeout_multiplier = 2.0\n"
        f"timeout_constant = {timeout_s / 2.0!r}\n"
        "use_git_change_detection = false\n"
        "track_dependencies = false\n"
    )


def classify(exit_code: int | None) -> str:
    """Map a mutmut exit code to killed / timeout / survived (see the module docstring)."""
    from mutmut.stats import status_by_exit_code

    status = status_by_exit_code[exit_code]
    if status == "not checked":
        raise MutationRunError("mutmut left a mutant unchecked")
    if status in ("survived", "no tests", "skipped"):
        return "survived"
    if status == "timeout":
        return "timeout"
    return "killed"


_LIMITED_EXEC = """
import os, resource, sys
limit = int(sys.argv[1]) * 1024 * 1024
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
os.execv(sys.argv[2], sys.argv[2:])
"""


def _mutmut(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    # The memory limit is set in a small exec wrapper, not a preexec_fn: audits run from threads.
    executable = Path(sys.executable).parent / "mutmut"
    env = {k: v for k, v in os.environ.items() if k not in ("MUTANT_UNDER_TEST", "PYTHONPATH")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # saves ~1 s of CPU per pytest start; see mutmut_config
    return subprocess.run(
        [sys.executable, "-c", _LIMITED_EXEC, str(MEMORY_LIMIT_MB), str(executable), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _read_exit_codes(workdir: Path) -> dict[str, int | None]:
    meta = workdir / "mutants" / "candidate.py.meta"
    if not meta.exists():
        return {}
    return json.loads(meta.read_text())["exit_code_by_key"]


def run_suite_mutation(
    task: Task,
    suites: tuple[str, ...],
    workdir: Path,
    *,
    max_examples: int = 100,
    timeout_s: float = 5.0,
    overall_timeout_s: float = 3600.0,
) -> SuiteMutation:
    """Run `mutmut run` on the task's reference with only `suites` selected, in `workdir`.

    Raises MutationRunError when mutmut cannot judge the mutants, e.g. when the reference fails
    the selected suites (mutmut's clean run) or a forced failure goes unnoticed.
    """
    started = time.monotonic()
    write_workspace(task, workdir, task.reference, max_examples)
    files = [suite_file_name(s) for s in suites]
    basetemp = workdir / "pytest-tmp"
    (workdir / "pyproject.toml").write_text(mutmut_config(files, basetemp, timeout_s))
    proc = _mutmut(["run", "--max-children", "1"], workdir, overall_timeout_s)
    output = proc.stdout + proc.stderr
    (workdir / "mutmut.log").write_text(output)
    codes = _read_exit_codes(workdir)
    name = "+".join(suites)
    if proc.returncode != 0:
        if codes and any(marker in output for marker in _NO_TESTS_MARKERS):
            statuses = {key: "survived" for key in codes}
            return SuiteMutation(name, statuses, time.monotonic() - started)
        tail = "\n".join(line for line in output.splitlines()[-15:] if "⠋" not in line)
        raise MutationRunError(f"mutmut failed on task {task.id!r}, suite {name}:\n{tail}")
    statuses = {key: classify(code) for key, code in codes.items()}
    return SuiteMutation(name, statuses, time.monotonic() - started)


_SHOW_SCRIPT = """
import sys
from mutmut.__main__ import cli
for name in sys.argv[1:]:
    print("\\0" + name)
    cli(["show", name], standalone_mode=False)
"""


def mutant_diffs(workdir: Path, names: Iterable[str], timeout: float = 300.0) -> dict[str, str]:
    """Unified diffs of the named mutants (from `mutmut show`), after a run in `workdir`."""
    names = sorted(names)
    if not names:
        return {}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-c", _SHOW_SCRIPT, *names],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise MutationRunError(f"mutmut show failed:\n{proc.stderr[-2000:]}")
    diffs = {}
    for chunk in proc.stdout.split("\0")[1:]:
        name, _, body = chunk.partition("\n")
        lines = [line for line in body.splitlines() if not line.startswith(f"# {name}:")]
        diffs[name] = "\n".join(lines).strip("\n")
    return diffs
