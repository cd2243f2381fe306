"""Generation backends behind one small async interface (see `base.Backend`)."""

from runner.generation.backends.base import Backend, BackendError, Generation, GenerationOptions
from runner.generation.backends.factory import BACKENDS, make_backend

__all__ = ["BACKENDS", "Backend", "BackendError", "Generation", "GenerationOptions", "make_backend"]
