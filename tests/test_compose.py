"""The composed-config cache: the same config as Hydra's, no Hydra on a hit, a changed input composes afresh."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hydra.errors import HydraException
from omegaconf import OmegaConf

from runner import compose
from runner.validation import ConfigError, typed_config

ROOT = Path(__file__).resolve().parents[1]
OVERRIDES = [
    [],
    ["task_set=humaneval"],
    ["model=qwen3_8b", "sampling.temperature=1", "seed=7"],
    ["model.id=qwen3:14b", "gate=off", "sandbox.timeout_s=3"],
]


@pytest.mark.parametrize("overrides", OVERRIDES, ids=lambda o: " ".join(o) or "defaults")
def test_a_cached_config_is_the_one_hydra_composes(overrides, tmp_path):
    fresh = compose.compose_config(overrides, cache=tmp_path)  # a miss: composed by Hydra, then stored
    assert len(list(tmp_path.glob("*.yaml"))) == 1
    cached = compose.compose_config(overrides, cache=tmp_path)
    assert OmegaConf.to_container(cached) == OmegaConf.to_container(fresh)  # unresolved, interpolations as written
    assert OmegaConf.is_struct(cached)
    assert typed_config(cached) == typed_config(fresh)


def test_a_typo_added_with_plus_fails_from_the_cache_too(tmp_path):
    for _ in range(2):  # the miss, then the hit
        with pytest.raises(ConfigError, match="unknown config key sampling.temprature"):
            typed_config(compose.compose_config(["+sampling.temprature=0.5"], cache=tmp_path))


def test_a_failed_composition_is_never_kept(tmp_path):
    for _ in range(2):
        with pytest.raises(HydraException, match="Could not find 'model/gpt9'"):
            compose.compose_config(["model=gpt9"], cache=tmp_path)
    assert not list(tmp_path.iterdir())


def test_a_changed_input_composes_afresh(tmp_path, monkeypatch):
    conf = tmp_path / "conf"
    shutil.copytree(compose.CONF_DIR, conf)
    monkeypatch.setattr(compose, "CONF_DIR", conf)
    cache = tmp_path / "cache"
    before = compose.composition_key(["task_set=humaneval"])
    assert compose.compose_config(["task_set=humaneval"], cache=cache).seed == 42
    config = conf / "config.yaml"
    config.write_text(config.read_text().replace("seed: 42", "seed: 43"))
    assert compose.composition_key(["task_set=humaneval"]) != before
    assert compose.compose_config(["task_set=humaneval"], cache=cache).seed == 43
    assert compose.composition_key(["a=1", "b=2"]) != compose.composition_key(["b=2", "a=1"])  # order counts
    assert compose.composition_key(["a=1,b=2"]) != compose.composition_key(["a=1", "b=2"])


def test_a_tool_started_again_does_not_import_hydra(tmp_path):
    script = (
        "import sys; from runner.compose import compose_config; "
        "cfg = compose_config(['task_set=humaneval']); print('hydra' in sys.modules, cfg.task_set.name)"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=120) for _ in range(2)]  # fmt: skip
    assert [run.stdout.split() for run in runs] == [["True", "humaneval"], ["False", "humaneval"]], runs[0].stderr
