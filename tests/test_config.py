"""The config tree: defaults, typed schemas, the published models, the sweep expansion."""

import subprocess
import sys
from pathlib import Path

import pytest
from hydra.errors import ConfigCompositionException, HydraException
from omegaconf import OmegaConf
from omegaconf.errors import ConfigKeyError, ValidationError

from runner.config import BackendName, Config, GateConfig
from runner.generation.backends import BACKENDS
from runner.override_errors import message as one_line_message
from runner.validation import ConfigError, _schema_fields, rule_text, typed_config
from tests.conftest import compose_config

ROOT = Path(__file__).resolve().parents[1]


def test_default_is_the_embedded_model_on_seed10():
    cfg = compose_config()
    assert cfg.backend.name == "llamacpp" and cfg.model.id == "smollm2-135m"
    assert cfg.task_set.name == "seed10" and cfg.gate.name == "builtins_only"
    assert cfg.repair.max_repairs == 1 and cfg.seed == 42


@pytest.mark.parametrize(
    ("name", "tag"),
    [("gemma3_4b", "gemma3:4b-it-q4_K_M"), ("qwen3_8b", "qwen3:8b"), ("gemma3_12b", "gemma3:12b")],
)
def test_published_models_use_ollama_with_the_published_conditions(name, tag):
    cfg = compose_config([f"model={name}"])
    assert cfg.backend.name == "ollama" and cfg.model.id == tag
    assert cfg.model.think is False and cfg.model.num_ctx == 4096
    assert cfg.sampling.temperature == 0 and cfg.sampling.num_predict == 512 and cfg.seed == 42
    assert cfg.repair.max_repairs == 1 and cfg.sandbox.timeout_s == 10


def test_model_name_follows_model_id_unless_set():
    assert compose_config([]).model.name == "smollm2_135m"
    assert compose_config(["backend=openai", "model.id=Qwen/Qwen2.5-Coder-7B"]).model.name == "Qwen2.5_Coder_7B"
    assert compose_config(["model.id=/models/tiny-coder.Q4_K_M.gguf"]).model.name == "tiny_coder.Q4_K_M"
    assert compose_config(["model=qwen3_8b", "model.id=qwen3:14b"]).model.name == "qwen3_14b"
    assert compose_config(["model.id=qwen3:14b", "model.name=mine"]).model.name == "mine"


def test_command_line_backend_beats_the_model_default():
    assert compose_config(["model=qwen3_8b", "backend=openai"]).backend.name == "openai"


def test_imported_benchmark_takes_the_stdlib_gate():
    assert compose_config(["task_set=humaneval"]).gate.name == "stdlib"


def test_misspelled_key_is_rejected_with_the_key_named():
    with pytest.raises(ConfigCompositionException) as info:
        compose_config(["sampling.temperatur=1"])
    assert "temperatur" in str(info.value.__cause__ or info.value)


def test_wrong_type_is_rejected_with_the_key_named():
    with pytest.raises((ConfigCompositionException, ValidationError)) as info:
        compose_config(["sampling.temperature=hot"])
    text = str(info.value) + str(info.value.__cause__)
    assert "sampling.temperature" in text


def test_unknown_group_option_lists_the_choices():
    with pytest.raises((ConfigCompositionException, ConfigKeyError)) as info:
        compose_config(["model=gpt9"])
    assert "gemma3_4b" in str(info.value)


def _runner(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "runner", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_cli_prints_resolved_config_and_rejects_typos():
    shown = _runner("--cfg", "job")
    assert shown.returncode == 0 and "smollm2-135m" in shown.stdout
    bad = _runner("--cfg", "job", "sampling.temperature=hot")
    assert bad.returncode != 0 and "sampling.temperature" in bad.stderr


def test_sweep_expands_to_four_jobs_that_fail_cleanly_without_ollama(tmp_path):
    sweep = tmp_path / "sweep"
    out = _runner(
        "-m", "model=gemma3_4b,qwen3_8b", "seed=1,2", "backend.base_url=http://127.0.0.1:9",
        "backend.max_retries=0", "tracking=off", f"hydra.sweep.dir={sweep}", f"cache_dir={tmp_path / 'cache'}",
    )  # fmt: skip
    jobs = sorted(p.name for p in sweep.iterdir() if p.is_dir())
    assert jobs == ["0_gemma3_4b_it_q4_K_M_s1", "1_gemma3_4b_it_q4_K_M_s2", "2_qwen3_8b_s1", "3_qwen3_8b_s2"]
    assert out.returncode != 0
    # each job logs why it failed and what to do; Hydra then re-raises the first failure
    assert (out.stdout + out.stderr).count("ollama serve") >= 4, out.stdout[-2000:]


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("repair.max_repairs=-1", "repair.max_repairs=-1 is not allowed; it must be >= 0"),
        ("sampling.n=0", "sampling.n=0 is not allowed; it must be >= 1"),
        ("sampling.temperature=-1", "sampling.temperature=-1.0 is not allowed; it must be >= 0"),
        ("sampling.top_p=0", "sampling.top_p=0.0 is not allowed; it must be in (0, 1]"),
        ("sandbox.memory_mb=-5", "sandbox.memory_mb=-5 is not allowed; it must be > 0"),
        ("sandbox.workers=0", "sandbox.workers=0 is not allowed; it must be >= 1"),
        ("backend.max_concurrency=0", "backend.max_concurrency=0 is not allowed; it must be >= 1"),
        ("backend.name=nope", "backend.name='nope' is not allowed; it must be one of llamacpp, ollama, openai, replay"),
        ("gold.on_failure=whatever", "gold.on_failure='whatever' is not allowed; it must be one of exclude, abort"),
        ("scoring.ci_level=7", "scoring.ci_level=7.0 is not allowed; it must be in (0, 1), e.g. 0.95"),
        ("scoring.k=[0]", "scoring.k=[0] is not allowed; it must be a non-empty list of counts >= 1"),
        ("task_set.created_after=soon", "task_set.created_after='soon' is not allowed; it must be an ISO date"),
        ("+gate.allowed_imports=[os.path,'1x']", "gate.allowed_imports=['os.path', '1x'] is not allowed"),
        ("+sampling.temprature=0.5", "unknown config key sampling.temprature; the keys there are: temperature, top_p"),
        ("+colour=red", "unknown config key colour; the keys there are: backend, model, sampling"),
    ],
)
def test_nonsense_values_and_appended_keys_fail_in_one_line(override, message):
    # A choice outside an enum field's fails as Hydra composes; a range as the config is typed: one line either way.
    with pytest.raises((ConfigError, HydraException)) as info:
        typed_config(compose_config([override]))
    assert message in one_line_message(info.value) and "\n" not in one_line_message(info.value)


@pytest.mark.parametrize(
    ("key", "value", "allowed"),
    [("gate.mode", "warn", "enforce, report"), ("task_set.importer", "csv", "yaml, humaneval"),
     ("repo.answer", "patch", "diff, files"), ("gold.on_failure", "skip", "exclude, abort")],
)  # fmt: skip
def test_a_choice_read_from_a_composed_file_fails_like_an_override(key, value, allowed):
    composed = OmegaConf.create(OmegaConf.to_container(compose_config([])))  # untyped, as cached
    OmegaConf.update(composed, key, value)
    with pytest.raises(ConfigError, match=rf"^{key}='{value}' is not allowed; it must be one of {allowed}"):
        typed_config(composed)


def test_every_ruled_field_and_every_choice_has_its_rule_text():
    fields = [key for key, _, _ in _schema_fields()]
    assert rule_text("sampling.top_p") == "in (0, 1]" and rule_text("gate.mode") == "one of enforce, report"
    assert rule_text("sampling.stop") is None and {"backend.timeout_s", "seed", "repo.answer"} <= set(fields)
    assert set(BACKENDS) == set(BackendName)  # every choice of backend.name has its builder


def test_typed_config_gives_the_dataclasses():
    cfg = typed_config(compose_config(["task_set=humaneval"]))
    assert isinstance(cfg, Config) and isinstance(cfg.gate, GateConfig) and cfg.gate.name == "stdlib"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("+sampling.temprature=0.5", "unknown config key sampling.temprature"),
        ("scoring.ci_level=7", "scoring.ci_level=7.0 is not allowed"),
    ],
)
def test_cli_rejects_bad_config_before_any_work(tmp_path, override, message):
    # An unreachable server and no tracking: were the config accepted, the job would fail differently.
    out = _runner(override, "backend=openai", "backend.base_url=http://127.0.0.1:9/v1", "backend.max_retries=0",
                  "tracking=off", f"hydra.run.dir={tmp_path}/job", f"cache_dir={tmp_path}/cache")  # fmt: skip
    text = out.stdout + out.stderr  # Hydra's logging goes to stdout
    assert out.returncode == 1
    assert message in text and "Traceback" not in text, text[-2000:]
    assert not (tmp_path / "job" / "config.yaml").exists()


@pytest.mark.parametrize("tool", ["runner.gold", "runner.evaluate"])
def test_tools_reject_bad_config_in_one_line(tmp_path, tool):
    extra = [f"samples={tmp_path}/s.jsonl", f"out={tmp_path}/o.jsonl"] if tool == "runner.evaluate" else []
    out = subprocess.run([sys.executable, "-m", tool, *extra, "sandbox.workers=0"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert out.returncode == 1
    assert out.stderr.strip() == "error: sandbox.workers=0 is not allowed; it must be >= 1"


@pytest.mark.parametrize(
    ("overrides", "repairs"), [(["repair.max_attempts=3"], 3), (["repair=none", "repair.max_attempts=2"], 2)]
)
def test_the_old_name_max_attempts_is_read_as_max_repairs_with_a_note(overrides, repairs, capsys):
    cfg = typed_config(compose_config(overrides))
    assert cfg.repair.max_repairs == repairs and cfg.repair.max_attempts is None
    note = capsys.readouterr().err.strip()
    assert note.count("\n") == 0 and "repair.max_attempts is now repair.max_repairs" in note, note


def test_the_new_name_alone_gives_no_note(capsys):
    assert typed_config(compose_config(["repair.max_repairs=0"])).repair.max_repairs == 0
    assert "max_attempts" not in capsys.readouterr().err
