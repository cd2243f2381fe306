"""The script a cost run executes in the sandbox: load a solution and the perf inputs, call the function on each.

Run as `python -s -S -P cost_harness.py MODE DIR ENTRY` by a Python the sandbox uid may run (never the harness's
own venv), under valgrind's cachegrind for the counts. Standard library only; it imports nothing of `runner`.

- `count`: call the function on every input (the instructions counted are those valgrind reports);
- `baseline`: everything `count` does except calling the function (start-up, the preloaded modules, the
  inputs and the solution loaded, the report written): subtracted from every count;
- `plain`: like `count`, with tracemalloc's peak per call, and each output's canonical digest (floats rounded,
  dicts and sets sorted) to compare with the reference's; never run under valgrind.

DIR holds `inputs.pkl` (a pickled list of argument tuples) and `solution.bin` (the solution's module code,
marshalled by the trusted side) or `solution.py` (its source, when the two Pythons' bytecode differs). The
report is the last thing written, one line on stdout: `@@cost MODE PEAK SECONDS DIGEST,...`; then the process ends
with os._exit, so nothing the solution registered (atexit) runs after it. Each digest is the SHA-256 of the
output pickled without memo (equal outputs give equal bytes however they share objects), cheap C work that
both the reference and the candidate pay; the trusted side requires the count run's digests to equal the
candidate's own plain run's, so a run that ends early (before computing every output) cannot report.
"""

import os
import sys

PRELOAD = ("collections", "heapq", "itertools", "functools", "math", "bisect", "re", "string", "operator",
           "typing", "copy")  # fmt: skip
"""Modules loaded before the solution, in every mode: importing them is start-up (in the baseline), not
the solution's cost. A solution importing another module pays for that import
(`random`, `dataclasses`: each some 10-30 M instructions, left out as rare in answers and dear for every run)."""


def _sha256():
    try:
        from _sha256 import sha256
    except ImportError:
        from hashlib import sha256
    return sha256


def _canonical(value, depth=0):
    """A representation equal for outputs the suites would call equal: floats to 9 digits, unordered sorted."""
    if depth > 50:
        return repr(value)
    kind = type(value)
    if kind is float:
        return "f" + format(value, ".9g")
    if kind is int:  # hexadecimal: repr refuses ints over 4,300 digits (sys.get_int_max_str_digits)
        return "i" + format(value, "x")
    if kind is list or kind is tuple:
        return kind.__name__ + "[" + ",".join(_canonical(v, depth + 1) for v in value) + "]"
    if kind is dict:
        items = sorted((_canonical(k, depth + 1), _canonical(v, depth + 1)) for k, v in value.items())
        return "dict{" + ",".join(k + ":" + v for k, v in items) + "}"
    if kind is set or kind is frozenset:
        return kind.__name__ + "{" + ",".join(sorted(_canonical(v, depth + 1) for v in value)) + "}"
    return kind.__name__ + ":" + repr(value)


USAGE = """usage: python -m runner.sandbox.child.cost_harness MODE DIR ENTRY

The sandboxed side of runner.efficiency's cost runs, started by the sandbox worker (not a user command):
MODE is count, baseline or plain; DIR holds inputs.pkl and the solution; ENTRY is the function to call."""


def main():
    """Load, call, report (see the module docstring); never returns."""
    if sys.argv[1:2] in (["-h"], ["--help"]) or len(sys.argv) != 4:
        print(USAGE)
        sys.exit(0 if len(sys.argv) == 2 else 2)
    mode, base, entry = sys.argv[1], sys.argv[2], sys.argv[3]
    import io
    import marshal
    import pickle

    sha256 = _sha256()
    for name in PRELOAD:
        __import__(name)
    with open(os.path.join(base, "inputs.pkl"), "rb") as handle:
        inputs = pickle.loads(handle.read())
    compiled = os.path.join(base, "solution.bin")
    if os.path.exists(compiled):
        with open(compiled, "rb") as handle:
            code = marshal.loads(handle.read())
    else:
        with open(os.path.join(base, "solution.py"), encoding="utf-8") as handle:
            code = compile(handle.read(), "solution.py", "exec")
    namespace = {"__name__": "solution", "__builtins__": __builtins__}
    exec(code, namespace)
    function = namespace[entry]
    digests, peak, seconds = [], 0, 0.0
    if mode != "baseline":
        plain = mode == "plain"
        if plain:
            import tracemalloc

            start, reset, traced, tracing = (tracemalloc.start, tracemalloc.reset_peak,
                                             tracemalloc.get_traced_memory, tracemalloc.is_tracing)  # fmt: skip
            start()
            from time import perf_counter
        for args in inputs:
            if plain:
                reset()
                before = traced()[0]
                began = perf_counter()
            result = function(*args)
            if plain:
                seconds += perf_counter() - began
                if not tracing():
                    raise RuntimeError("tracemalloc was stopped during the call")
                peak = max(peak, traced()[1] - before)
            buffer = io.BytesIO()
            pickler = pickle.Pickler(buffer, 4)
            pickler.fast = True
            try:
                pickler.dump(result)
                digest = sha256(buffer.getvalue()).hexdigest()
            except Exception as err:  # an output pickle cannot hold: its type decides
                digest = "unpicklable:" + type(err).__name__ + ":" + type(result).__name__
            if plain:
                digest += "/" + sha256(_canonical(result).encode("utf-8", "backslashreplace")).hexdigest()
            digests.append(digest)
            del result
    line = "\n@@cost " + mode + " " + str(peak) + " " + repr(seconds) + " " + (",".join(digests) or "-") + "\n"
    os.write(1, line.encode())
    os._exit(0)


if __name__ == "__main__":
    main()
