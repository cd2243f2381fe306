"""Run inside a task environment's own Python (never imported by the harness): pytest with our reporter.

The worker writes this file into the job directory and runs it, confined, as
`<env python> -P repo_plugin.py` from the root of the repo copy. Fd 3 carries one JSON line from the
worker (the run's nonce, the node ids demanded, the test files to collect) and is closed once read;
fd 4 is the verdict channel: one `<nonce> <JSON>` line per message, with `os.write` and `json.dumps`
taken before any code of the repo runs. Messages: `collect_error`, `collected` (the demanded node ids
collected; every other test is deselected), `report` (one phase of a test: our own record of whether it
raised, beside pytest's outcome), `done` (pytest's exit code and what the integrity check found changed).

Only the standard library and pytest are imported here: the environment has nothing else of ours.
"""

import json
import os
import sys

MESSAGE_CHARS = 1500
FLAGGED_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.addaudithook",
                            "ctypes.cdata", "ctypes.string_at", "ctypes.wstring_at"})  # fmt: skip
"""Introspection that could reach the nonce or rewrite the reporter's memory: refused, and reported."""
WATCHED = {
    "_pytest.runner": ("call_and_report", "runtestprotocol", "CallInfo", "check_interactive_exception",
                       "pytest_runtest_call", "pytest_runtest_makereport", "SetupState"),
    "_pytest.reports": ("TestReport", "CollectReport"),
    "_pytest.python": ("Function", "pytest_pyfunc_call"),
    "_pytest.main": ("pytest_runtestloop", "Session"),
    "_pytest.skipping": ("pytest_runtest_makereport",),
    "pluggy._callers": ("_multicall",),
    "pluggy._hooks": ("HookCaller",),
}  # fmt: skip
"""The pytest and pluggy objects a verdict depends on: replaced or patched during the run is tampering."""


def _read_config(fd: int) -> dict:
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        data += chunk
    os.close(fd)
    return json.loads(data)


def _sender(fd: int, nonce: str):
    write, dumps, getpid, pid = os.write, json.dumps, os.getpid, os.getpid()

    def send(kind: str, **body) -> None:
        if getpid() != pid:  # a process the repo's code forked never speaks for the run
            return
        data = (nonce + " " + dumps({"k": kind, **body}) + "\n").encode("utf-8", "replace")
        while data:
            data = data[write(fd, data) :]

    return send


def _watched_objects() -> dict:
    """(module, name, attribute) -> object, for every watched object and every attribute of watched classes."""
    import importlib

    found = {}
    for module_name, names in WATCHED.items():
        module = importlib.import_module(module_name)
        for name in names:
            value = getattr(module, name, None)  # pytest is the harness's own version: all are there
            if value is None:
                continue
            found[(module_name, name, "")] = value
            if isinstance(value, type):
                for attr, member in vars(value).items():
                    found[(module_name, name, attr)] = member
    return found


def _changed(snapshot: dict) -> list[str]:
    changed = []
    for (module_name, name, attr), value in snapshot.items():
        owner = sys.modules.get(module_name)
        current = getattr(owner, name, None)
        if attr:
            current = vars(current).get(attr) if isinstance(current, type) else None
        if current is not value:
            changed.append(f"{module_name}.{name}" + (f".{attr}" if attr else "") + " was replaced")
    return changed


def _text(longrepr) -> str:
    """pytest's explanation of a failure: its `E ` lines (the exception and assertion diff), else the tail."""
    text = str(longrepr) if longrepr is not None else ""
    explained = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    return ("\n".join(explained) if explained else text)[-MESSAGE_CHARS:]


class Reporter:
    """The pytest plugin: sends what it observes itself, never what a report object claims alone."""

    def __init__(self, send, demanded: list[str]) -> None:
        self.send, self.demanded = send, set(demanded)
        self.raised: dict[tuple[str, str], bool] = {}

    def pytest_load_initial_conftests(self, early_config, parser, args):
        try:
            return (yield)
        except BaseException as exc:
            self.send("collect_error", id="conftest", msg=f"{type(exc).__name__}: {exc}"[-MESSAGE_CHARS:])
            raise

    def pytest_collectreport(self, report) -> None:
        if report.outcome != "passed":
            self.send("collect_error", id=report.nodeid, msg=_text(report.longrepr))

    def pytest_collection_modifyitems(self, session, config, items) -> None:
        keep = [item for item in items if item.nodeid in self.demanded]
        dropped = [item for item in items if item.nodeid not in self.demanded]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep
        self.send("collected", ids=[item.nodeid for item in keep])

    def pytest_runtest_makereport(self, item, call):
        self.raised[(item.nodeid, call.when)] = call.excinfo is not None
        return (yield)

    def pytest_runtest_logreport(self, report) -> None:
        raised = self.raised.pop((report.nodeid, report.when), None)
        message = _text(report.longrepr) if report.outcome != "passed" else ""
        self.send("report", id=report.nodeid, when=report.when, outcome=report.outcome, raised=raised,
                  xfail=hasattr(report, "wasxfail"), msg=message)  # fmt: skip


def _mark_wrappers(reporter_class) -> None:
    import pytest

    for name in ("pytest_load_initial_conftests", "pytest_runtest_makereport"):
        function = vars(reporter_class)[name]
        setattr(reporter_class, name, pytest.hookimpl(wrapper=True, tryfirst=True)(function))


def _audit(send):
    state = {"sending": False}

    def hook(event: str, args: tuple) -> None:
        if event in FLAGGED_EVENTS and not state["sending"]:
            state["sending"] = True
            try:
                send("tamper", why=f"the code under test used {event}")
            finally:
                state["sending"] = False
            raise RuntimeError(f"sandbox: {event} is not allowed")

    return hook


def main() -> int:
    """Read the run's config, arm the reporter and the checks, run pytest, send `done`."""
    config = _read_config(3)
    send = _sender(4, config["nonce"])
    import pytest

    _mark_wrappers(Reporter)
    reporter = Reporter(send, config["ids"])
    snapshot = _watched_objects()
    members, state = dict(vars(Reporter)), dict(vars(reporter))
    sys.addaudithook(_audit(send))
    sys.path.insert(0, os.getcwd())  # as `python -m pytest` does: the repo is importable from its root
    args = [*config["files"], "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:xdist",
            "--continue-on-collection-errors", f"--rootdir={os.getcwd()}",
            f"--basetemp={config['basetemp']}"]  # fmt: skip
    code = int(pytest.main(args, plugins=[reporter]))
    changed = _changed(snapshot)
    changed += [f"the reporter's {k} was changed" for k, v in members.items() if vars(Reporter).get(k) is not v]
    changed += [f"the reporter's {k} was changed" for k, v in state.items() if vars(reporter).get(k) is not v]
    send("done", exit=code, tamper=changed[:20])
    sys.stdout.flush()
    sys.stderr.flush()
    return code


if __name__ == "__main__":
    os._exit(main())
