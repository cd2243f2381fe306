"""The mutation audit measures the suites: weak suites are flagged, strong ones pass the threshold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner import audit as audit_cli
from runner.cli import UsageError, parse_args
from runner.strength import mutants
from runner.strength import mutation_audit as audit
from runner.strength.mutants import SuiteMutation
from runner.strength.mutation_audit import AuditOptions, audit_tasks
from runner.tasks.model import EdgeCase, Task

SIGN = Task(
    id="sign",
    entry_point="sign",
    prompt="Return 1, -1 or 0 by the sign of x.",
    reference="def sign(x):\n    if x > 0:\n        return 1\n    if x < 0:\n        return -1\n    return 0\n",
    suites={
        # visible only checks positive numbers: every mutant of the other branches survives it
        "visible": "def test_positive():\n    assert sign(7) == 1\n",
        "hidden": ("def test_all_branches():\n    assert [sign(x) for x in (-2, -1, 0, 1, 2)] == [-1, -1, 0, 1, 1]\n"),
        "properties": (
            "@given(st.integers(-3, 3))\ndef test_matches_reference(x):\n    assert sign(x) == reference.sign(x)\n"
        ),
    },
    edge_cases=(EdgeCase("zero", "x == 0"), EdgeCase("negative", "x < 0"), EdgeCase("huge", "abs(x) > 10**6")),
)

CLAMP = Task(
    id="clamp",
    entry_point="clamp",
    prompt="Clamp x into [lo, hi].",
    reference=(
        "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x\n"
    ),
    suites={
        "visible": "def test_inside():\n    assert clamp(5, 0, 10) == 5\n",
        "hidden": "def test_inside_too():\n    assert clamp(3, 0, 10) == 3\n",
        "properties": (
            "@given(st.integers(0, 10))\ndef test_returns_int(x):\n    assert isinstance(clamp(x, 0, 10), int)\n"
        ),
    },
)

BROKEN = Task(
    id="broken",
    entry_point="double",
    prompt="Double x.",
    reference="def double(x):\n    return x * 2\n",
    suites={"visible": "def test_wrong():\n    assert double(2) == 5\n"},
)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def audits(cache_dir) -> dict[str, audit.TaskAudit]:
    options = AuditOptions(workers=2, timeout_s=2.0, max_examples=30, cache_dir=cache_dir)
    return {a.task_id: a for a in audit_tasks([SIGN, CLAMP, BROKEN], options)}


def test_weak_task_is_flagged(audits):
    clamp = audits["clamp"]
    assert clamp.weak
    assert clamp.score < 0.9
    assert clamp.survived > 0


def test_strong_task_passes_the_threshold(audits):
    sign = audits["sign"]
    assert not sign.weak
    assert sign.score >= 0.9
    assert sign.killed + sign.timeout + sign.survived == sign.mutants > 0


def test_reference_stays_unmutated_for_differential_properties(audits):
    # The properties suite only compares with `reference`: it can kill mutants only if
    # `reference` is the original while `candidate` is the mutant selected by the trampoline.
    assert audits["sign"].score_by_suite["properties"] >= 0.9


def test_per_suite_scores_show_the_weaker_suite(audits):
    scores = audits["sign"].score_by_suite
    assert set(scores) == {"visible", "hidden", "properties", "all"}
    assert scores["visible"] < scores["hidden"]
    assert scores["all"] >= max(scores["visible"], scores["hidden"], scores["properties"])
    assert audits["sign"].survived_by_suite["visible"]


def test_surviving_mutants_are_reported_as_diffs(audits):
    clamp = audits["clamp"]
    assert len(clamp.surviving) == clamp.survived
    for entry in clamp.surviving:
        assert entry["mutant"].startswith("candidate.x_clamp__mutmut_")
        lines = entry["diff"].splitlines()
        assert lines[0] == "--- candidate.py"
        assert any(line.startswith("-    ") for line in lines)
        assert any(line.startswith("+    ") for line in lines)


def test_reference_failing_its_suite_is_an_error_not_a_score(audits):
    broken = audits["broken"]
    assert broken.error and "broken" in broken.error
    assert broken.score is None


def test_second_run_hits_the_cache_without_mutmut(audits, cache_dir, monkeypatch):
    def no_mutmut(*args, **kwargs):
        raise AssertionError("mutmut ran although the audit was cached")

    monkeypatch.setattr(mutants, "run_suite_mutation", no_mutmut)
    options = AuditOptions(workers=2, timeout_s=2.0, max_examples=30, cache_dir=cache_dir)
    again = audit_tasks([SIGN, CLAMP], options)
    assert all(a.cached for a in again)
    assert [a.score for a in again] == [audits["sign"].score, audits["clamp"].score]
    # the threshold is not part of the cache key: it is reapplied to cached scores
    lenient = audit_tasks([CLAMP], AuditOptions(threshold=0.0, cache_dir=cache_dir, timeout_s=2.0, max_examples=30))
    assert lenient[0].cached and not lenient[0].weak


def test_cache_key_follows_suites_and_budget():
    base = AuditOptions()
    key = audit.audit_key(SIGN, base)
    assert audit.audit_key(Task(**{**SIGN.__dict__, "edge_cases": SIGN.edge_cases[:1]}), base) != key
    harder = Task(**{**SIGN.__dict__, "suites": {**SIGN.suites, "visible": "def test_x():\n    pass\n"}})
    assert audit.audit_key(harder, base) != key
    assert audit.audit_key(SIGN, AuditOptions(max_examples=5)) != key
    assert audit.audit_key(SIGN, AuditOptions(threshold=0.5)) == key


def test_json_report_shape_and_latest_scores(audits, tmp_path):
    ordered = [audits["sign"], audits["clamp"], audits["broken"]]
    report = json.loads(audit.report_json(ordered))
    assert [e["task_id"] for e in report] == ["sign", "clamp", "broken"]
    for entry in report:
        assert {"task_id", "mutants", "killed", "survived", "timeout", "score", "score_by_suite", "weak"} <= set(entry)
        assert set(entry["score_by_suite"]) == {"visible", "hidden", "properties", "all"}
        assert isinstance(entry["surviving"], list)
    audit.write_latest(ordered, "tiny", str(tmp_path))
    scores = audit.latest_audit_scores("tiny", str(tmp_path))
    assert scores == {"sign": audits["sign"].score, "clamp": audits["clamp"].score}
    assert audit.latest_audit_scores("never-audited", str(tmp_path)) == {}


def test_table_lists_every_task(audits):
    table = audit_cli.format_table(list(audits.values()))
    lines = table.splitlines()
    assert lines[0].split() == [
        "task", "mutants", "killed", "survived", "timeout", "score", "visible", "hidden", "properties", "edge", "weak",
    ]  # fmt: skip
    assert any(line.startswith("clamp") and line.rstrip().endswith("WEAK") for line in lines)
    assert any(line.startswith("sign") and line.split()[-1] == "2/3" for line in lines)
    assert any(line.startswith("broken") and line.rstrip().endswith("ERROR") for line in lines)


def _run(suite: str, statuses: dict[str, str]) -> SuiteMutation:
    return SuiteMutation(suite, statuses, diffs={k: f"diff {k}" for k, v in statuses.items() if v == "survived"})


def test_combine_counts_a_mutant_killed_by_any_suite_and_timeouts_as_killed():
    runs = {
        "visible": _run("visible", {"m__mutmut_1": "survived", "m__mutmut_2": "survived", "m__mutmut_3": "killed"}),
        "hidden": _run("hidden", {"m__mutmut_1": "timeout", "m__mutmut_2": "survived", "m__mutmut_3": "survived"}),
    }
    result = audit.combine("t", runs, threshold=0.9)
    assert (result.mutants, result.killed, result.timeout, result.survived) == (3, 1, 1, 1)
    assert result.score == pytest.approx(2 / 3)
    third = pytest.approx(1 / 3)
    assert result.score_by_suite == {"visible": third, "hidden": third, "all": result.score}
    assert result.surviving == [{"mutant": "m__mutmut_2", "diff": "diff m__mutmut_2"}]
    assert result.weak


def test_combine_rejects_runs_over_different_mutants():
    runs = {"visible": _run("visible", {"m__mutmut_1": "killed"}), "hidden": _run("hidden", {})}
    with pytest.raises(mutants.MutationRunError):
        audit.combine("t", runs, threshold=0.9)


def test_arguments_split_into_options_and_config_overrides():
    argv = ["task_set=seed10", "out=/tmp/x.json", "threshold=0.8", "cache=false", "tracking=off"]
    options, overrides = parse_args(argv, audit_cli.OPTIONS, "runner.audit", "")
    assert options == {"out": "/tmp/x.json", "threshold": 0.8, "workers": 2, "timeout_s": 5.0,
                       "max_examples": 100, "cache": False, "mutation": True}  # fmt: skip
    assert overrides == ["task_set=seed10", "tracking=off"]
    with pytest.raises(UsageError, match="threshold"):
        parse_args(["threshold=high"], audit_cli.OPTIONS, "runner.audit", "")


def test_cli_audits_a_yaml_task_set(audits, cache_dir, tmp_path, capsys):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    entry = {k: getattr(SIGN, k) for k in ("id", "entry_point", "prompt", "reference")}
    (tasks / "sign.yaml").write_text(json.dumps({**entry, "suites": dict(SIGN.suites)}))
    out = tmp_path / "report.json"
    code = audit_cli.main(
        [
            f"task_set.path={tasks}",
            "task_set.name=tiny",
            "tracking=off",
            f"cache_dir={Path(cache_dir)}",
            f"out={out}",
            "timeout_s=2.0",
            "max_examples=30",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "sign" in printed and "audit took" in printed
    assert json.loads(out.read_text())[0]["score"] == audits["sign"].score
    assert audit.latest_audit_scores("tiny", cache_dir) == {"sign": audits["sign"].score}


def test_audit_is_logged_as_one_mlflow_run(audits, tmp_path, monkeypatch):
    import mlflow
    from omegaconf import OmegaConf

    monkeypatch.chdir(tmp_path)  # the store and the artifacts land under tmp_path/mlruns
    tracking = OmegaConf.create(
        {"uri": "sqlite:///mlruns/mlflow.db", "experiment": "runner", "artifact_root": "mlruns/artifacts"}
    )
    ordered = [audits["sign"], audits["clamp"]]
    report = tmp_path / "audit.json"
    report.write_text(audit.report_json(ordered))
    run_id = audit_cli.log_to_mlflow(ordered, tracking, "tiny", 0.9, report, seconds=1.5)
    run = mlflow.get_run(run_id)
    assert mlflow.get_experiment(run.info.experiment_id).name == "runner-audit"
    assert run.data.params == {"task_set": "tiny", "threshold": "0.9", "tasks": "2"}
    assert run.data.metrics["score.sign"] == audits["sign"].score
    assert run.data.metrics["score.clamp"] == audits["clamp"].score
    assert run.data.metrics["weak_tasks"] == 1
    assert run.data.metrics["edge_cases_missed.sign"] == 1 and "edge_cases_missed.clamp" not in run.data.metrics
    assert [f.path for f in mlflow.artifacts.list_artifacts(run_id=run_id)] == ["audit.json"]


def test_declared_edge_cases_are_checked_against_the_calls_of_each_suite(audits):
    sign = audits["sign"]
    # visible calls sign(7) only; hidden calls -2..2; the property draws -3..3
    assert sign.edge_cases == {"zero": ["hidden", "properties"], "negative": ["hidden", "properties"], "huge": []}
    assert sign.edge_cases_missed == ["huge"] and sign.edge_case_errors == {}
    assert audit_cli.edge_case_lines([sign]) == ["sign: edge cases not exercised: huge"]
    assert audit_cli.edge_case_lines([audits["clamp"]]) == ["edge cases: none declared (task field `edge_cases`)"]
    assert json.loads(audit.report_json([sign]))[0]["edge_cases_missed"] == ["huge"]


FACTORIAL = Task(
    id="factorial",
    entry_point="factorial",
    prompt="Return n! for n >= 0.",
    reference="def factorial(n):\n    return 1 if n == 0 else n * factorial(n - 1)\n",
    suites={
        "visible": "def test_five():\n    assert factorial(5) == 120\n",
        # the oracle is called with 0, the candidate never is
        "properties": (
            "@given(st.just(0))\ndef test_oracle(n):\n    assert reference.factorial(n) == 1 == factorial(1)\n"
        ),
    },
    edge_cases=(EdgeCase("zero", "n == 0"), EdgeCase("one", "n == 1"), EdgeCase("broken", "n.real.nope")),
)


def test_only_the_tests_own_calls_count_and_a_raising_when_is_an_error(tmp_path):
    # factorial(5) recurses down to factorial(0), and the property asks the oracle for 0: neither
    # is a test calling the candidate with 0, so `zero` is not exercised.
    options = AuditOptions(mutation=False, max_examples=10, cache_dir=str(tmp_path))
    (result,) = audit_tasks([FACTORIAL], options)
    assert result.edge_cases == {"zero": [], "one": ["properties"], "broken": []}
    assert result.edge_cases_missed == ["zero", "broken"]
    assert result.edge_case_errors == {"broken": "visible: AttributeError: 'int' object has no attribute 'nope'"}
    assert result.score is None and not result.weak and result.error is None
    assert not (tmp_path / "audit").exists()  # an edge-case-only audit is never cached


def test_cli_without_mutation_reports_the_edge_cases_only(tmp_path, capsys):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    entry = {k: getattr(SIGN, k) for k in ("id", "entry_point", "prompt", "reference")}
    cases = [{"name": c.name, "when": c.when} for c in SIGN.edge_cases]
    (tasks / "sign.yaml").write_text(json.dumps({**entry, "suites": dict(SIGN.suites), "edge_cases": cases}))
    out = tmp_path / "report.json"
    args = [f"task_set.path={tasks}", "task_set.name=tiny", "tracking=off", f"cache_dir={tmp_path}", f"out={out}"]
    assert audit_cli.main([*args, "mutation=false", "max_examples=10"]) == 0
    printed = capsys.readouterr().out
    assert "sign: edge cases exercised 2/3" in printed
    assert "sign: edge cases not exercised: huge" in printed and "weak tasks" not in printed
    assert json.loads(out.read_text())[0]["edge_cases"]["zero"] == ["hidden", "properties"]
    assert audit.latest_audit_scores("tiny", str(tmp_path)) == {}
    cases.append({"name": "broken", "when": "x.nope"})
    (tasks / "sign.yaml").write_text(json.dumps({**entry, "suites": dict(SIGN.suites), "edge_cases": cases}))
    assert audit_cli.main([*args, "mutation=false", "max_examples=10"]) == 1
    assert "sign: edge case 'broken': its `when` raised visible: AttributeError" in capsys.readouterr().out
