"""Twins made at run time from each function task and its reference: the families, and a set's twins.

Each twin is a task of its own, id `<original>~<family>`, with `twin_of` and `family` set; it shares the
original's data files (plus inputs) and limits. Twins are deterministic: the same tasks and seed give the same
twins (names from a seeded word list; inputs chosen by a seeded draw; outputs from the trusted reference, cached
by content under the cache directory, runner.twins.inputs). A task a family cannot twin is listed with the
reason (Skipped); repo tasks get no twins.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.tasks.importers import KNOWN_WRONG_EXAMPLES, _assert_tests, visible_suite
from runner.tasks.model import Task
from runner.twins import transform
from runner.twins.examples import Example, find_examples, rewrite, unfound_examples
from runner.twins.inputs import Output, literal_repr, plus_rows, probe, suite_inputs
from runner.twins.layout import formatted
from runner.twins.rename import NotTwinnable, rename_twin

FAMILIES = ("rename", "examples", "format", "transform")
"""Every family, in the order a set's twins are listed."""
SEPARATOR = "~"
LONGEST_INPUT = 80
"""An input whose call is longer than this is not shown as an example."""


@dataclass(frozen=True)
class Skipped:
    """A task a family made no twin of, and why."""

    task_id: str
    family: str
    reason: str


def families_of(option: str) -> tuple[str, ...]:
    """The families a `twins` option names: "off" none, "all" every one, else the one named."""
    if option == "off":
        return ()
    if option == "all":
        return FAMILIES
    if option not in FAMILIES:
        raise ValueError(f"unknown twin family {option!r}; use off, all or one of {', '.join(FAMILIES)}")
    return (option,)


def twin_id(task_id: str, family: str) -> str:
    """The id of a task's twin of one family."""
    return f"{task_id}{SEPARATOR}{family}"


def _visible(task: Task, prompt: str, entry_point: str) -> str | None:
    """The visible suite made again from `prompt`'s examples, when the original was made from the prompt's
    (HumanEval's docstring examples, MBPP's assert line); None for a hand-written one."""
    visible = task.suites.get("visible", "")
    if not visible:
        return None
    if visible == visible_suite(task.prompt, task.entry_point, KNOWN_WRONG_EXAMPLES.get(task.id, frozenset())):
        return visible_suite(prompt, entry_point)
    made = _assert_tests(task.prompt.splitlines(), "example")
    if made and visible.endswith(made):
        return visible[: len(visible) - len(made)] + _assert_tests(prompt.splitlines(), "example")
    return None


def _with_visible(suites: dict, visible: str | None) -> dict:
    if visible is None:
        return dict(suites)
    return {**suites, "visible": visible} if visible.strip() else {k: v for k, v in suites.items() if k != "visible"}


@dataclass
class _Plan:
    """A task's examples and the inputs whose outputs the examples and transform families need."""

    task: Task
    examples: list[Example]
    fresh: list[tuple]  # inputs the prompt does not show (examples family)
    known: list[tuple]  # the suites' literal inputs (transform family's result type)
    outputs: list[Output] = dataclasses.field(default_factory=list)

    @property
    def probed(self) -> list[tuple]:
        return [e.args for e in self.examples] + self.fresh + self.known


def _plan(task: Task, seed: int, families: Sequence[str]) -> _Plan:
    examples = [e for e in find_examples(task.prompt, task.entry_point) if e.args is not None]
    shown = {repr(e.args) for e in examples}
    fresh = []
    if "examples" in families and examples:
        pool = {}
        for args in [*suite_inputs(task), *(args for args, _ in plus_rows(task))]:
            text = literal_repr(list(args))
            if text is not None and repr(tuple(args)) not in shown and len(text) <= LONGEST_INPUT:
                pool.setdefault(text, tuple(args))
        ordered = sorted(pool, key=lambda t: (len(t), t))[: 4 * len(examples)]
        random.Random(f"{seed}:{task.id}:examples").shuffle(ordered)
        fresh = [pool[t] for t in ordered[: 3 * len(examples)]]
    known = []
    if "transform" in families:
        known = [args for args in suite_inputs(task) if literal_repr(list(args)) is not None][:50]
    return _Plan(task, examples, fresh, known)


def _call(entry_point: str, args: tuple) -> str:
    return f"{entry_point}({', '.join(repr(a) for a in args)})"


def _value(output: Output):
    from ast import literal_eval

    return literal_eval(output.text)


def _showable(output: Output) -> bool:
    """Whether an output can be written as a literal that reads back equal (not a Counter, not nan)."""
    if not output.ok or output.text is None:
        return False
    try:
        return literal_repr(_value(output)) is not None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def examples_twin(plan: _Plan) -> Task:
    """Examples on other inputs in place of the prompt's, their outputs the reference's."""
    task, count = plan.task, len(plan.examples)
    if not count:
        raise NotTwinnable("the prompt shows no example to replace")
    outputs = plan.outputs[count : count + len(plan.fresh)]
    shown = []
    for args, out in zip(plan.fresh, outputs, strict=True):
        if _showable(out) and len(out.text) <= LONGEST_INPUT:
            shown.append((_call(task.entry_point, args), out.text, _value(out)))
    if not shown:
        raise NotTwinnable(f"no other input with an output short enough to show, for the prompt's {count} example(s)")
    prompt = rewrite(task.prompt, task.entry_point, plan.examples, shown[:count])
    kept = [e.call for e in plan.examples if e.call in prompt]
    if kept:
        raise NotTwinnable(f"the example {kept[0]} is still in the prompt after the rewrite")
    suites = _with_visible(task.suites, _visible(task, prompt, task.entry_point))
    return dataclasses.replace(task, prompt=prompt, suites=suites, edge_cases=())


def transform_twin(plan: _Plan, plus: list) -> Task:
    """The prompt asks for transformation ∘ result; examples show transformed outputs; suites see the inverse."""
    task, count = plan.task, len(plan.examples)
    loose = re.search(r"^_COMPARE = '(set|not_none)'", task.suites.get("properties", ""), re.MULTILINE)
    if loose:
        raise NotTwinnable(f"its outputs are compared loosely ({loose.group(1)}): a transformation changes nothing")
    ok = [o for o in plan.outputs if o.ok]
    types = {o.type for o in ok} | {type(s[1]).__name__ for _, s in plus if s and s[0] and s[1] is not None}
    kind = transform.result_kind(types)
    shown = []
    for example, out in zip(plan.examples, plan.outputs[:count], strict=True):
        if not _showable(out):
            raise NotTwinnable(f"the example {example.call} has no output to show transformed")
        value = transform.apply(kind, _value(out))
        shown.append((example.call, repr(value), value))
    prompt = rewrite(task.prompt, task.entry_point, plan.examples, shown) if count else task.prompt
    other = unfound_examples(task.prompt, plan.examples)
    prompt = transform.with_sentence(prompt, transform.sentence(kind, bool(count), other))
    return transform.transformed(task, kind, prompt, _visible(task, prompt, task.entry_point))


def make_twins(tasks: Sequence, option: str, seed: int, cache_dir: str | Path) -> tuple[list[Task], list[Skipped]]:
    """The twins of every function task for the `twins` option, in task then family order, and what was skipped."""
    families = families_of(option)
    functions = [t for t in tasks if isinstance(t, Task) and not t.twin_of]
    if not families or not functions:
        return [], []
    taken = {t.entry_point for t in functions}
    plans = [_plan(t, seed, families) for t in functions]
    if {"examples", "transform"} & set(families):
        for plan, outputs in zip(plans, probe([(p.task, p.probed) for p in plans], cache_dir), strict=True):
            plan.outputs = outputs
    twins, skipped = [], []
    for plan in plans:
        task = plan.task
        for family in families:
            try:
                if family == "rename":
                    twin = rename_twin(task, seed, taken)
                    taken.add(twin.entry_point)
                elif family == "examples":
                    twin = examples_twin(plan)
                elif family == "format":
                    twin = dataclasses.replace(task, prompt=formatted(task.prompt))
                else:
                    twin = transform_twin(plan, plus_rows(task))
            except NotTwinnable as exc:
                skipped.append(Skipped(task.id, family, str(exc)))
                continue
            except Exception as exc:  # a task this family's code does not handle: said, never the job's end
                skipped.append(Skipped(task.id, family, f"not made: {type(exc).__name__}: {exc}"))
                continue
            twins.append(dataclasses.replace(twin, id=twin_id(task.id, family), twin_of=task.id, family=family))
    return twins, skipped


def with_twins(tasks: list, option: str, seed: int, cache_dir: str | Path) -> tuple[list, list[Skipped], str]:
    """The tasks followed by their twins (nothing added for `off`), what was skipped, and a line saying so."""
    twins, skipped = make_twins(tasks, option, seed, cache_dir)
    if not families_of(option):
        return list(tasks), [], ""
    made = {f: sum(t.family == f for t in twins) for f in families_of(option)}
    functions = sum(isinstance(t, Task) for t in tasks)
    line = f"twins ({option}, seed {seed}): " + ", ".join(f"{n} {f}" for f, n in made.items())
    line += f" of {functions} function task(s)"
    line += f"; {len(skipped)} not made (twins.json says why)" if skipped else ""
    if functions < len(tasks):
        line += f"; {len(tasks) - functions} repo task(s) get no twins (a twin needs a function task's reference)"
    return [*tasks, *twins], skipped, line


def twins_record(tasks: Sequence, skipped: Sequence[Skipped]) -> dict:
    """What twins.json holds: each twin's id, original and family, and each skipped (task, family) with its reason."""
    made = [{"id": t.id, "twin_of": t.twin_of, "family": t.family} for t in tasks if getattr(t, "twin_of", "")]
    return {"twins": made, "skipped": [dataclasses.asdict(s) for s in skipped]}


def twin_gold_block(tasks: Sequence, results: Sequence, skipped: Sequence[Skipped]) -> str:
    """Per family: of the tasks whose reference passes, how many twins were made and pass their own suites; then
    each twin that fails its gold check and each task a family made no twin of, with the reason."""
    status = {r.task_id: r for r in results}
    twins = [t for t in tasks if getattr(t, "twin_of", "")]
    good = {t.id for t in tasks if not getattr(t, "twin_of", "") and t.id in status and status[t.id].ok}
    lines = ["", "Twins of the tasks whose reference passes (their own suites):"]
    for family in [f for f in FAMILIES if any(t.family == f for t in twins) or any(s.family == f for s in skipped)]:
        mine = [t for t in twins if t.family == family and t.twin_of in good]
        passing = sum(status[t.id].ok for t in mine)
        missing = sum(s.family == family and s.task_id in good for s in skipped)
        share = f"{100 * passing / len(good):.1f}%" if good else "n/a"
        lines.append(
            f"  {family}: {passing}/{len(good)} pass ({share}); {len(mine) - passing} made but failing, "
            f"{missing} not made"
        )
    for t in twins:
        if t.twin_of in good and not status[t.id].ok:
            detail = status[t.id].detail.replace("\n", " | ")[:160]
            lines.append(f"  excluded {t.id}: {status[t.id].status} {detail}")
    for s in skipped:
        if s.task_id in good:
            lines.append(f"  not made {twin_id(s.task_id, s.family)}: {s.reason}")
    return "\n".join(lines)
