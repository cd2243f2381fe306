import json
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from enum import Enum
from pathlib import PurePosixPath
from uuid import UUID

import pytest
from dirty_equals import IsList, IsPartialDict, IsStr

from recordkit import AuditLog, dumps, to_jsonable
from recordkit.events import Severity

ID_A = UUID("00000000-0000-4000-8000-00000000000a")
ID_B = UUID("00000000-0000-4000-8000-00000000000b")


class Color(Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class LineItem:
    sku: str
    price: Decimal
    color: Color = Color.RED


@dataclass
class Order:
    id: UUID
    placed: date
    items: list[LineItem] = field(default_factory=list)
    labels: frozenset[str] = frozenset()


def test_scalars():
    assert to_jsonable(Color.BLUE) == "blue"
    assert to_jsonable(datetime(2024, 1, 2, 3, 4, tzinfo=UTC)) == "2024-01-02T03:04:00+00:00"
    assert to_jsonable(date(2024, 1, 2)) == "2024-01-02"
    assert to_jsonable(Decimal("1.10")) == "1.10"
    assert to_jsonable(ID_A) == str(ID_A)
    assert to_jsonable(PurePosixPath("/tmp/x")) == "/tmp/x"
    assert to_jsonable([1, "a", None, True]) == [1, "a", None, True]


def test_flat_dataclass():
    assert to_jsonable(LineItem("A-1", Decimal("9.99"))) == {
        "sku": "A-1",
        "price": "9.99",
        "color": "red",
    }


def test_flat_containers():
    assert to_jsonable((ID_B, ID_A)) == [str(ID_B), str(ID_A)]
    assert to_jsonable({ID_B, ID_A}) == [str(ID_A), str(ID_B)]
    assert to_jsonable({"when": date(2024, 5, 1)}) == {"when": "2024-05-01"}


def test_unsupported_type():
    with pytest.raises(TypeError, match="complex"):
        to_jsonable(1j)


def test_dataclasses_inside_lists():
    order = Order(
        ID_A,
        date(2024, 5, 1),
        [LineItem("A-1", Decimal("2.50")), LineItem("B-2", Decimal("1"), Color.BLUE)],
    )
    assert to_jsonable(order) == {
        "id": str(ID_A),
        "placed": "2024-05-01",
        "items": [
            {"sku": "A-1", "price": "2.50", "color": "red"},
            {"sku": "B-2", "price": "1", "color": "blue"},
        ],
        "labels": [],
    }
    json.dumps(to_jsonable(order))


def test_nested_containers_at_any_depth():
    data = {"batches": [(date(2024, 1, 1), {ID_A}), [{"deep": [Decimal("0.5"), (Color.RED,)]}]]}
    assert to_jsonable(data) == {
        "batches": [["2024-01-01", [str(ID_A)]], [{"deep": ["0.5", ["red"]]}]],
    }


def test_sets_of_enums_and_dataclass_payloads():
    assert to_jsonable({Color.RED, Color.BLUE}) == ["blue", "red"]
    assert to_jsonable(frozenset({ID_B, ID_A})) == [str(ID_A), str(ID_B)]
    order = Order(ID_B, date(2024, 5, 1), labels=frozenset({"gift", "express"}))
    assert to_jsonable(order)["labels"] == ["express", "gift"]


def test_dict_keys_are_converted_like_values():
    assert to_jsonable({Color.RED: 1, ID_A: 2, date(2024, 1, 2): 3, 7: 4, "s": 5}) == {
        "red": 1,
        str(ID_A): 2,
        "2024-01-02": 3,
        "7": 4,
        "s": 5,
    }
    with pytest.raises(TypeError):
        to_jsonable({(1, 2): "tuple keys have no JSON form"})


def test_audit_log_with_nested_payload_exports_valid_json():
    log = AuditLog()
    order = Order(ID_A, date(2024, 5, 1), [LineItem("A-1", Decimal("2.50"))])
    log.record("order.placed", order=order, history=[{"at": datetime(2024, 5, 1, tzinfo=UTC)}])
    log.record("order.flagged", severity=Severity.ERROR, reasons={Color.RED: ["price", "stock"]})
    data = json.loads(log.export_json())
    assert data == IsList(
        IsPartialDict(
            kind="order.placed",
            payload={
                "order": IsPartialDict(items=[IsPartialDict(sku="A-1", price="2.50")]),
                "history": [{"at": IsStr(regex=r"2024-05-01T00:00:00\+00:00")}],
            },
        ),
        IsPartialDict(
            kind="order.flagged", severity="error", payload={"reasons": {"red": ["price", "stock"]}}
        ),
    )
    assert dumps(order, sort_keys=True).startswith('{"id": "00000000-0000-4000-8000-00000000000a"')
