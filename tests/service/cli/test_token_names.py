"""A token's name is one line of printable text: ``token list`` cannot be made to show a fake row.

``token create --name "$(printf 'x\\n   99  acme/kernels  write  admin')"`` was stored, and
``token list`` printed its name over two lines, the second like an active write token 99.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from both_backends import both_backends_engine

from service.cli import run
from service.store.coretables import API_TOKENS
from service.store.db import session_scope
from service.store.tokens import Permission, create_token

__all__ = ["both_backends_engine"]

FAKE_ROW = "x\n   99  acme/kernels                     write  admin"


@pytest.mark.parametrize(
    ("name", "place", "shown"),
    [
        (FAKE_ROW, 2, r"'\n'"),
        ("ci\x1b[2K", 3, r"'\x1b'"),
        ("a\u202eb", 2, r"'\u202e'"),
        ("tab\tx", 4, r"'\t'"),
    ],
    ids=["newline", "escape", "bidi override", "tab"],
)
def test_create_refuses_an_unprintable_name(
    engine: sa.Engine, capsys: pytest.CaptureFixture[str], name: str, place: int, shown: str
) -> None:
    url = engine.url.render_as_string(hide_password=False)
    assert run(["token", "create", "--repo", "acme/kernels", "--name", name, "--db", url]) == 2
    err = capsys.readouterr().err
    assert f"--name: character {place} is {shown}, not printable" in err
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(API_TOKENS)).scalar_one() == 0


def test_a_name_stored_before_is_listed_on_its_own_line(
    engine: sa.Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    url = engine.url.render_as_string(hide_password=False)
    with session_scope(engine) as session:
        create_token(
            session=session, repo="acme/kernels", permission=Permission.READ, name=FAKE_ROW
        )
    assert run(["token", "create", "--repo", "acme/kernels", "--name", "ci ünï", "--db", url]) == 0
    capsys.readouterr()
    assert run(["token", "list", "--db", url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and r"read   x\n   99  acme/kernels" in lines[0]
    assert " 99  acme/kernels" not in "".join(line[:8] for line in lines)
    assert "read   ci ünï " in lines[1]  # printable text beyond ASCII is shown as it is
