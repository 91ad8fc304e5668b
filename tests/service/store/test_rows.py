"""Each typed row of ``service.store.rows`` names exactly what its table can take."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlmodel import SQLModel

from service.store import rows
from service.store.tables import (
    ApiToken,
    BaselineAcceptance,
    Device,
    FindingRow,
    Kernel,
    Measurement,
    Repository,
    Run,
    table_of,
)

CASES: list[tuple[type, type[SQLModel]]] = [
    (rows.RunValues, Run),
    (rows.MeasurementValues, Measurement),
    (rows.FindingValues, FindingRow),
    (rows.AcceptanceValues, BaselineAcceptance),
    (rows.NamedValues, Repository),
    (rows.NamedValues, Device),
    (rows.KernelValues, Kernel),
    (rows.TokenValues, ApiToken),
]


def _needed(table: sa.Table) -> set[str]:
    """Columns an insert must give: not null, no default, not the autoincrement key."""
    return {
        c.name
        for c in table.columns
        if not c.nullable and c.default is None and c.server_default is None and not c.primary_key
    }


@pytest.mark.parametrize(("values", "model"), CASES, ids=lambda x: getattr(x, "__name__", x))
def test_row_keys_are_columns_and_cover_the_required_ones(values: type, model: type[SQLModel]):
    table = table_of(model)
    keys = set(values.__annotations__)
    assert keys <= set(table.columns.keys()), keys - set(table.columns.keys())
    assert _needed(table) <= set(values.__required_keys__)  # type: ignore[attr-defined]


def test_every_store_row_is_checked():
    typed = {
        name for name, obj in vars(rows).items() if name.endswith("Values") and name != "RoofValues"
    }
    assert typed == {values.__name__ for values, _ in CASES}


def test_table_of_refuses_a_model_without_a_table():
    class NotATable(SQLModel):
        name: str

    with pytest.raises(TypeError, match="NotATable is not a table model"):
        table_of(NotATable)
