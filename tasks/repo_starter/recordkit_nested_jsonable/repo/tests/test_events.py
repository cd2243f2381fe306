import json
from datetime import UTC, datetime, timedelta

import pytest
from dirty_equals import IsList, IsNow, IsPartialDict, IsUUID

from recordkit import AuditLog, new_event
from recordkit.events import Severity


def test_event_to_dict():
    event = new_event("user.signup", email="ada@example.com", plan="pro")
    assert event.to_dict() == {
        "kind": "user.signup",
        "payload": {"email": "ada@example.com", "plan": "pro"},
        "severity": "info",
        "tags": [],
        "id": IsUUID(4),
        "created": IsNow(iso_string=True, tz=UTC),
    }


def test_bad_kind():
    with pytest.raises(ValueError, match="dotted name"):
        new_event("user signup")


def test_audit_log_filters():
    log = AuditLog()
    log.record("user.signup", email="a@example.com")
    log.record("user.login", email="a@example.com", tags=["web"])
    log.record("billing.charge", amount_cents=1200, severity=Severity.WARNING)
    assert [e.kind for e in log.of_kind("user")] == ["user.signup", "user.login"]
    assert len(log.since(datetime.now(UTC) - timedelta(minutes=1))) == 3
    assert log.export() == IsList(
        IsPartialDict(kind="user.signup"),
        IsPartialDict(kind="user.login", tags=["web"]),
        IsPartialDict(kind="billing.charge", severity="warning", payload={"amount_cents": 1200}),
    )


def test_export_json_of_flat_payloads_is_valid_json():
    log = AuditLog()
    log.record("user.login", email="a@example.com", at=datetime(2024, 1, 2, tzinfo=UTC))
    data = json.loads(log.export_json())
    assert data == [
        IsPartialDict(payload={"email": "a@example.com", "at": "2024-01-02T00:00:00+00:00"})
    ]
