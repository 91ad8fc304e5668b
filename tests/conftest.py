"""Shared test fixtures: the corpus, PostgreSQL, golden files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from scratchdb import scratch_database

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The real-report corpus (real profiler and benchmark outputs, not part of the repository):
#: a folder beside the checkout, or wherever ROOFGUARD_CORPUS points.
CORPUS = Path(os.environ.get("ROOFGUARD_CORPUS", REPO_ROOT.parent / "shared" / "corpus"))
POSTGRES_ENV = "ROOFGUARD_TEST_POSTGRES_URL"


#: Property tests: no per-example deadline anywhere (a loaded runner or a laptop running two
#: workers makes one example slow, which says nothing about the code: the batch replay's
#: first example took 269 ms against Hypothesis's 200 ms beside a benchmark). In CI also no
#: example database written into the checkout by every worker, and the failing example
#: printed so it can be replayed. Example counts stay those of each test's own @settings
#: (Hypothesis's 100 elsewhere): they are sized per test.
settings.register_profile("ci", deadline=None, database=None, print_blob=True)
settings.register_profile("local", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "local")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", help="rewrite golden files")


@pytest.hookimpl(tryfirst=True)  # before xdist turns -n auto into workers
def pytest_cmdline_main(config: pytest.Config) -> None:
    """A benchmark (``--benchmark-only``, tests/bench) times one process alone: no workers."""
    if config.getoption("benchmark_only", False) and config.pluginmanager.has_plugin("xdist"):
        config.option.numprocesses = 0


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that share an expensive fixture go to one xdist worker, so it is built once.

    With ``--dist loadgroup`` (pyproject's addopts) a test runs on whichever worker is free,
    except that tests of one ``xdist_group`` run on the same worker. With pytest 9.2 and
    pytest-xdist 3.8 the marks are set but not honoured (pytest-dev/pytest-xdist#1386), so the
    fixture is built per worker until xdist reads groups from pytest's new node ids.
    """
    if not config.pluginmanager.has_plugin("xdist"):
        return
    for item in items:
        group = shared_fixture_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))


def shared_fixture_group(item: pytest.Item) -> str | None:
    """The group of a test that shares a costly fixture with others, else None.

    A module-scoped fixture groups the tests of its module (built once, not once per
    worker); the Chromium tests go together so that two browsers never compete for the
    cores. Session-scoped fixtures group nothing: each worker builds its own (the Action's
    venv, which its tests install into; a PostgreSQL database) and the tests that use them
    spread over the workers.
    """
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    if "browser" in info.names_closure:
        return "chromium"
    for name in info.names_closure:
        defs = info.name2fixturedefs.get(name)
        if defs and defs[-1].baseid and defs[-1].scope in ("package", "module", "class"):
            return item.nodeid.split("::")[0]
    return None


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
    """A fresh PostgreSQL database for this test process (each xdist worker has its own).

    Skips with a reason when ROOFGUARD_TEST_POSTGRES_URL is unset or the server does not
    answer; ROOFGUARD_REQUIRE_POSTGRES=1 (set by .ci/run) makes an unreachable server fail.
    """
    base = os.environ.get(POSTGRES_ENV)
    if not base:
        pytest.skip(
            f"PostgreSQL tests need {POSTGRES_ENV} (e.g. postgresql+psycopg://127.0.0.1/test)"
        )
    import sqlalchemy as sa

    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        admin.connect().close()
    except sa.exc.OperationalError as exc:
        admin.dispose()
        reason = f"PostgreSQL unreachable at {POSTGRES_ENV}={base}: {exc.orig}"
        if os.environ.get("ROOFGUARD_REQUIRE_POSTGRES"):
            pytest.fail(reason)
        pytest.skip(reason)
    admin.dispose()
    with scratch_database(base, "test") as url:
        yield url
