"""MLflow: a run per job under a sweep's parent run, the local store, traces and what the UI shows of a run."""
