"""Typed config schemas, registered in Hydra's ConfigStore.

`conf/config.yaml` lists `schema` first in its defaults, so every YAML group file is merged into
these dataclasses: a misspelled key or a value of the wrong type fails at start-up with the key named.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

MISSING = "???"  # omegaconf.MISSING: a mandatory value; spelled out so this module imports no OmegaConf


@dataclass(frozen=True)
class Rule:
    """What a config field allows beyond its type: `check(value)` is True for an allowed value, `allowed` says it."""

    check: Callable[[Any], bool]
    allowed: str


def ruled(rule: Rule, default: Any = None, factory: Callable[[], Any] | None = None) -> Any:
    """A dataclass field with its `rule` beside it; runner.validation checks every ruled field of the schema."""
    if factory is not None:
        return field(default_factory=factory, metadata={"rule": rule})
    return field(default=default, metadata={"rule": rule})


def _is_base_url(value: Any) -> bool:
    if isinstance(value, str):
        return True
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(url, str) and url.strip() for url in value)
        and len({url.rstrip("/") for url in value}) == len(value)
    )


def _is_date(value: str) -> bool:
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
POSITIVE = Rule(lambda v: v > 0, "> 0")
COUNT = Rule(lambda v: v >= 1, ">= 1")
NOT_NEGATIVE = Rule(lambda v: v >= 0, ">= 0")
TEXT = Rule(lambda v: bool(str(v).strip()), "a non-empty string")
FRACTION = Rule(lambda v: 0 < v < 1, "in (0, 1), e.g. 0.95")
NAMES = Rule(lambda v: all(_NAME.match(m) for m in v), "a list of module names")
COUNTS = Rule(lambda v: bool(v) and all(k >= 1 for k in v), "a non-empty list of counts >= 1")
BASE_URL = Rule(_is_base_url, "a URL, or a list of distinct URLs (a list: backend=ollama or openai)")


class BackendName(StrEnum):
    """Where generations come from (runner.generation.backends.factory.BACKENDS builds each)."""

    llamacpp = "llamacpp"
    ollama = "ollama"
    openai = "openai"
    replay = "replay"


class Speculative(StrEnum):
    """The embedded model's draftless speculative decoding: `ngram` drafts the next tokens from a token sequence
    already in the prompt or the answer (prompt lookup) and the model checks the draft in one batch; `none`."""

    none = "none"
    ngram = "ngram"


SPREADABLE = (BackendName.ollama, BackendName.openai)
"""The backends whose requests a base_url list spreads over servers."""


class GateMode(StrEnum):
    """`enforce`: a violation is the outcome `policy_rejected`; `report`: the code runs, violations are recorded."""

    enforce = "enforce"
    report = "report"


class Importer(StrEnum):
    """How a task set is read (runner.tasks): YAML task files or a benchmark's dataset."""

    yaml = "yaml"
    humaneval = "humaneval"
    humanevalplus = "humanevalplus"
    humanevalplus_mini = "humanevalplus_mini"
    mbppplus = "mbppplus"
    mbpp = "mbpp"


class TwinFamily(StrEnum):
    """Which twins each function task gets (runner.twins): none, one family, or all four."""

    off = "off"
    rename = "rename"
    examples = "examples"
    format = "format"
    transform = "transform"
    all = "all"


class GoldOnFailure(StrEnum):
    """A task whose reference fails its own suites: `exclude` it from the job, or `abort` the job."""

    exclude = "exclude"
    abort = "abort"


class RepoAnswer(StrEnum):
    """How a model answers a repo task: a unified diff (applied with `git apply`) or whole-file replacements."""

    diff = "diff"
    files = "files"


@dataclass
class BackendConfig:
    """Where generations come from."""

    name: BackendName = BackendName.llamacpp  # the embedded llama.cpp model, a server, or a replayed file
    # ollama: http://127.0.0.1:11434 ; openai: http://127.0.0.1:8000/v1 ; or a list of such URLs, whose servers
    # share the requests (runner.generation.backends.server_pool). `Any`: omegaconf 2.3 takes no str | list
    # union, so the type (a string or a list of strings) is checked by its rule.
    base_url: Any = ruled(BASE_URL, "")
    api_key_env: str = "OPENAI_API_KEY"  # openai: name of the env var holding the key (never the key)
    timeout_s: float = ruled(POSITIVE, 60.0)  # connect, and each read: a server silent this long is hung
    # one whole request (connect + all reads), so a trickling server ends too
    request_timeout_s: float = ruled(POSITIVE, 120.0)
    retry_total_s: float = ruled(POSITIVE, 120.0)  # all tries of one request and the waits between them
    max_concurrency: int = ruled(COUNT, 1)  # requests in flight at once, per server
    max_retries: int = ruled(NOT_NEGATIVE, 3)
    retry_backoff_s: float = ruled(NOT_NEGATIVE, 1.0)
    probe_after_s: float = ruled(POSITIVE, 30.0)  # a server taken out of a base_url list is asked again after this long
    keep_alive: str = "5m"  # ollama
    # llamacpp: 0 = every core not busy with other programs' work when the model loads
    n_threads: int = ruled(NOT_NEGATIVE, 0)
    # llamacpp: `ngram` (prompt lookup) drafts tokens that repeat the prompt or the answer, such as a restated
    # signature and docstring; the model verifies each draft, so the answer is the model's own
    speculative: Speculative = Speculative.none
    replay_file: str = ""  # replay: an attempts.jsonl or samples JSONL


@dataclass
class ModelConfig:
    """The model under test. `id` is what the backend understands (Ollama tag, GGUF path, ...)."""

    name: str = ruled(TEXT, "${model_name:${.id}}")  # label in reports, folders and run names; default derived from id
    id: str = ruled(TEXT, MISSING)
    think: bool | None = None  # ollama: reasoning on/off (None = server default)
    num_ctx: int = ruled(COUNT, 4096)
    sha256: str = ""  # llamacpp, id hf:...: the GGUF file's pinned SHA-256, checked after download ("" = unpinned)


@dataclass
class SamplingConfig:
    """Sampling parameters; `n` samples per task (for pass@k)."""

    temperature: float = ruled(NOT_NEGATIVE, 0.0)
    top_p: float = ruled(Rule(lambda v: 0 < v <= 1, "in (0, 1]"), 1.0)
    num_predict: int = ruled(COUNT, 512)  # conf/sampling/ takes the prompt set's budget (prompts.num_predict)
    n: int = ruled(COUNT, 1)
    stop: list[str] = field(default_factory=list)


@dataclass
class GateConfig:
    """AST gate rules (policy, not security: the sandbox is the security boundary)."""

    name: str = ruled(TEXT, "builtins_only")
    enabled: bool = True
    mode: GateMode = GateMode.enforce  # conf/config.yaml takes it from task_set.gate_mode
    allowed_imports: list[str] = ruled(NAMES, factory=list)  # module names; empty = no imports
    allow_classes: bool = False
    allow_global_statements: bool = False
    allow_extra_top_level: bool = False  # other top-level statements beside functions/docstring
    allow_dunder_attributes: bool = False
    forbidden_calls: list[str] = ruled(
        Rule(lambda v: all(_NAME.match(m) for m in v), "a list of (dotted) names"),
        factory=lambda: [
            "eval", "exec", "open", "compile", "__import__", "input", "globals",
            "locals", "vars", "getattr", "setattr", "delattr",
        ]
    )  # fmt: skip


def gate_off() -> GateConfig:
    """The gate switched off: what a reference and an unconfigured bench are judged through."""
    return GateConfig(name="off", enabled=False)


@dataclass
class RepairConfig:
    """Repair loop: attempts after the first, fed by visible-suite feedback only."""

    max_repairs: int = ruled(NOT_NEGATIVE, 1)
    max_attempts: int | None = None  # the old name of max_repairs (the same count), accepted until the next release
    feedback_max_chars: int = ruled(Rule(lambda v: v >= 100, ">= 100"), 2000)


@dataclass
class TaskSetConfig:
    """Which tasks to run."""

    name: str = ruled(TEXT, "seed10")
    importer: Importer = Importer.yaml  # how the set is read: YAML task files or a benchmark's dataset
    path: str = "tasks/seed10"  # a YAML directory or a dataset file ("" = found/fetched: runner.tasks.datasets)
    gate: str = ""  # gate profile this set needs (imported benchmarks: stdlib); "" = config's gate
    gate_mode: GateMode = GateMode.enforce  # the gate mode this set is scored in (imported benchmarks: report)
    ids: list[str] = field(default_factory=list)  # task ids; empty = all
    limit: int = ruled(NOT_NEGATIVE, 0)  # 0 = all
    # an ISO date: keep only tasks created after it (contamination guard)
    created_after: str = ruled(Rule(lambda v: v == "" or _is_date(v), "an ISO date YYYY-MM-DD or empty"), "")


@dataclass
class TrackingConfig:
    """MLflow tracking."""

    enabled: bool = True
    uri: str = ruled(TEXT, "sqlite:///mlruns/mlflow.db")
    experiment: str = ruled(TEXT, "runner")
    artifact_root: str = "mlruns/artifacts"
    traces: bool = True  # every attempt as an MLflow trace in the job's run (runner.tracking.traces); false: none


@dataclass
class PromptsConfig:
    """Prompt templates. Placeholders: {prompt} {raw_prompt} {signature} {entry_point} {code} {feedback}.

    `prefix` pre-fills the start of the answer (a trailing assistant message the model continues; the
    code is extracted from prefix + continuation). `stop` is added to sampling.stop. An empty `system`
    sends no system message. `num_predict` is the set's token budget, which sampling.num_predict takes
    unless set itself. `sanitize` marks a set that asks for a script: its answers are cut down to the
    imports and the definitions the entry point uses before they are judged (runner.generation.sanitize).
    """

    name: str = ""
    system: str = MISSING
    task: str = MISSING
    repair: str = MISSING
    prefix: str = ""
    stop: list[str] = field(default_factory=list)
    num_predict: int = 512
    sanitize: bool = False
    repo_system: str = ""  # repo tasks (runner.repo.prompts); "" = the defaults there
    repo_task: str = ""
    repo_repair: str = ""


@dataclass
class SandboxConfig:
    """Limits for every candidate's test run; the one place their defaults live.

    `runner.sandbox.confine.limits.Limits` takes its defaults from here; see its docstring for what each means.
    """

    workers: int = ruled(COUNT, 2)
    timeout_s: float = ruled(POSITIVE, 10.0)
    cpu_s: float = ruled(POSITIVE, 10.0)
    memory_mb: int = ruled(POSITIVE, 512)  # above the child's own baseline
    max_file_mb: int = ruled(POSITIVE, 16)
    max_open_files: int = ruled(COUNT, 64)
    max_output_kb: int = ruled(COUNT, 64)
    max_processes: int = ruled(COUNT, 16)
    network: bool = False
    drop_privileges: bool = True
    hypothesis_examples: int = ruled(COUNT, 100)  # examples per property test (derandomized profile)


@dataclass
class GoldConfig:
    """Gold check: every reference must pass its own suites before any model is judged."""

    enabled: bool = True
    on_failure: GoldOnFailure = GoldOnFailure.exclude  # a failing reference: drop its task, or stop the job


@dataclass
class TwinsConfig:
    """Twins of every function task, made at run time and gold-checked; their score drop tells skill from memory."""

    family: TwinFamily = TwinFamily.off  # off, one family (rename, examples, format, transform) or all
    seed: int = ruled(NOT_NEGATIVE, 0)  # new names and example inputs; its own, so a sweep's seeds share twins


@dataclass
class RepoConfig:
    """Repository-level tasks: the answer format and where their environments come from."""

    answer: RepoAnswer = RepoAnswer.diff  # a unified diff, or whole files
    python: str = ""  # environments' interpreter ("": the harness's or /usr/bin/python3.X, one the sandbox can run)
    env_dir: str = ""  # where the environments are kept ("" = <cache_dir>/repo_envs); must be readable by every user
    # wall limit of one test run of a repo task (a task's test_timeout_s overrides it)
    timeout_s: float = ruled(POSITIVE, 60.0)


@dataclass
class EfficiencyConfig:
    """Efficiency scoring: each passing candidate's cost against its task's reference (runner.efficiency)."""

    enabled: bool = False  # measure every passing final answer after judging (efficiency=on; on for seed10)
    # a candidate over budget x the reference's instructions is stopped: too_slow
    budget: float = ruled(Rule(lambda v: v >= 1, ">= 1 (times the reference's instructions)"), 50.0)
    slow_ratio: float = ruled(POSITIVE, 10.0)  # a "slow pass" costs more than this many times the reference
    lean_ratio: float = ruled(POSITIVE, 1.0)  # a "lean pass" costs at most this many times the reference
    inputs_per_task: int = ruled(COUNT, 3)  # perf inputs selected from a benchmark's plus inputs
    # both sides' peak memory floored at this, so a ratio is never 0 or infinite
    memory_floor_kb: int = ruled(COUNT, 64)


@dataclass
class JudgingConfig:
    """How often an answer is judged: a verdict that changes from run to run is the harness's noise, not the model's."""

    # each distinct candidate judged this many times; one whose verdict changes is `flaky` (reported apart), and
    # the gold check runs each reference as often, excluding a flaky one (1: once, no re-run)
    repeats: int = ruled(COUNT, 1)


@dataclass
class ScoringConfig:
    """pass@k and confidence intervals."""

    k: list[int] = ruled(COUNTS, factory=lambda: [1])
    ci_level: float = ruled(FRACTION, 0.95)
    bootstrap_resamples: int = ruled(COUNT, 2000)
    bootstrap_seed: int = 0


@dataclass
class Config:
    """The whole experiment."""

    backend: BackendConfig = field(default_factory=BackendConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    gate: GateConfig = field(default_factory=GateConfig)
    repair: RepairConfig = field(default_factory=RepairConfig)
    task_set: TaskSetConfig = field(default_factory=TaskSetConfig)
    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    prompts: PromptsConfig = field(default_factory=PromptsConfig)
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    gold: GoldConfig = field(default_factory=GoldConfig)
    repo: RepoConfig = field(default_factory=RepoConfig)
    scoring: ScoringConfig = field(default_factory=ScoringConfig)
    judging: JudgingConfig = field(default_factory=JudgingConfig)
    efficiency: EfficiencyConfig = field(default_factory=EfficiencyConfig)
    twins: TwinsConfig = field(default_factory=TwinsConfig)
    seed: int = ruled(NOT_NEGATIVE, 42)
    cache_dir: str = ruled(TEXT, ".cache/runner")
    progress: bool = True


def register_configs() -> None:
    """Register the top-level schema (`conf/config.yaml` names it first in its defaults) and the resolvers."""
    from hydra.core.config_store import ConfigStore

    from runner.resolvers import register_resolvers

    register_resolvers()
    ConfigStore.instance().store(name="schema", node=Config)
