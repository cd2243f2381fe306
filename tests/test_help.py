"""Every command under runner/ answers `--help` and `-h` with its usage, exit 0, and does nothing else.

The commands are discovered from the source (tests/command_modules.py), so a new one cannot be forgotten.
Each runs as a user runs it, a fresh `python -m` process, in an empty working directory with an empty
user cache: after `--help` both are still empty and no file of the checkout has changed.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from command_modules import INTERNAL, ROOT, command_modules, entry_points

WATCHED = (ROOT / "schemas" / "task.schema.json", ROOT / "docs" / "configuration.md")
"""Files a command writes when run without --help (runner.tasks.schema, runner.docs_config)."""


def test_the_internal_entry_points_still_exist():
    assert set(INTERNAL) <= set(entry_points()), "INTERNAL names a module that no longer has a __main__ block"
    assert {"runner", "runner.evaluate", "runner.tasks.schema"} <= set(command_modules())


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("module", command_modules())
def test_the_command_answers_help_and_does_nothing_else(module, flag, tmp_path):
    work, cache = tmp_path / "work", tmp_path / "cache"
    work.mkdir()
    cache.mkdir()
    before = {p: p.stat().st_mtime_ns for p in WATCHED if p.exists()}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(cache), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", module, flag], cwd=work, env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    if module == "runner":  # Hydra's own help: the config groups to compose from, then the config
        assert "== Configuration groups ==" in done.stdout and "task_set:" in done.stdout
    else:
        assert done.stdout.startswith(f"usage: python -m {module}"), done.stdout[:200]
        assert "\n\n" in done.stdout.strip(), "the usage line alone says nothing about what the command does"
    assert list(work.iterdir()) == [], "--help wrote into the working directory"
    assert list(cache.rglob("*")) == [], "--help wrote into the user cache"
    assert {p: p.stat().st_mtime_ns for p in WATCHED if p.exists()} == before, "--help rewrote a file"
