"""The configuration reference, docs/configuration.md, generated from the schema and conf/ so it cannot drift.

    python -m runner.docs_config            # print the page (> docs/configuration.md to rewrite it)
    python -m runner.docs_config --check    # exit 1 if docs/configuration.md is not the generated page

Every key of the schema (runner/config.py) with its type, its default as `python -m runner` composes it
(the schema's own default beside it when conf/ sets another) and the comments beside and above it in the
schema's source; then every config group in conf/ with its options, each option's leading comment and the
values it sets. tests/test_docs_commands.py keeps the committed page equal to this text.
"""

from __future__ import annotations

import ast
import dataclasses
import io
import json
import re
import sys
import tokenize
from pathlib import Path
from typing import Any

import yaml

from runner import config as schema
from runner.check_option import check_option
from runner.syntax_tree import parse_tree

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "configuration.md"
CONF_DIR = ROOT / "conf"
SCHEMA_SOURCE = Path(schema.__file__)
LAUNCHER_PLUGINS = {
    "basic": "Hydra's own: the jobs one after another in this process (the default)",
    "joblib": "local processes in parallel (`hydra.launcher.n_jobs=N`); extra `cluster`",
    "ray": "a Ray instance of its own on this machine; extra `cluster`",
    "ray_cluster": "a running Ray cluster (conf/hydra/launcher/ray_cluster.yaml); extra `cluster`",
    "submitit_local": "submitit's local processes, to try a Slurm sweep out; extra `cluster`",
    "submitit_slurm": "Slurm jobs (`hydra.launcher.partition=...` and the like); extra `cluster`",
}
"""The `hydra/launcher=NAME` options: Hydra's basic launcher, the installed plugins' and conf/'s own."""
NOTES = {
    "seed": "the model's sampling seed and the job folder's `s<seed>`; a sweep over seeds repeats the job",
    "cache_dir": "generations, verdicts, gold checks, plus-input outputs, loaded benchmark sets, audits, "
    "repo environments (content-addressed; may be shared by many jobs, also on NFS)",
    "progress": "the progress line (redrawn on a terminal, one line per update into a file)",
    "backend.max_retries": "tries after the first for a transient server error",
    "backend.retry_backoff_s": "the first wait between tries; it doubles each try (capped)",
    "model.id": "what the backend understands: a GGUF path, `hf:OWNER/REPO/FILE.gguf[@REV]`, "
    "`ollama:NAME:TAG`, an Ollama tag or an OpenAI-compatible server's model name",
    "model.num_ctx": "the context window in tokens",
    "sampling.temperature": "0 = greedy",
    "sampling.top_p": "nucleus sampling",
    "sampling.n": "samples per task (pass@k needs n >= k)",
    "sampling.stop": "stop strings; the prompt set's `stop` is added",
    "gate.name": "the gate profile's name (conf/gate/)",
    "gate.enabled": "false: no static checks at all",
    "gate.allow_classes": "class definitions allowed",
    "gate.allow_global_statements": "`global` / `nonlocal` allowed",
    "gate.allow_dunder_attributes": "`x.__class__` and the like allowed",
    "gate.forbidden_calls": "names that may not be called",
    "repair.max_repairs": "repair attempts after the first (0 = none)",
    "repair.feedback_max_chars": "the visible tests' feedback in a repair prompt is cut to this length",
    "task_set.name": "the set's name in reports, run names and comparisons",
    "tracking.enabled": "false: no MLflow at all (`tracking=off`)",
    "tracking.uri": "an SQLite file or a tracking server (`http://HOST:5000`)",
    "tracking.experiment": "the MLflow experiment the runs go to",
    "tracking.artifact_root": "where a local store keeps artifacts (a server keeps its own)",
    "prompts.name": "the prompt set's name",
    "prompts.system": "the system message (empty: none)",
    "prompts.task": "the first user message",
    "prompts.repair": "the repair message, with the visible tests' feedback",
    "prompts.prefix": "pre-fills the start of the answer",
    "prompts.stop": "added to sampling.stop",
    "prompts.num_predict": "the prompt set's token budget; sampling.num_predict takes it unless set",
    "prompts.sanitize": "answers cut to the imports and the definitions the entry point uses",
    "prompts.repo_task": "repo tasks' first user message",
    "prompts.repo_repair": "repo tasks' repair message",
    "sandbox.workers": "warm sandbox workers (candidates judged at once)",
    "sandbox.timeout_s": "wall-clock limit per suite",
    "sandbox.cpu_s": "CPU-time limit per suite",
    "sandbox.max_file_mb": "largest file a candidate may write",
    "sandbox.max_open_files": "open files at once",
    "sandbox.max_output_kb": "output kept per suite",
    "sandbox.max_processes": "processes a candidate may run at once",
    "sandbox.network": "true: no private network namespace (never needed)",
    "sandbox.drop_privileges": "run candidates as an unprivileged uid",
    "gold.enabled": "false: judge models without checking the references first",
    "scoring.k": "the k of pass@k (each needs sampling.n >= k)",
    "scoring.ci_level": "confidence level of the bootstrap intervals",
    "scoring.bootstrap_resamples": "bootstrap resamples per interval",
    "scoring.bootstrap_seed": "the bootstrap's seed (intervals repeat)",
}
"""What a key is, for keys whose line in runner/config.py has no comment (a comment there wins)."""
USAGE = """usage: python -m runner.docs_config [--check]

Print the configuration reference (docs/configuration.md), generated from runner/config.py and conf/.

options:
  --check     print nothing; exit 1 if docs/configuration.md differs from the generated page
  -h, --help  show this help and exit"""


@dataclasses.dataclass(frozen=True)
class Key:
    """One schema key: dotted name, annotation as written, schema default, and its comments."""

    name: str
    type: str
    default: Any
    comment: str


def _comments(source: str) -> dict[int, str]:
    """Line number -> the comment on it (without `#`, `fmt:` pragmas dropped)."""
    found = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            text = token.string.lstrip("#").strip()
            if not text.startswith("fmt:"):
                found[token.start[0]] = text
    return found


def _field_comment(node: ast.AnnAssign, comments: dict[int, str], lines: list[str]) -> str:
    """The comment lines directly above a field and those on its own lines, joined."""
    above, line = [], node.lineno - 1
    while line >= 1 and lines[line - 1].strip().startswith("#"):
        above.insert(0, comments.get(line, ""))
        line -= 1
    own = [comments[n] for n in range(node.lineno, (node.end_lineno or node.lineno) + 1) if n in comments]
    return " ".join(part for part in (*above, *own) if part)


def _classes() -> dict[str, tuple[str, list[tuple[str, str, str]]]]:
    """Schema class name -> (its docstring, [(field, annotation source, comment)]) from runner/config.py."""
    source = SCHEMA_SOURCE.read_text(encoding="utf-8")
    comments, lines = _comments(source), source.splitlines()
    found = {}
    for node in parse_tree(source).body:
        if isinstance(node, ast.ClassDef):
            fields = [(item.target.id, ast.get_source_segment(source, item.annotation) or "",
                       _field_comment(item, comments, lines))
                      for item in node.body
                      if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)]  # fmt: skip
            found[node.name] = (ast.get_docstring(node) or "", fields)
    return found


def sections() -> list[tuple[str, str, list[Key]]]:
    """(section name, its docstring, its keys) in the schema's order; top-level scalars as section ""."""
    classes, root = _classes(), schema.Config()
    top_doc, top_fields = classes["Config"]
    result, top = [], []
    for name, annotation, comment in top_fields:
        value = getattr(root, name)
        if dataclasses.is_dataclass(value):
            doc, fields = classes[type(value).__name__]
            keys = [Key(f"{name}.{f}", a, getattr(value, f), c or NOTES.get(f"{name}.{f}", "")) for f, a, c in fields]
            result.append((name, doc, keys))
        else:
            top.append(Key(name, annotation, value, comment or NOTES.get(name, "")))
    return [("", top_doc, top), *result]


def schema_keys() -> set[str]:
    """Every dotted key of the schema (`sampling.temperature`) and every top-level key (`seed`)."""
    return {key.name for _name, _doc, keys in sections() for key in keys} | {s for s, _d, _k in sections() if s}


def config_groups() -> dict[str, list[str]]:
    """conf/'s config groups (`backend`, ..., `hydra/launcher`) -> their options, sorted."""
    groups = {}
    for folder in sorted(p for p in CONF_DIR.rglob("*") if p.is_dir()):
        options = sorted(p.stem for p in folder.glob("*.yaml"))
        if options:
            groups[folder.relative_to(CONF_DIR).as_posix()] = options
    return groups


def _leading_comment(path: Path) -> str:
    """The comment block a YAML file starts with, as one paragraph."""
    kept = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        kept.append(line.lstrip("#").strip())
    return " ".join(kept).replace("```", "\\`\\`\\`")  # a fence in prose would open a code span


def _show(value: Any) -> str:
    """A value as a table cell shows it: plain words as they are, anything else as JSON, long texts by size."""
    if isinstance(value, str) and ("\n" in value or len(value) > 60):
        return f"({value.count(chr(10)) + 1}-line text)" if "\n" in value else f"({len(value)}-character text)"
    if value == schema.MISSING:
        return "??? (required)"
    if isinstance(value, str) and value and all(c.isalnum() or c in "_-.:/$={}@" for c in value):
        return value
    return json.dumps(value, ensure_ascii=False)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _code(text: str) -> str:
    """`text` as a code span (fenced with more backticks than it holds), or as is when it is a size note."""
    if text.startswith("("):
        return _cell(text)
    run = max((len(r) for r in re.findall("`+", text)), default=0)
    fence, pad = "`" * (run + 1), " " if run else ""
    return f"{fence}{pad}{_cell(text)}{pad}{fence}"


def _composed() -> dict:
    """The config `python -m runner` composes with no overrides, interpolations left as written."""
    from omegaconf import OmegaConf

    from runner.compose import compose_with_hydra

    return OmegaConf.to_container(compose_with_hydra([]), resolve=False)


def _key_table(keys: list[Key], composed: dict) -> list[str]:
    from runner.validation import rule_text  # the choices of an enum field, or the rule beside a field

    rows = ["| key | type | default | allowed | what it is |", "| --- | --- | --- | --- | --- |"]
    for key in keys:
        node: Any = composed
        for part in key.name.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        schema_default = _show(key.default)
        default = _code(_show(node))
        if _show(node) != schema_default:
            default += f" (schema: {_code(schema_default)})"
        allowed = _cell(rule_text(key.name) or "")
        rows.append(f"| `{key.name}` | `{_cell(key.type)}` | {default} | {allowed} | {_cell(key.comment)} |")
    return rows


def _option_line(group: str, option: str) -> str:
    path = CONF_DIR / group / f"{option}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    picks, sets = [], []
    for key, value in data.items():
        if key == "defaults":  # `override /gate@_global_.gate: stdlib` picks another group's option
            pairs = [(k.split("/")[1].split("@")[0], v) for d in value if isinstance(d, dict) for k, v in d.items()]
            picks += [f"`{group_name}={pick}`" for group_name, pick in pairs]
        elif isinstance(value, dict) or (isinstance(value, str) and len(value) > 40):
            sets.append(f"`{key}`")
        else:
            sets.append(_code(f"{key}={_show(value)}"))
    about = _leading_comment(path)
    text = f"- `{option}`: {_cell(about) + ' ' if about else ''}"
    text += f"Picks {', '.join(picks)}. " if picks else ""
    return text + f"Sets {', '.join(sets) or 'nothing'}."


def page() -> str:
    """The whole Markdown page."""
    composed = _composed()
    defaults = yaml.safe_load((CONF_DIR / "config.yaml").read_text(encoding="utf-8"))["defaults"]
    chosen = {k: v for d in defaults if isinstance(d, dict) for k, v in d.items()}
    out = [
        "# Configuration reference",
        "",
        "<!-- Generated by `python -m runner.docs_config > docs/configuration.md` from runner/config.py and conf/;",
        "     do not edit by hand (tests/test_docs_commands.py fails when this page and the generator differ). -->",
        "",
        "Every key below can be set on the command line (`python -m runner sampling.temperature=0.2`) or in a",
        "YAML file under `conf/`. Keys must exist (also with `+`), and every value is checked before any work",
        "starts, in one line that names the key, the value and what is allowed. *default* is the value",
        "`python -m runner` composes with no overrides (`${...}` is an interpolation, resolved when used);",
        "where the schema's own default differs, it is shown beside it.",
        "",
        "## Contents",
        "",
    ]
    names = [name or "top level" for name, _doc, _keys in sections()]
    out += [f"- [`{n}`](#{n.replace(' ', '-')})" for n in names]
    out += ["- [Config groups](#config-groups)", ""]
    for name, doc, keys in sections():
        out += [f"## {name or 'top level'}", "", doc, "", *_key_table(keys, composed), ""]
    out += ["## Config groups", "",
            "A group picks a whole YAML file: `python -m runner backend=ollama model=qwen3_8b`. The default of",
            "each is the one `conf/config.yaml` lists; a task set's file may pick its own gate and prompt set.",
            ""]  # fmt: skip
    for group, options in config_groups().items():
        if group == "hydra/launcher":
            continue
        out += [f"### {group}", "", f"`{group}=NAME`; default `{chosen.get(group, 'none')}`.", ""]
        out += [_option_line(group, option) for option in options] + [""]
    out += ["### hydra/launcher", "", "`hydra/launcher=NAME`, for sweeps (`python -m runner -m ...`); see "
            "[running on a cluster](cluster.md).", ""]  # fmt: skip
    out += [f"- `{name}`: {text}." for name, text in LAUNCHER_PLUGINS.items()]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    """Print the page; `--check` compares it with the committed one; -h/--help prints USAGE."""
    answered = check_option(argv, USAGE)
    if answered is not None:
        return answered
    text = page()
    if "--check" in argv:
        if not PAGE.is_file() or PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is out of date; run python -m runner.docs_config > docs/configuration.md", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
