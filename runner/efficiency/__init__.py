"""Efficiency scoring: how many instructions and how much memory a passing answer costs, against the reference."""
