"""Typed config schemas, registered in Hydra's ConfigStore.

`conf/config.yaml` lists `schema` first in its defaults, so every YAML group file is merged into
these dataclasses: a misspelled key or a value of the wrong type fails at start-up with the key named.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MISSING = "???"  # omegaconf.MISSING: a mandatory value; spelled out so this module imports no OmegaConf


@dataclass
class BackendConfig:
    """Where generations come from."""

    name: str = "llamacpp"  # ollama | openai | llamacpp | replay
    # ollama: http://127.0.0.1:11434 ; openai: http://127.0.0.1:8000/v1 ; or a list of such URLs, whose servers
    # share the requests (runner.generation.backends.server_pool). `Any`: omegaconf 2.3 takes no str | list
    # union, so the type (a string or a list of strings) is checked in runner.validation.
    base_url: Any = ""
    api_key_env: str = "OPENAI_API_KEY"  # openai: name of the env var holding the key (never the key)
    timeout_s: float = 60.0  # connect, and each read: a server silent this long is hung
    request_timeout_s: float = 120.0  # one whole request (connect + all reads), so a trickling server ends too
    retry_total_s: float = 120.0  # all tries of one request and the waits between them
    max_concurrency: int = 1  # requests in flight at once, per server
    max_retries: int = 3
    retry_backoff_s: float = 1.0
    probe_after_s: float = 30.0  # a server taken out of a base_url list is asked again after this long
    keep_alive: str = "5m"  # ollama
    n_threads: int = 0  # llamacpp: 0 = every core not busy with other programs' work when the model loads
    replay_file: str = ""  # replay: an attempts.jsonl or samples JSONL


@dataclass
class ModelConfig:
    """The model under test. `id` is what the backend understands (Ollama tag, GGUF path, ...)."""

    name: str = "${model_name:${.id}}"  # label in reports, folders and run names; default derived from id
    id: str = MISSING
    think: bool | None = None  # ollama: reasoning on/off (None = server default)
    num_ctx: int = 4096
    sha256: str = ""  # llamacpp, id hf:...: the GGUF file's pinned SHA-256, checked after download ("" = unpinned)


@dataclass
class SamplingConfig:
    """Sampling parameters; `n` samples per task (for pass@k)."""

    temperature: float = 0.0
    top_p: float = 1.0
    num_predict: int = 512  # conf/sampling/ takes the prompt set's budget (prompts.num_predict)
    n: int = 1
    stop: list[str] = field(default_factory=list)


GATE_MODES = ("enforce", "report")
"""`enforce`: a violation is the outcome `policy_rejected`; `report`: the code runs, violations are recorded."""


@dataclass
class GateConfig:
    """AST gate rules (policy, not security: the sandbox is the security boundary)."""

    name: str = "builtins_only"
    enabled: bool = True
    mode: str = "enforce"  # enforce | report (GATE_MODES); conf/config.yaml takes it from task_set.gate_mode
    allowed_imports: list[str] = field(default_factory=list)  # module names; empty = no imports
    allow_classes: bool = False
    allow_global_statements: bool = False
    allow_extra_top_level: bool = False  # other top-level statements beside functions/docstring
    allow_dunder_attributes: bool = False
    forbidden_calls: list[str] = field(
        default_factory=lambda: [
            "eval", "exec", "open", "compile", "__import__", "input", "globals",
            "locals", "vars", "getattr", "setattr", "delattr",
        ]
    )  # fmt: skip


@dataclass
class RepairConfig:
    """Repair loop: attempts after the first, fed by visible-suite feedback only."""

    max_repairs: int = 1
    max_attempts: int | None = None  # the old name of max_repairs (the same count), accepted until the next release
    feedback_max_chars: int = 2000


@dataclass
class TaskSetConfig:
    """Which tasks to run."""

    name: str = "seed10"
    importer: str = "yaml"  # yaml | humaneval | humanevalplus | humanevalplus_mini | mbppplus | mbpp
    path: str = "tasks/seed10"  # a YAML directory or a dataset file ("" = found/fetched: runner.tasks.datasets)
    gate: str = ""  # gate profile this set needs (imported benchmarks: stdlib); "" = config's gate
    gate_mode: str = "enforce"  # the gate mode this set is scored in (imported benchmarks: report)
    ids: list[str] = field(default_factory=list)  # task ids; empty = all
    limit: int = 0  # 0 = all
    created_after: str = ""  # ISO date: keep only tasks created after it (contamination guard)


@dataclass
class TrackingConfig:
    """MLflow tracking."""

    enabled: bool = True
    uri: str = "sqlite:///mlruns/mlflow.db"
    experiment: str = "runner"
    artifact_root: str = "mlruns/artifacts"
    traces: bool = True  # every attempt as an MLflow trace in the job's run (runner.traces); false: none


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
    repo_system: str = ""  # repo tasks (runner.generation.repo_prompts); "" = the defaults there
    repo_task: str = ""
    repo_repair: str = ""


@dataclass
class SandboxConfig:
    """Limits for every candidate's test run; the one place their defaults live.

    `runner.sandbox.limits.Limits` takes its defaults from here; see its docstring for what each means.
    """

    workers: int = 2
    timeout_s: float = 10.0
    cpu_s: float = 10.0
    memory_mb: int = 512  # above the child's own baseline
    max_file_mb: int = 16
    max_open_files: int = 64
    max_output_kb: int = 64
    max_processes: int = 16
    network: bool = False
    drop_privileges: bool = True
    hypothesis_examples: int = 100  # examples per property test (derandomized profile)


@dataclass
class GoldConfig:
    """Gold check: every reference must pass its own suites before any model is judged."""

    enabled: bool = True
    on_failure: str = "exclude"  # exclude | abort


REPO_ANSWERS = ("diff", "files")
"""How a model answers a repo task: a unified diff (applied with `git apply`) or whole-file replacements."""


@dataclass
class RepoConfig:
    """Repository-level tasks: the answer format and where their environments come from."""

    answer: str = "diff"  # diff | files (REPO_ANSWERS)
    python: str = ""  # environments' interpreter ("": the harness's or /usr/bin/python3.X, one the sandbox can run)
    env_dir: str = ""  # where the environments are kept ("" = <cache_dir>/repo_envs); must be readable by every user
    timeout_s: float = 60.0  # wall limit of one test run of a repo task (a task's test_timeout_s overrides it)


@dataclass
class EfficiencyConfig:
    """Efficiency scoring: each passing candidate's cost against its task's reference (runner.efficiency)."""

    enabled: bool = False  # measure every passing final answer after judging (efficiency=on; on for seed10)
    budget: float = 50.0  # a candidate over budget x the reference's instructions is stopped: too_slow
    slow_ratio: float = 10.0  # a "slow pass" costs more than this many times the reference
    lean_ratio: float = 1.0  # a "lean pass" costs at most this many times the reference
    inputs_per_task: int = 3  # perf inputs selected from a benchmark's plus inputs
    memory_floor_kb: int = 64  # both sides' peak memory floored at this, so a ratio is never 0 or infinite


@dataclass
class ScoringConfig:
    """pass@k and confidence intervals."""

    k: list[int] = field(default_factory=lambda: [1])
    ci_level: float = 0.95
    bootstrap_resamples: int = 2000
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
    efficiency: EfficiencyConfig = field(default_factory=EfficiencyConfig)
    seed: int = 42
    cache_dir: str = ".cache/runner"
    progress: bool = True


def register_configs() -> None:
    """Register the top-level schema (`conf/config.yaml` names it first in its defaults) and the resolvers."""
    from hydra.core.config_store import ConfigStore

    from runner.resolvers import register_resolvers

    register_resolvers()
    ConfigStore.instance().store(name="schema", node=Config)
