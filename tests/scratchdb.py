"""Scratch PostgreSQL databases for tests: made on demand beside a server URL, then dropped."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa


@contextmanager
def scratch_database(server_url: str, tag: str) -> Iterator[str]:
    """The URL of a new database on ``server_url``'s server, dropped (forced) afterwards.

    The name carries the xdist worker, ``tag`` and a random part: several checkouts may test
    against one server at once, so a fixed name would let one run drop another's database.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    name = f"roofguard_{tag}_{worker}_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        try:
            yield (
                sa.engine.make_url(server_url)
                .set(database=name)
                .render_as_string(hide_password=False)
            )
        finally:
            with admin.connect() as conn:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()
