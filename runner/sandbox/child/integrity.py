"""What the candidate must not change: snapshots taken before it runs, compared after every suite.

Part of the confined child (see runner.sandbox.child.pytest_child). The snapshots cover the functions,
classes and code objects of pytest, pluggy, hypothesis, candidate_guard, builtins, `random` (suites
draw inputs from it) and the child's own modules (`GUARDED_MODULES`), the registered plugins and hook
implementations, the collected test items, every suite module's globals, the `reference` module, the
guard's state and hypothesis's settings.
"""

from __future__ import annotations

import sys
import types

import pytest

from runner.sandbox.child.guarded_objects import GuardedObjects, changed_entries, snapshot_entries

GUARDED_MODULES = (
    "builtins", "os", "json", "pytest", "_pytest.runner", "_pytest.reports", "_pytest.python",
    "_pytest.main", "_pytest.skipping", "_pytest.outcomes", "_pytest.fixtures", "_pytest.nodes",
    "_pytest.mark.structures", "_pytest.assertion.rewrite", "_pytest.assertion.util", "_pytest.raises",
    "_pytest.python_api", "_pytest.approx", "pluggy._callers", "pluggy._hooks", "pluggy._manager",
    "pluggy._result", "hypothesis", "hypothesis.core", "hypothesis.control", "hypothesis._settings",
    "hypothesis.strategies", "_hypothesis_pytestplugin", "collections", "random", "candidate_guard",
    "runner.sandbox.child.pytest_child", "runner.sandbox.child.failure", "runner.sandbox.child.integrity",
    "runner.sandbox.child.audit_hook", "runner.sandbox.protocol",
)  # fmt: skip
GUARDED_HOOKS = (
    "pytest_runtest_protocol", "pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown",
    "pytest_runtest_makereport", "pytest_runtest_logreport", "pytest_pyfunc_call", "pytest_runtestloop",
    "pytest_make_collect_report", "pytest_collectreport", "pytest_collection_modifyitems",
    "pytest_report_teststatus", "pytest_exception_interact", "pytest_pycollect_makeitem",
    "pytest_generate_tests", "pytest_collection_finish", "pytest_sessionfinish",
)  # fmt: skip


def _plugin_state(config: pytest.Config) -> dict[str, object]:
    state: dict[str, object] = {"config.hook": config.hook, "pluginmanager": config.pluginmanager}
    state["plugins"] = frozenset(id(p) for p in config.pluginmanager.get_plugins())
    for hook in GUARDED_HOOKS:
        caller = getattr(config.hook, hook, None)
        if caller is not None:
            state[f"hook {hook}"] = caller
            impls = caller.get_hookimpls()
            state[f"impls {hook}"] = tuple(
                (id(i.plugin), i.function, getattr(i.function, "__code__", None)) for i in impls
            )
    return state


def _reference_entries(guard: types.ModuleType | None) -> list[tuple]:
    """The reference module's snapshot with its own functions, not the tripwires the guard puts in their place
    while a candidate call runs (the candidate starts executing inside one: its import is a call's first step)."""
    reference = sys.modules.get("reference")
    originals = vars(guard).get("_REFERENCE") if guard is not None else None
    if reference is None or not originals:
        return snapshot_entries(("reference",))
    namespace = vars(reference)
    swapped = {key: namespace.get(key) for key in originals}
    namespace.update(originals)
    try:
        return snapshot_entries(("reference",))
    finally:
        namespace.update(swapped)


class Integrity:
    """Snapshots of what the candidate must not change, taken before it runs, checked after.

    Module contents are captured before pytest starts (or, for a prepared session, right after the
    worker configured it) and compared at every check; plugins and hook implementations are captured
    at the start of collection, the collected test items at its end, and the suite modules' globals,
    the `reference` module and the guard's state when the candidate is about to execute. `check` runs
    at the end of every suite of the session and compares everything with the first snapshot.
    """

    def __init__(self) -> None:
        self.objects: list[GuardedObjects] = []
        self.plugins: dict[str, object] = {}
        self.suite_globals: dict[str, tuple[types.ModuleType, dict[str, object]]] = {}
        self.items: list[tuple] = []
        self.late: list[tuple] = []
        self.hypothesis: tuple = _hypothesis_state()
        self.found: list[str] = []

    def capture_modules(self) -> None:
        """Before pytest.main: the functions, classes and code of every guarded module."""
        self.objects = [GuardedObjects(snapshot_entries(GUARDED_MODULES))]

    def capture_plugins(self, config: pytest.Config) -> None:
        """At the start of collection, before any suite module (and so the candidate) is imported."""
        self.plugins = _plugin_state(config)

    def capture_items(self, items: list) -> None:
        """At the end of collection: each test item's function (and hypothesis's inner test) and code."""
        self.items = [(item, *_item_state(item)) for item in items]

    def capture_suite_globals(self, modules: list[types.ModuleType]) -> None:
        """When the candidate is about to execute: every suite module's bindings so far, the reference, the guard."""
        for module in modules:
            self.suite_globals[module.__name__] = (module, {k: v for k, v in vars(module).items() if k[:2] != "__"})
        guard = sys.modules.get("candidate_guard")
        self.late = _reference_entries(guard)
        self.hypothesis = _hypothesis_state()
        for name in ("_LOADED", "_FAILED", "_NAMES", "_REFERENCE", "_TRIPWIRES", "_BORROWED", "_REFERENCE_MODULE"):
            if guard is not None and name in vars(guard):
                self.late.append((vars(guard), name, vars(guard)[name], None))

    def check(self, config: pytest.Config | None) -> list[str]:
        """Everything found so far: plugins, hooks, guarded modules, suite globals, items, the guard."""
        found = list(self.found)
        if not self.plugins or config is None:
            found.append("the collection hook never ran")
        if not any(len(objects) for objects in self.objects):
            found.append("module snapshot missing")
        now = _plugin_state(config) if config is not None else {}
        found += [f"pytest {key} changed" for key, value in self.plugins.items() if now.get(key) != value]
        for name, (module, bindings) in self.suite_globals.items():
            names = vars(module)
            found += [f"suite global {k!r} of {name} was rebound" for k, v in bindings.items() if names.get(k) is not v]
            if sys.modules.get(name, module) is not module:
                found.append(f"suite module {name} was replaced")
        for item, *state in self.items:
            if any(a is not b for a, b in zip(state, _item_state(item), strict=True)) or "runtest" in vars(item):
                found.append(f"test item {item.nodeid} was changed")
        now_hypothesis = _hypothesis_state()
        if len(self.hypothesis) != len(now_hypothesis) or any(map(_differ, self.hypothesis, now_hypothesis)):
            found.append("hypothesis settings were changed")
        if sys.gettrace() is not None or sys.getprofile() is not None:
            found.append("a trace or profile function is installed")
        found += [line for objects in self.objects for line in objects.changed()]
        return [*found, *changed_entries(self.late), *_uses_reference(), *_guard_problems()]


def _differ(a: object, b: object) -> bool:
    return a is not b


def _hypothesis_state() -> tuple:
    """The active hypothesis settings and the registered profiles, as objects to compare by identity."""
    module = sys.modules.get("hypothesis._settings")
    if module is None:
        return ()
    profiles = module.settings._profiles
    return (module.default_variable.value, module.settings._current_profile, profiles, *sorted(profiles),
            *(profiles[k] for k in sorted(profiles)))  # fmt: skip


def _item_state(item) -> tuple:
    obj = vars(item).get("_obj")
    handle = getattr(obj, "hypothesis", None)
    inner = getattr(handle, "inner_test", None)
    functions = (obj, getattr(obj, "__func__", None), inner)
    settings = getattr(obj, "_hypothesis_internal_use_settings", None)
    return (*functions, *(getattr(f, "__code__", None) for f in functions), handle, settings)


def _guard_problems() -> list[str]:
    """The guard may only hand out the very functions the candidate module defines."""
    guard, candidate = sys.modules.get("candidate_guard"), sys.modules.get("candidate")
    loaded = getattr(guard, "_LOADED", None)
    if not isinstance(loaded, dict) or not loaded:
        return []
    names = vars(candidate) if candidate is not None else {}
    if any(names.get(k) is not v for k, v in list(loaded.items())):
        return ["the guard's entry points were swapped"]
    return []


def load_failure() -> str | None:
    """The guard's record of a failed candidate import (`ExcType: message`), or None."""
    guard = sys.modules.get("candidate_guard")
    try:
        failure = guard.load_failure() if guard is not None and hasattr(guard, "load_failure") else None
    except Exception:
        return "the guard could not say whether the candidate loaded"
    return failure if isinstance(failure, str) or failure is None else str(type(failure))


def _uses_reference() -> list[str]:
    """The candidate must not hand the reference solution back as its own."""
    candidate, reference = sys.modules.get("candidate"), sys.modules.get("reference")
    if candidate is None or reference is None:
        return []
    for value in list(vars(candidate).values()):
        if value is reference or getattr(value, "__module__", None) == "reference":
            return ["the candidate uses the reference solution"]
    return []
