"""Every command, config key and make target that README.md and docs/*.md name exists.

- docs/configuration.md is exactly what `python -m runner.docs_config` generates, and every key is described;
- each `python -m runner ...` line's overrides compose (runner.compose.compose_config, in-process) and pass
  the config checks (runner.validation.typed_config): for a sweep (`-m`), the first value of each swept
  key, without the launcher's `hydra...` keys; an argument with a placeholder (`<date>`) is left out, its
  key still checked;
- each `python -m runner.X` is a command (tests/test_help.py runs its --help); its `key=value` arguments
  that are not its own options compose as above;
- each dotted config key in backticks (`sampling.num_predict`, `backend.max_concurrency=1`) is in the
  schema, each `group=option` in backticks names an option in conf/, and each `make X` is a Makefile target.
"""

from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path

import pytest
from command_modules import ROOT, command_modules

from runner import docs_config
from runner.compose import compose_config
from runner.validation import typed_config

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FILE_SUFFIXES = (".py", ".yaml", ".json", ".jsonl", ".md", ".txt", ".png", ".db", ".gz", ".gguf", ".patch", ".toml")
PLACEHOLDER = re.compile(r"<[^>]*>|\.\.\.")
KEY = re.compile(r"([a-z_]+(?:\.[a-z_0-9]+)+)(=.*)?")
MISSPELT = {"sampling.temprature"}
"""Keys the pages misspell on purpose, to show the error a misspelt key gets (docs/verdicts.md)."""
GROUP_CHOICE = re.compile(r"([a-z_]+(?:/[a-z_]+)?)=([A-Za-z0-9_]+)")


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _split_fences(text: str) -> tuple[list[str], str]:
    """(the lines of the fenced code blocks, joined at trailing backslashes; the prose with the blocks cut out)."""
    code, prose, fenced = [], [], False
    for line in text.splitlines():
        if re.match(r"\s*(```|~~~)", line) and not re.match(r"\s*````", line):
            fenced = not fenced
            prose.append("")
            continue
        (code if fenced else prose).append(line)
    joined = "\n".join(code).replace("\\\n", " ")
    return joined.splitlines(), "\n".join(prose)


def _spans(prose: str) -> list[str]:
    """The inline code spans of the prose (`x`, ``x``), which may run over a line break."""
    return [m.group(2).strip() for m in re.finditer(r"(`+)(.+?)\1", prose, re.DOTALL)]


def commands() -> list[tuple[str, str, list[str]]]:
    """(page, module, arguments) of every `python -m runner...` the pages name, in code blocks and spans."""
    found = []
    for page in PAGES:
        code, prose = _split_fences(_text(page))
        for line in [*code, *_spans(prose)]:
            match = re.search(r"python -m (runner(?:\.\w+)*)(\.\S*)?(.*)", line.replace("\n", " "))
            if match and not match.group(2):  # `python -m runner.<tool>`, `runner.*`: no command
                args = shlex.split(match.group(3), comments=True)
                found.append((page.name, match.group(1), args))
    return found


def _overrides(args: list[str], sweep: bool) -> tuple[list[str], list[str]]:
    """(the overrides to compose, the keys of the arguments left out for a placeholder)."""
    kept, keys = [], []
    for arg in args:
        key, _, value = arg.partition("=")
        if key.startswith("hydra"):  # the launcher's and Hydra's own keys: not the experiment config
            continue
        if PLACEHOLDER.search(value):
            keys.append(key)
            continue
        if sweep and "," in value and not value.startswith("["):
            arg = f"{key}={value.split(',')[0]}"
        kept.append(arg)
    return kept, keys


def _check_composes(args: list[str], sweep: bool = False) -> None:
    overrides, left_out = _overrides(args, sweep)
    typed_config(compose_config(overrides))
    groups = docs_config.config_groups()
    unknown = [k for k in left_out if k.lstrip("+") not in docs_config.schema_keys() and k not in groups]
    assert not unknown, f"no such config key: {unknown}"


def test_the_configuration_page_is_the_generated_one():
    assert (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8") == docs_config.page(), (
        "run: python -m runner.docs_config > docs/configuration.md"
    )


def test_every_config_key_is_described():
    bare = [k.name for _s, _d, keys in docs_config.sections() for k in keys if not k.comment]
    assert not bare, f"describe these keys in runner/config.py (a comment beside the field): {bare}"


def test_the_pages_name_enough_commands_to_check():
    found = commands()
    assert len(found) >= 25 and {m for _p, m, _a in found} >= {"runner", "runner.evaluate", "runner.report"}


@pytest.mark.parametrize(
    ("page", "module", "args"), commands(), ids=[f"{p}:{m}:{' '.join(a)[:60]}" for p, m, a in commands()]
)
def test_the_command_exists_and_its_overrides_compose(page, module, args):
    assert module in command_modules(), f"{page}: python -m {module} is not a command"
    if module == "runner":
        _check_composes([a for a in args if a != "-m"], sweep="-m" in args)
        return
    options = getattr(importlib.import_module(module), "OPTIONS", None)
    if options is None:  # runner.report (argparse: paths and --flags), runner.tasks.schema, runner.docs_config
        return
    own = {o.name for o in options}
    _check_composes([a for a in args if "=" in a and a.partition("=")[0] not in own])


def _named(pattern: re.Pattern, spans: list[str]) -> list[str]:
    tokens = [t.strip("'\"(),;:") for span in spans for t in span.split()]
    return [t for t in tokens if pattern.fullmatch(t) and not t.startswith("+")]


def test_every_dotted_config_key_in_backticks_exists():
    keys, sections = docs_config.schema_keys(), {s for s, _d, _k in docs_config.sections() if s}
    named = {(page.name, t) for page in PAGES for t in _named(KEY, _spans(_split_fences(_text(page))[1]))}
    checked = [(page, t.partition("=")[0]) for page, t in named if t.split(".")[0] in sections]
    missing = sorted(
        (page, key) for page, key in checked if key not in keys | MISSPELT and not key.endswith(FILE_SUFFIXES)
    )
    assert len(checked) > 50
    assert not missing, f"config keys named in the docs that the schema does not have: {missing}"


def test_every_group_option_in_backticks_exists():
    groups = docs_config.config_groups()
    plugins = set(docs_config.LAUNCHER_PLUGINS)
    # a span of a runner.evaluate command holds its own options (efficiency=true), not config group choices
    spans = {page: [x for x in _spans(_split_fences(_text(page))[1]) if "runner.evaluate" not in x] for page in PAGES}
    named = {(page.name, t) for page in PAGES for t in _named(GROUP_CHOICE, spans[page])}
    checked = [
        (page, *t.split("=", 1)) for page, t in named if t.split("=")[0] in groups and t[t.index("=") + 1 :].islower()
    ]
    groups["hydra/launcher"] = [*groups.get("hydra/launcher", []), *plugins]
    missing = sorted((page, group, option) for page, group, option in checked if option not in groups[group])
    assert len(checked) > 10
    assert not missing, f"config group options named in the docs that conf/ does not have: {missing}"


def test_every_make_target_named_exists():
    targets = set(re.findall(r"^([a-z][\w-]*)\s*:", (ROOT / "Makefile").read_text(), re.MULTILINE))
    named = set()
    for page in PAGES:
        code, prose = _split_fences(_text(page))
        named |= {(page.name, t) for line in [*code, *_spans(prose)] for t in re.findall(r"\bmake ([a-z][\w-]*)", line)}
    assert {t for _p, t in named} >= {"demo", "test"}
    assert not sorted((p, t) for p, t in named if t not in targets), f"make targets not in the Makefile: {named}"


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_between_the_pages_resolves():
    anchors = {}
    for page in PAGES:
        _code, prose = _split_fences(_text(page))
        anchors[page.resolve()] = {_anchor(h) for h in re.findall(r"^#+ (.+)$", prose, re.MULTILINE)}
    broken = []
    for page in PAGES:
        for target, _, anchor in re.findall(r"\]\(([^)#\s]*)(#?)([^)\s]*)\)", _split_fences(_text(page))[1]):
            if target.startswith(("http://", "https://")):
                continue
            path = (page.parent / target).resolve() if target else page.resolve()
            if not path.exists() or (anchor and path.suffix == ".md" and anchor not in anchors.get(path, set())):
                broken.append(f"{page.name}: ({target}#{anchor})")
    assert not broken, f"links to no page or no heading: {broken}"


SOURCE_PATH = re.compile(r"(runner|tests|bench|conf)/[\w/]*(\.py|\.yaml|/)?")
MADE_BY_RUNS = ("bench/results/",)
"""Folders the benchmarks create (git-ignored), so absent from a fresh clone."""


def named_source_paths() -> list[tuple[str, str]]:
    """(page, path) of every code span naming a file or folder of the repository (`runner/job/run.py`)."""
    found = []
    for page in PAGES:
        for span in _spans(_split_fences(_text(page))[1]):
            if SOURCE_PATH.fullmatch(span) and not PLACEHOLDER.search(span) and not span.startswith(MADE_BY_RUNS):
                found.append((page.name, span))
    return found


def test_the_pages_name_source_files():
    assert len(named_source_paths()) > 40  # docs/layout.md alone names each package


def test_every_source_file_named_exists():
    missing = [f"{page}: {path}" for page, path in named_source_paths() if not (ROOT / path).exists()]
    assert not missing, f"the pages name files that are not in the repository: {missing}"


def test_every_module_the_layout_page_names_is_in_its_package():
    """docs/layout.md's line for `runner/<package>/` names its modules bare (`judge.py`): each is under that package."""
    missing = []
    for line in _text(ROOT / "docs" / "layout.md").splitlines():
        package = re.match(r"- `(runner/[\w/]+/)`", line)
        if package:
            for name in re.findall(r"`([\w]+\.py)`", line):
                if not list((ROOT / package.group(1)).rglob(name)):
                    missing.append(f"{package.group(1)}{name}")
    assert not missing, f"docs/layout.md names modules its packages do not have: {missing}"
