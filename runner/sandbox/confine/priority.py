"""The CPU priority of the sandbox's processes (its own module: the pool's warm-up process is started with it
before any of the sandbox's heavier modules are imported)."""

SANDBOX_NICE = 10
"""The nice level of the pool's processes and the sandboxed children: generation comes first."""
