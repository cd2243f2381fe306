"""versionkit: Semantic Versioning 2.0.0 versions, their order, and version ranges."""

from versionkit.spec import Spec, max_satisfying
from versionkit.version import Version

__all__ = ["Spec", "Version", "max_satisfying"]
