"""The guarded-object snapshot: every replacement is found, by the fast path and by the exact one."""

import sys
import types

import pytest

from runner.sandbox.child import guarded_objects
from runner.sandbox.child.guarded_objects import GuardedObjects, snapshot_entries


def _module() -> types.ModuleType:
    source = """
def helper():
    return 1

class Tool:
    def run(self):
        return 2

    @classmethod
    def make(cls):
        return cls()
"""
    module = types.ModuleType("guarded_sample")
    exec(compile(source, "guarded_sample.py", "exec"), vars(module))
    Tool = vars(module)["Tool"]
    Tool.__module__ = "guarded_sample"
    return module


@pytest.fixture
def sample():
    module = _module()
    sys.modules["guarded_sample"] = module
    yield module
    del sys.modules["guarded_sample"]


def test_the_memory_layout_is_confirmed_here_so_the_fast_path_is_used(sample):
    assert guarded_objects._LAYOUT is not None
    snapshot = GuardedObjects(snapshot_entries(("guarded_sample",)))
    assert snapshot.words is not None and len(snapshot) >= 4
    assert snapshot.changed() == []


def _replacements(module):
    def other():
        return 3

    return {
        "rebound function": lambda: setattr(module, "helper", other),
        "swapped code": lambda: setattr(module.helper, "__code__", other.__code__),
        "rebound method": lambda: setattr(module.Tool, "run", lambda self: 4),
        "swapped method code": lambda: setattr(module.Tool.run, "__code__", other.__code__),
        "rebound classmethod": lambda: setattr(module.Tool, "make", classmethod(lambda cls: None)),
        "replaced module": lambda: sys.modules.__setitem__("guarded_sample", types.ModuleType("guarded_sample")),
    }


@pytest.mark.parametrize("change", list(_replacements(types.ModuleType("x"))))
@pytest.mark.parametrize("fast", [True, False])
def test_every_replacement_is_reported(sample, change, fast, monkeypatch):
    snapshot = GuardedObjects(snapshot_entries(("guarded_sample",)))
    if not fast:
        snapshot.words = None
    _replacements(sample)[change]()
    found = snapshot.changed()
    assert found and all("was replaced" in line for line in found)


def test_an_unrelated_change_in_a_guarded_namespace_is_not_an_alarm(sample):
    snapshot = GuardedObjects(snapshot_entries(("guarded_sample",)))
    sample.counter = 1  # the namespace's version moves: the exact comparison runs and finds nothing
    assert snapshot.changed() == []
