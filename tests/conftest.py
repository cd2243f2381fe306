"""Shared fixtures: composing the real Hydra config tree; the shared datasets folder when there is one.

The product finds benchmark files through runner.tasks.datasets; the tests point its environment
variable at ../shared/datasets (relative to the repository root) when that folder exists, so they
never download anything.
"""

import os
from pathlib import Path

import pytest

from runner.compose import compose_config
from runner.tasks.datasets import DATASETS_ENV

collect_ignore_glob = ["fixtures/*"]  # the fixture repo tasks' own tests run only inside the sandbox

SHARED_DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
if SHARED_DATASETS.is_dir():
    os.environ.setdefault(DATASETS_ENV, str(SHARED_DATASETS))


def datasets_available() -> bool:
    """Whether the benchmark files are on this machine (the env var names a folder that exists)."""
    return Path(os.environ.get(DATASETS_ENV, "/nonexistent")).is_dir()


def typed_test_config(overrides: list[str] | None = None):
    """The composed config as `runner.config.Config`, as every entry point hands it on."""
    from runner.validation import typed_config

    return typed_config(compose_config(overrides))


@pytest.fixture
def make_config():
    return compose_config


def descendants(pid: int) -> set[int]:
    """Every live process below `pid` (through /proc/<pid>/task/*/children)."""
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = {int(c) for c in (task / "children").read_text().split()}
            except OSError:
                continue
            todo += list(children - found)
            found |= children
    return found
