"""The config tree: defaults, typed schemas, the published models, the sweep expansion."""

import subprocess
import sys
from pathlib import Path

import pytest
from hydra.errors import ConfigCompositionException
from omegaconf.errors import ConfigKeyError, ValidationError

from tests.conftest import compose_config

ROOT = Path(__file__).resolve().parents[1]


def test_default_is_the_embedded_model_on_seed10():
    cfg = compose_config()
    assert cfg.backend.name == "llamacpp" and cfg.model.id == "smollm2-135m"
    assert cfg.task_set.name == "seed10" and cfg.gate.name == "builtins_only"
    assert cfg.repair.max_attempts == 1 and cfg.seed == 42


@pytest.mark.parametrize(
    ("name", "tag"),
    [("gemma3_4b", "gemma3:4b-it-q4_K_M"), ("qwen3_8b", "qwen3:8b"), ("gemma3_12b", "gemma3:12b")],
)
def test_published_models_use_ollama_with_the_published_conditions(name, tag):
    cfg = compose_config([f"model={name}"])
    assert cfg.backend.name == "ollama" and cfg.model.id == tag
    assert cfg.model.think is False and cfg.model.num_ctx == 4096
    assert cfg.sampling.temperature == 0 and cfg.sampling.num_predict == 512 and cfg.seed == 42
    assert cfg.repair.max_attempts == 1 and cfg.sandbox.timeout_s == 10


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
