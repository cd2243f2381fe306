"""`python -m runner.audit task_set=... [out=FILE] [threshold=0.9] [workers=2] [timeout_s=5]`.

The mutation audit of a task set's suites; see runner.strength.audit.
"""

from runner.cli import run
from runner.strength.audit import main

if __name__ == "__main__":
    run(main)
