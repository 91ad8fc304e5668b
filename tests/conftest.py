"""Shared test fixtures: the corpus, PostgreSQL, golden files."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The real-report corpus (real profiler and benchmark outputs, not part of the repository):
#: a folder beside the checkout, or wherever ROOFGUARD_CORPUS points.
CORPUS = Path(os.environ.get("ROOFGUARD_CORPUS", REPO_ROOT.parent / "shared" / "corpus"))
POSTGRES_ENV = "ROOFGUARD_TEST_POSTGRES_URL"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", help="rewrite golden files")


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


@pytest.fixture
def golden(update_goldens: bool):
    """Compare text with a golden file (rewritten with --update-goldens); names the file."""

    def check(path: Path, actual: str) -> None:
        if update_goldens or not path.exists():
            if not update_goldens and os.environ.get("CI"):
                pytest.fail(f"golden file {path} is missing; run pytest --update-goldens")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual, encoding="utf-8")
            return
        expected = path.read_text(encoding="utf-8")
        assert actual == expected, f"output differs from golden file {path} (--update-goldens)"

    return check


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The real-report corpus; tests skip when it is absent (.ci/run makes it mandatory)."""
    if not CORPUS.is_dir():
        if os.environ.get("ROOFGUARD_REQUIRE_CORPUS"):
            pytest.fail(f"corpus required but missing at {CORPUS}")
        pytest.skip(f"corpus not found at {CORPUS} (set ROOFGUARD_CORPUS)")
    return CORPUS


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this test session, dropped afterwards.

    Skips with a reason when ROOFGUARD_TEST_POSTGRES_URL is unset; .ci/run always sets it.
    """
    base = os.environ.get(POSTGRES_ENV)
    if not base:
        pytest.skip(
            f"PostgreSQL tests need {POSTGRES_ENV} (e.g. postgresql+psycopg://127.0.0.1/test)"
        )
    import sqlalchemy as sa

    name = f"roofguard_test_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.engine.make_url(base).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
