"""Shared fixtures: composing the real Hydra config tree."""

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from runner.config import register_configs

CONF_DIR = str(Path(__file__).resolve().parents[1] / "conf")


def compose_config(overrides: list[str] | None = None):
    """The project's config, composed as `python -m runner` would with these overrides."""
    register_configs()
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        return compose(config_name="config", overrides=overrides or [])


def typed_test_config(overrides: list[str] | None = None):
    """The composed config as `runner.config.Config`, as every entry point hands it on."""
    from runner.validation import typed_config

    return typed_config(compose_config(overrides))


@pytest.fixture
def make_config():
    return compose_config
