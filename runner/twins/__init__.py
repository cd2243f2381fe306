"""Twins: perturbed copies of each function task, made at run time, whose score drop tells skill from memory.

Families: rename (runner.twins.rename), examples (runner.twins.examples), format (runner.twins.layout) and
transform (runner.twins.transform); runner.twins.make makes a set's twins, `python -m runner.twins` writes them
as EvalPlus-style JSONL.
"""
