"""Hydra entry point: `python -m runner [overrides]`."""

import hydra
from omegaconf import DictConfig

from runner.config import register_configs

register_configs()


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> None:
    from omegaconf import OmegaConf

    print(OmegaConf.to_yaml(cfg))


if __name__ == "__main__":
    main()
