"""Inside the confined child: run a job's suite files in one pytest session, report over a private pipe.

The child is forked from a warm worker, so pytest, hypothesis and the stdlib are already imported.
Per-test reports go to the trusted worker as soon as pytest produces them, as lines carrying the
run's nonce on a pipe the candidate's stdout/stderr never touch; the worker decides the verdict.

The candidate runs in this process, so nothing here is trusted after its import. What the child does
to make forging hard and detectable:
- the verdict channel (protocol.Channel) keeps its own references to `os.write`, `os.getpid`,
  `json.dumps` and `vars`, captured before the candidate is imported, and only ever writes from the
  original child pid;
- every suite file is collected before any test runs, and suite modules load the candidate lazily
  (candidate_guard), so the candidate cannot run while a suite module is imported or rewritten;
  the worker sees on the channel if it did (`Armed` before `Collected`) and falls back;
- before collection it snapshots (integrity) the functions, classes and code objects of pytest,
  pluggy, hypothesis, candidate_guard, builtins and the child's own modules, the registered plugins
  and hook implementations; after collection the test items; and when the candidate's module is about
  to execute, every suite module's globals, the `reference` module, the guard's state and hypothesis's
  settings profiles. At the end of every suite (and of the session) any difference is reported;
- an audit hook (audit_hook), armed when the candidate's code starts executing, refuses (and reports)
  the tools for reaching into the harness: gc object walks, ctypes, trace/profile hooks and swapping
  a function's `__code__`, while candidate code is on the stack.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import os
import random
import sys
import types

import pytest

from runner.sandbox.child.audit_hook import install_audit_hook
from runner.sandbox.child.failure import MESSAGE_CHARS, describe
from runner.sandbox.child.guarded_objects import GuardedObjects, snapshot_entries
from runner.sandbox.child.integrity import GUARDED_MODULES, Integrity, load_failure
from runner.sandbox.confine.limits import Limits
from runner.sandbox.protocol import (
    Armed,
    Channel,
    Collected,
    CollectError,
    Done,
    Failure,
    Internal,
    Report,
    Start,
    SuiteDone,
)
from runner.suites.shipped import guard_source

DISABLED_PLUGINS = (
    "cacheprovider", "terminal", "pastebin", "junitxml", "stepwise", "doctest", "debugging", "setuponly",
    "setupplan", "unraisableexception", "threadexception", "faulthandler", "subtests", "legacypath",
)  # fmt: skip
"""Not needed to run a suite; each one costs time per session (and some would write files). `legacypath`
only adds the old `tmpdir` and `testdir` fixtures (suites use `tmp_path`)."""
TRACEBACK_STYLE = "line"
"""pytest's `--tb` style (an option of the terminal plugin, disabled here) for the text it writes for every
failure. A failure is described from its exception (`describe`); the text is read only for one without an
exception (a strict xpass), where it is no traceback. The default style (`long`: every frame's source read
and parsed) took about a fifth of the CPU time of judging a failing candidate (docs/benchmarks.md, "Failure
text")."""
RANDOM_SEED = 0
"""`random`'s seed as the child starts and as each suite file starts: a suite that draws test inputs from
`random` (HumanEval/38's and /50's) gets the same inputs on every run, whatever ran before it."""
_reseed = random.seed  # bound in the worker: a candidate that rebinds `random.seed` is not called by the harness


def seed_random() -> None:
    """Seed `random`'s shared generator with RANDOM_SEED."""
    _reseed(RANDOM_SEED)


class Collector:
    """The pytest plugin whose reports are the only results the worker accepts.

    A session may run several suite files in order; when the first test of the next file starts, and
    at the end of the session, the integrity checks run and a `suite_done` message closes the suite.
    """

    def __init__(self, channel: Channel, candidate_path: str, integrity: Integrity) -> None:
        self.channel, self.candidate_path, self.integrity = channel, candidate_path, integrity
        self.failures: dict[tuple[str, str], Failure | None] = {}
        self.config: pytest.Config | None = None
        self.current: str | None = None

    def pytest_configure(self, config: pytest.Config) -> None:
        config.option.tbstyle = TRACEBACK_STYLE

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> None:
        self.config = session.config
        self.integrity.capture_plugins(session.config)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.integrity.capture_items(list(session.items))
        self.channel.send(Collected())

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.close_suite()

    def close_suite(self) -> None:
        """Check integrity and tell the worker that the running suite file has finished."""
        if self.current is not None:
            tamper = self.integrity.check(self.config)[:20]
            self.channel.send(SuiteDone(self.current, tamper, load_failure()))
            self.current = None

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_make_collect_report(self, collector):
        report = yield
        if report.outcome != "passed":
            call = report.__dict__.get("call")
            failure = describe(call.excinfo if call is not None else None, self.candidate_path)
            if failure is None:
                failure = Failure(msg=str(report.longrepr)[:MESSAGE_CHARS])
            self.channel.send(CollectError(report.nodeid, report.outcome, failure))
        return report

    def pytest_runtest_logstart(self, nodeid: str, location) -> None:
        file = nodeid.split("::", 1)[0]
        if file != self.current:
            self.close_suite()
            self.current = file
            seed_random()
        self.channel.send(Start(nodeid))

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        if call.excinfo is not None:
            self.failures[(item.nodeid, call.when)] = describe(call.excinfo, self.candidate_path)
        return report

    def pytest_runtest_logreport(self, report) -> None:
        failure = self.failures.pop((report.nodeid, report.when), None)
        if report.outcome != "passed" and failure is None:
            failure = Failure(msg=str(report.longrepr)[:MESSAGE_CHARS])
        xfail = hasattr(report, "wasxfail")
        self.channel.send(Report(report.nodeid, report.when, report.outcome, xfail, failure))

    def pytest_internalerror(self, excrepr, excinfo) -> None:
        self.channel.send(Internal(str(excrepr)[:MESSAGE_CHARS]))


def pytest_args(test_path: str, rootdir: str, ini_path: str, basetemp: str) -> list[str]:
    """Command line of the in-process pytest session for one suite file."""
    args = [test_path, "-c", ini_path, "--rootdir", rootdir, f"--basetemp={basetemp}", "--noconftest", "-s"]
    for plugin in DISABLED_PLUGINS:
        args += ["-p", f"no:{plugin}"]
    if importlib.util.find_spec("pytest_randomly") is not None:
        args += ["-p", "no:randomly"]
    return args + ["-p", "_hypothesis_pytestplugin", "-o", "assert=rewrite", "-W", "ignore::pytest.PytestWarning"]


def load_candidate_guard(test_dir: str) -> None:
    """Make `candidate_guard` importable before the candidate: the job's copy if it has one.

    A copy identical to the harness's own module is served by the module the worker imported at
    start-up and never used (each forked child gets it untouched), which saves executing it per child.
    """
    from runner.suites import candidate_guard

    path = os.path.join(test_dir, "candidate_guard.py")
    if not os.path.exists(path):
        sys.modules["candidate_guard"] = candidate_guard
        return
    with open(path, encoding="utf-8", errors="replace") as handle:
        if handle.read() == guard_source():
            sys.modules["candidate_guard"] = candidate_guard
            return
    spec = importlib.util.spec_from_file_location("candidate_guard", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["candidate_guard"] = module
    spec.loader.exec_module(module)


def _watch_candidate(channel: Channel, candidate_path: str, test_paths: list[str], integrity: Integrity) -> None:
    """Install the audit hook; when the candidate starts, say so and snapshot the suite modules."""

    def on_candidate_start() -> None:
        channel.send(Armed())
        integrity.capture_suite_globals(_suite_modules(test_paths))

    install_audit_hook(channel, candidate_path, on_candidate_start)


def _suite_modules(test_paths: list[str]) -> list[types.ModuleType]:
    """The imported suite modules, looked up by the names pytest gives them (a file's stem).

    Only if some are not there (a suite not imported yet, or under another name) are all modules
    searched: reading every module object would copy hundreds of the forked child's memory pages.
    """
    found = []
    for path in test_paths:
        module = sys.modules.get(os.path.splitext(os.path.basename(path))[0])
        if module is not None and getattr(module, "__file__", None) == path:
            found.append(module)
    if len(found) < len(test_paths):
        paths = set(test_paths)
        found = [m for m in list(sys.modules.values()) if getattr(m, "__file__", None) in paths]
    return found


def _send_done(channel: Channel, code: int, integrity: Integrity, config: pytest.Config | None) -> None:
    channel.send(Done(code, integrity.check(config)[:20], load_failure()))


def run_suite(test_path: str, ini_path: str, channel: Channel, limits: Limits) -> int:
    """Run one suite file with pytest in this process; reports go to `channel`. Returns pytest's code.

    For the worker's warm-up run on a trusted suite: no audit hook is installed (one can never be removed
    again, and every forked child installs its own in `run_prepared`).
    """
    test_dir = os.path.dirname(test_path)
    candidate_path = os.path.join(test_dir, "candidate.py")
    load_profile(limits)
    load_candidate_guard(test_dir)
    integrity = Integrity()
    collector = Collector(channel, candidate_path, integrity)
    basetemp = os.path.join(os.getcwd(), "pt")
    integrity.capture_modules()
    code = int(pytest.main(pytest_args(test_path, test_dir, ini_path, basetemp), plugins=[collector]))
    _send_done(channel, code, integrity, collector.config)
    return code


class Prepared:
    """A pytest session configured and started in the warm worker, before any fork.

    Everything up to `pytest_sessionstart` (plugin loading, argument parsing, configure hooks, the
    fixture manager) depends only on fixed paths and the limits, so the worker does it once and
    every forked child inherits it: the child only collects and runs its suite file.
    """

    def __init__(self, config: pytest.Config, session: pytest.Session, collector: Collector,
                 objects: GuardedObjects) -> None:  # fmt: skip
        self.config, self.session, self.collector, self.objects = config, session, collector, objects


def prepare_session(test_dir: str, ini_path: str, scratch: str, limits: Limits) -> Prepared:
    """Configure and start a pytest session for suite files in `test_dir`, run from `scratch`.

    Must be called in the worker with `scratch` existing; never run the session here, only in a
    forked child (`run_prepared`). The guarded-module snapshot is taken after configuration, so
    pytest's configure-time patches are part of it (the child never unconfigures).
    """
    from _pytest.config import _prepareconfig

    load_profile(limits)
    collector = Collector(None, os.path.join(test_dir, "candidate.py"), None)
    cwd = os.getcwd()
    os.chdir(scratch)
    try:
        args = pytest_args(test_dir, test_dir, ini_path, os.path.join(scratch, "pt"))
        config = _prepareconfig(args, plugins=[collector])
        session = pytest.Session.from_config(config)
        session.exitstatus = pytest.ExitCode.OK
        config._do_configure()
        config.hook.pytest_sessionstart(session=session)
        for pattern in (*config.getini("norecursedirs"), *config.getini("python_files")):
            fnmatch.fnmatch("warm", pattern)  # fnmatch caches the compiled pattern here, not in every child
    finally:
        os.chdir(cwd)
    return Prepared(config, session, collector, guarded_objects())


def guarded_objects() -> GuardedObjects:
    """A snapshot of the guarded modules as they are now, for every child forked from here on (the
    job's own `candidate_guard` is added per child)."""
    return GuardedObjects(snapshot_entries(tuple(m for m in GUARDED_MODULES if m != "candidate_guard")))


def load_profile(limits: Limits) -> None:
    """Load the suites' hypothesis profile, if hypothesis is loaded (runner.sandbox.workers.warm_up.load_hypothesis):
    a child must never import it from disk."""
    if "hypothesis" in sys.modules:
        from runner.suites.hypothesis_profile import register_profile

        register_profile(limits.hypothesis_examples)


def _finish_session(config: pytest.Config, session: pytest.Session) -> int:
    """The part of pytest's `wrap_session` after `pytest_sessionstart`: collect, run, finish."""
    from _pytest.main import _main
    from _pytest.outcomes import Exit

    try:
        try:
            session.exitstatus = _main(config, session) or 0
        except pytest.UsageError:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
        except session.Failed:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        except (KeyboardInterrupt, Exit) as exc:
            excinfo = pytest.ExceptionInfo.from_current()
            config.hook.pytest_keyboard_interrupt(excinfo=excinfo)
            returncode = getattr(exc, "returncode", None)
            session.exitstatus = returncode if returncode is not None else pytest.ExitCode.INTERRUPTED
        except BaseException:
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            excinfo = pytest.ExceptionInfo.from_current()
            try:
                config.notify_exception(excinfo, config.option)
            except Exit as exc:
                if exc.returncode is not None:
                    session.exitstatus = exc.returncode
    finally:
        try:
            config.hook.pytest_sessionfinish(session=session, exitstatus=session.exitstatus)
        except Exit as exc:
            if exc.returncode is not None:
                session.exitstatus = exc.returncode
    return int(session.exitstatus)


def run_prepared(prepared: Prepared, test_paths: list[str], channel: Channel) -> int:
    """In a forked child: collect all the suite files, then run them in order, in one prepared session.

    Collection (import and assertion rewriting of every file) ends before any test runs, and the suite
    modules load the candidate lazily, on the first call of an entry point. Reports go to `channel`;
    returns pytest's exit code. The audit hook is always installed.
    """
    test_dir = os.path.dirname(test_paths[0])
    candidate_path = os.path.join(test_dir, "candidate.py")
    load_candidate_guard(test_dir)
    integrity = Integrity()
    collector = prepared.collector
    collector.channel, collector.candidate_path, collector.integrity = channel, candidate_path, integrity
    _watch_candidate(channel, candidate_path, test_paths, integrity)
    integrity.objects = [prepared.objects, GuardedObjects(snapshot_entries(("candidate_guard",)))]
    prepared.config.args = list(test_paths)
    os.environ["PYTEST_VERSION"] = pytest.__version__  # as pytest.main sets it (the child's environment is fresh)
    code = _finish_session(prepared.config, prepared.session)
    _send_done(channel, code, integrity, prepared.config)
    return code


def run_unprepared(test_paths: list[str], ini_path: str, channel: Channel, limits: Limits) -> int:
    """In a forked child, `run_prepared` without a prepared session: `pytest.main` configures pytest here."""
    test_dir = os.path.dirname(test_paths[0])
    candidate_path = os.path.join(test_dir, "candidate.py")
    load_profile(limits)
    load_candidate_guard(test_dir)
    integrity = Integrity()
    collector = Collector(channel, candidate_path, integrity)
    _watch_candidate(channel, candidate_path, test_paths, integrity)
    integrity.capture_modules()
    args = pytest_args(test_paths[0], test_dir, ini_path, os.path.join(os.getcwd(), "pt"))
    args[1:1] = test_paths[1:]  # every suite file, in order
    code = int(pytest.main(args, plugins=[collector]))
    _send_done(channel, code, integrity, collector.config)
    return code
