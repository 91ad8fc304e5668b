"""The Core tables (``service.store.coretables``) declare exactly the SQLModel tables.

The store's statements run on the Core declaration and the migrations are checked against
the SQLModel one (``test_the_migrations_build_exactly_the_tables``), so any difference
between the two would be a column the store writes that the database lacks, or a default
one of them forgets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import SQLModel

import service.store.tables  # noqa: F401  (declares the SQLModel tables)
from service.store.coretables import METADATA

DIALECTS = {"sqlite": sqlite.dialect(), "postgresql": postgresql.dialect()}


def _default(column: sa.Column[Any]) -> object:
    """A column's Python-side default: its value, or the name of the function that gives it."""
    default = column.default
    if default is None:
        return None
    if isinstance(default, sa.ColumnDefault) and default.is_scalar:
        return ("value", default.arg)
    return ("call", getattr(default.arg, "__name__", repr(default.arg)))


def _ddl(table: sa.Table, dialect: sa.Dialect) -> tuple[str, list[str]]:
    """CREATE TABLE and the CREATE INDEX statements of ``table``, as ``dialect`` words them."""
    create = str(sa.schema.CreateTable(table).compile(dialect=dialect)).strip()
    indexes = sorted(
        str(sa.schema.CreateIndex(index).compile(dialect=dialect)) for index in table.indexes
    )
    return create, indexes


def test_both_declarations_name_the_same_tables():
    assert sorted(METADATA.tables) == sorted(SQLModel.metadata.tables)
    assert METADATA.naming_convention == SQLModel.metadata.naming_convention


@pytest.mark.parametrize("name", sorted(METADATA.tables))
@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_a_core_table_has_the_ddl_of_its_model(name, dialect):
    core, model = METADATA.tables[name], SQLModel.metadata.tables[name]
    assert _ddl(core, DIALECTS[dialect]) == _ddl(model, DIALECTS[dialect])


@pytest.mark.parametrize("name", sorted(METADATA.tables))
def test_a_core_table_has_the_columns_and_defaults_of_its_model(name):
    core, model = METADATA.tables[name], SQLModel.metadata.tables[name]

    def columns(table: sa.Table) -> list[tuple[object, ...]]:
        return [
            (c.name, repr(c.type), c.nullable, c.primary_key, _default(c), c.server_default)
            for c in table.columns
        ]

    assert columns(core) == columns(model)


def test_the_comparison_sees_a_changed_column():
    """The checks above can fail: a column one declaration types differently is seen."""
    other = sa.MetaData(naming_convention=METADATA.naming_convention)
    for table in METADATA.sorted_tables:  # with the tables its foreign keys name
        table.to_metadata(other)
    changed = other.tables["gate_levels"]
    assert _ddl(changed, DIALECTS["postgresql"]) == _ddl(
        METADATA.tables["gate_levels"], DIALECTS["postgresql"]
    )
    changed.c.points.type = sa.Float()
    model = SQLModel.metadata.tables["gate_levels"]
    assert _ddl(changed, DIALECTS["postgresql"]) != _ddl(model, DIALECTS["postgresql"])


def test_every_table_is_documented() -> None:
    """service/README.md's Tables section has a row for each table a store holds."""
    doc = (Path(__file__).parents[3] / "service" / "README.md").read_text(encoding="utf-8")
    section = doc[doc.index("### Tables") :]
    missing = sorted(name for name in METADATA.tables if f"\n| `{name}` |" not in section)
    assert not missing, f"tables without a row in service/README.md's Tables: {missing}"
