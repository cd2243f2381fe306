"""The child's audit hook: once the candidate runs, it may not use the tools for reaching into the harness."""

from __future__ import annotations

import sys

from runner.sandbox.protocol import Channel, Tamper

FLAGGED_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.settrace",
                            "sys.setprofile", "sys.addaudithook"})  # fmt: skip


def _is_reference(path: object) -> bool:
    """The job's reference solution (a suite's differential oracle), which candidate code may not read."""
    return isinstance(path, str) and (path == "reference.py" or path.endswith("/reference.py"))


def install_audit_hook(channel: Channel, candidate_path: str, on_candidate_start) -> None:
    """Arm on the candidate's first code execution; then refuse introspection from candidate code."""
    state = {"armed": False, "busy": False}
    getframe = sys._getframe

    def candidate_on_stack() -> bool:
        frame = getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == candidate_path:
                return True
            frame = frame.f_back
        return False

    def hook(event: str, args: tuple) -> None:
        if state["busy"]:
            return
        if not state["armed"]:
            if event == "exec" and getattr(args[0], "co_filename", None) == candidate_path:
                state["armed"] = True
                on_candidate_start()
            return
        flagged = event in FLAGGED_EVENTS or event.startswith("ctypes.") or (event == "open" and _is_reference(args[0]))
        if not flagged and not (event == "object.__setattr__" and args[1] == "__code__"):
            return
        state["busy"] = True
        try:
            if candidate_on_stack():
                what = "reference.py (the reference solution)" if event == "open" else event
                channel.send(Tamper(f"candidate used {what}"))
                raise RuntimeError(f"sandbox: {event} is not allowed")
        finally:
            state["busy"] = False

    sys.addaudithook(hook)
