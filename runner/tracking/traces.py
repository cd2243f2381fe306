"""Every attempt of a job as an MLflow trace, linked to the job's run (MLflow 3 tracing).

Built from the job's attempt records (runner.records) once the job has them all: one trace per attempt,
tagged `task_id`, `sample`, `attempt`, `outcome`, `final` and `model`, with the spans

- `generation` (CHAT_MODEL): the messages sent, the response, its tokens and seconds, the server that answered;
- `extraction` (PARSER): the whole answer, the code judged and the extraction's notes (what it changed);
- `gate` (GUARDRAIL): the rule that rejected the code, or the violations it only reported;
- `tests` (EVALUATOR) with a span per suite: its tests' names, status and message (hidden suites included:
  traces are for the researcher; the prompts, shown in `generation`, never contain them).

The outcome is the trace's `outcome` assessment (`mlflow.log_feedback`, source CODE `runner.judge`, the
verdict's detail as rationale). Records carry durations, not clock times: a span lasts as long as the record
says (generation_s; the suites share test_s, as the sandbox times them together), and a sample's attempts are
laid end to end from the run's start. The traces are written in bulk (all spans in a few `log_spans` calls, a
`start_trace` per trace), as MLflow's own exporter writes them but without its per-span round trips, which cost
~0.1 s a trace. With `tracking.traces=false` a job logs none.
"""

from __future__ import annotations

import base64
import json
import secrets
import uuid
from collections.abc import Iterable
from typing import Any

from runner.generation.prompts import answer_text
from runner.outcome import Outcome
from runner.records import AttemptRecord
from runner.tracking.local_store import retry_locked

SOURCE_ID = "runner.judge"
"""The assessments' source: the harness's own verdict (source type CODE)."""
ERROR_OUTCOMES = (Outcome.BACKEND_ERROR, Outcome.HARNESS_ERROR)
"""Outcomes that are failures of the system rather than of the model: their traces have status ERROR."""
SPAN_BATCH = 500
PREVIEW = 1000  # characters of the request / response previews the Traces tab lists


def trace_tags(record: AttemptRecord) -> dict[str, str]:
    """The tags a record's trace is filtered by in the Traces tab (`tags.outcome = 'failed'`, ...)."""
    return {
        "task_id": record.task_id,
        "sample": str(record.sample),
        "attempt": str(record.attempt),
        "outcome": record.outcome.value,
        "final": str(record.final).lower(),
        "model": record.model,
    }


def log_traces(uri: str, experiment_id: str, run_id: str, records: Iterable[AttemptRecord], start_ms: int) -> list[str]:
    """Log one trace per record in the run `run_id`, each with its `outcome` assessment; their trace ids.

    `start_ms` is where the first attempt of every sample starts (the run's start time, ms since the epoch).
    """
    import mlflow
    from mlflow.entities import AssessmentSource
    from mlflow.tracing.client import TracingClient

    client = TracingClient(uri)
    records = sorted(records, key=lambda r: (r.task_id, r.sample, r.attempt))
    clock: dict[tuple[str, int], int] = {}  # where each sample's next attempt starts, ns
    built = []
    for record in records:
        key = (record.task_id, record.sample)
        start = clock.get(key, start_ms * 1_000_000)
        built.append(_build(record, experiment_id, run_id, start))
        clock[key] = start + _ns(record.generation_s) + _ns(record.test_s)
    for info, _ in built:  # before the spans: a new trace is one insert, an existing one a merge per tag
        retry_locked(client.start_trace, info)
    spans = [span for _, trace_spans in built for span in trace_spans]
    for i in range(0, len(spans), SPAN_BATCH):
        retry_locked(client.log_spans, experiment_id, spans[i : i + SPAN_BATCH])
    source = AssessmentSource(source_type="CODE", source_id=SOURCE_ID)
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)  # log_feedback writes to the global tracking URI
    try:
        for (info, _), record in zip(built, records, strict=True):
            retry_locked(mlflow.log_feedback, trace_id=info.trace_id, name="outcome", value=record.outcome.value,
                         source=source, rationale=(record.detail or record.outcome.value)[:2000])  # fmt: skip
    finally:
        mlflow.set_tracking_uri(previous)
    return [info.trace_id for info, _ in built]


def _ns(seconds: float) -> int:
    return int(round(max(seconds, 0.0) * 1e9))


def _b64(value: int, size: int) -> str:
    return base64.b64encode(value.to_bytes(size, "big")).decode()


def _build(record: AttemptRecord, experiment_id: str, run_id: str, start: int) -> tuple[Any, list[Any]]:
    """The trace of one record: its TraceInfo and its spans (MLflow entities, not yet written)."""
    from mlflow.entities import Span, TraceInfo, TraceLocation, TraceState

    hex_id = uuid.uuid4().hex
    trace_id, otel_trace = f"tr-{hex_id}", int(hex_id, 16)
    generated = start + _ns(record.generation_s)
    end = generated + _ns(record.test_s)
    spans: list[Any] = []

    def span(name, kind, inputs, outputs, attributes, begin, finish, parent=None, error=False) -> int:  # noqa: ANN001
        span_id = secrets.randbits(63) + 1
        attrs = {"mlflow.traceRequestId": trace_id, "mlflow.spanType": kind, "mlflow.spanInputs": inputs,
                 "mlflow.spanOutputs": outputs, **attributes}  # fmt: skip
        spans.append(Span.from_dict({
            "trace_id": _b64(otel_trace, 16), "span_id": _b64(span_id, 8),
            "parent_span_id": _b64(parent, 8) if parent else "", "name": name,
            "start_time_unix_nano": begin, "end_time_unix_nano": finish, "events": [],
            "status": {"code": "STATUS_CODE_ERROR" if error else "STATUS_CODE_OK", "message": ""},
            "attributes": {k: json.dumps(v, default=str, ensure_ascii=False) for k, v in attrs.items()},
        }))  # fmt: skip
        return span_id

    inputs = {
        "task_id": record.task_id,
        "sample": record.sample,
        "attempt": record.attempt,
        "messages": record.messages,
    }
    outputs = {"outcome": record.outcome.value, "final": record.final, "detail": record.detail}
    error = record.outcome in ERROR_OUTCOMES
    root = span(f"{record.task_id} sample {record.sample} attempt {record.attempt}", "CHAIN", inputs, outputs,
                {}, start, end, error=error)  # fmt: skip
    _attempt_spans(span, record, root, start, generated, end)
    usage = {"input_tokens": record.prompt_tokens, "output_tokens": record.completion_tokens,
             "total_tokens": record.prompt_tokens + record.completion_tokens}  # fmt: skip
    info = TraceInfo(
        trace_id=trace_id,
        trace_location=TraceLocation.from_experiment_id(experiment_id),
        request_time=start // 1_000_000,
        execution_duration=(end - start) // 1_000_000,
        state=TraceState.ERROR if error else TraceState.OK,
        request_preview=_request_preview(record),
        response_preview=f"{record.outcome.value}: {record.detail}"[:PREVIEW]
        if record.detail
        else record.outcome.value,
        trace_metadata={
            "mlflow.sourceRun": run_id,
            "mlflow.trace_schema.version": "3",
            "mlflow.trace.tokenUsage": json.dumps(usage),
        },  # fmt: skip
        tags={"mlflow.traceName": f"{record.task_id} s{record.sample} a{record.attempt}", **trace_tags(record)},
    )
    return info, spans


def _request_preview(record: AttemptRecord) -> str:
    """What the Traces tab's Input column shows: the task, sample and attempt, then the last message sent."""
    asked = next((m["content"] for m in reversed(record.messages) if m.get("role") == "user"), "")
    return f"{record.task_id} sample {record.sample} attempt {record.attempt}: {asked}"[:PREVIEW]


def _attempt_spans(span: Any, record: AttemptRecord, root: int, start: int, generated: int, end: int) -> None:
    """The generation, extraction, gate and test spans of one attempt, under `root`."""
    usage = {"input_tokens": record.prompt_tokens, "output_tokens": record.completion_tokens,
             "total_tokens": record.prompt_tokens + record.completion_tokens}  # fmt: skip
    attributes = {
        "mlflow.chat.tokenUsage": usage,  # MLflow's own key: the UI shows it and sums it into the trace's
        "mlflow.llm.model": record.model,
        "runner.server": record.server or "(in-process model)",
        "runner.seconds": record.generation_s,
        "runner.seed": record.seed,
    }
    if record.outcome is Outcome.BACKEND_ERROR:  # no answer: nothing was extracted, gated or tested
        span("generation", "CHAT_MODEL", {"messages": record.messages, "options": record.options},
             {"error": record.detail}, attributes, start, generated, parent=root, error=True)  # fmt: skip
        return
    span("generation", "CHAT_MODEL", {"messages": record.messages, "options": record.options},
         {"response": record.response, "finish_reason": record.finish_reason}, attributes, start, generated,
         parent=root)  # fmt: skip
    span("extraction", "PARSER", {"answer": answer_text(record.messages, record.response)},
         {"code": record.code, "changes": record.extraction, "changed": bool(record.extraction)},
         {"runner.changes": len(record.extraction)}, generated, generated, parent=root)  # fmt: skip
    rejected = {"rule": record.rule, "line": record.line} if record.outcome is Outcome.POLICY_REJECTED else None
    span("gate", "GUARDRAIL", {"code": record.code}, {"rejected": rejected, "violations": record.violations},
         {"runner.violations": len(record.violations)}, generated, generated, parent=root)  # fmt: skip
    tests = span("tests", "EVALUATOR", {"suites": list(record.suites)},
                 {"suites": record.suites, "outcome": record.outcome.value}, {"runner.seconds": record.test_s},
                 generated, end, parent=root, error=record.outcome is Outcome.HARNESS_ERROR)  # fmt: skip
    for suite, passed in record.suites.items():
        results = record.tests.get(suite, [])
        failing = sum(t.get("status") not in ("passed", "skipped") for t in results)
        span(f"suite {suite}", "EVALUATOR", {"suite": suite}, {"passed": passed, "tests": results},
             {"runner.tests": len(results), "runner.failing": failing,
              "runner.seconds": f"{record.test_s} (all suites together)"}, generated, end, parent=tests)  # fmt: skip
