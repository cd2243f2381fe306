"""A sweep's comparisons on its MLflow parent run: per comparison a verdict tag and its figures as metrics.

tag    runner.verdict.<job_a> vs <job_b>.<stage>   the report's sentence (runner.results.comparison_text)
metric compare/<job_a> vs <job_b>/<stage>/<name>   diff, se_diff, se_single, se_data, se_prediction, mde, p
tag    runner.seed_warnings                        how many pairs of seeds of one model differ detectably
"""

from __future__ import annotations

import re
import time
from typing import Any

from runner.results.comparison_text import comparison_sentence, seed_warnings

NUMBERS = ("diff", "se_diff", "se_single", "se_data", "se_prediction", "mde", "p")
MAX_TAG = 5000


def _key(text: str) -> str:
    """`text` with the characters MLflow refuses in a key replaced by `_`."""
    return re.sub(r"[^\w\-. /:]", "_", text)


def log_verdicts(client: Any, run_id: str, comparisons: list[dict]) -> int:
    """Log every comparison that was made (runner.results.compare.compare_jobs) on run `run_id`; return how many."""
    from mlflow.entities import Metric, RunTag

    now = int(time.time() * 1000)
    tags, metrics = [], []
    made = [r for r in comparisons if "refused" not in r and r.get("tasks")]
    for r in made:
        name = _key(f"{r['job_a']} vs {r['job_b']}")
        tags.append(RunTag(f"runner.verdict.{name}.{r['stage']}", comparison_sentence(r)[2:][:MAX_TAG]))
        metrics += [
            Metric(f"compare/{name}/{r['stage']}/{k}", float(r[k]), now, 0) for k in NUMBERS if r.get(k) is not None
        ]
    tags.append(RunTag("runner.seed_warnings", str(len(seed_warnings(comparisons)))))
    for i in range(0, max(len(tags), len(metrics)), 100):
        client.log_batch(run_id, metrics=metrics[i : i + 100], tags=tags[i : i + 100])
    return len(made)
