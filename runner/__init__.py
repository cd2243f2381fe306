"""LLM code-evaluation experiment runner."""

__version__ = "0.1.0"
