"""``roofguard token create`` refuses a name or repository past its column, on both stores.

PostgreSQL answered ``unexpected DataError: ... value too long for type character
varying(200)``; SQLite stored the value.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from both_backends import both_backends_engine

from service.cli import run
from service.store.coretables import API_TOKENS

__all__ = ["both_backends_engine"]


@pytest.mark.parametrize(
    ("option", "argv", "length"),
    [
        ("--name", ["--repo", "acme/kernels", "--name", "x" * 201], 201),
        ("--repo", ["--repo", "a/" + "b" * 250], 252),
    ],
    ids=["name", "repo"],
)
def test_a_value_past_its_column_is_refused_naming_the_option(
    engine: sa.Engine, capsys: pytest.CaptureFixture[str], option: str, argv: list[str], length: int
) -> None:
    url = engine.url.render_as_string(hide_password=False)
    assert run(["token", "create", *argv, "--db", url]) == 2
    err = capsys.readouterr().err
    assert f"{option}: {length} characters, at most 200" in err
    assert "unexpected" not in err
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(API_TOKENS)).scalar_one() == 0


def test_a_value_at_its_column_width_is_stored(engine: sa.Engine) -> None:
    url = engine.url.render_as_string(hide_password=False)
    repo = "a/" + "b" * 198
    assert run(["token", "create", "--repo", repo, "--name", "x" * 200, "--db", url]) == 0
    with engine.connect() as conn:
        assert conn.execute(sa.select(API_TOKENS.c.name)).scalar_one() == "x" * 200


def test_a_repository_at_its_width_gets_a_default_name_that_fits(engine: sa.Engine) -> None:
    """The default name is the repository and the permission: 206 characters for this one."""
    url = engine.url.render_as_string(hide_password=False)
    repo = "a/" + "b" * 198
    assert run(["token", "create", "--repo", repo, "--write", "--db", url]) == 0
    with engine.connect() as conn:
        name = conn.execute(sa.select(API_TOKENS.c.name)).scalar_one()
    assert len(name) == 200 and name.endswith("b write")
