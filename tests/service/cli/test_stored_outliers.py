"""A stored outlier is an outlier, never a crash (issue 32 item 1).

The door refuses figures no device measures, but a store may already hold one (written
before the door existed, or by hand). Such a run is stored here past every check, through
the pipeline's own ``check_run``; every later check of the repository, its markdown, its
text and its charts, and the run's pages must still work.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from factories import make_kernel, make_run
from fastapi.testclient import TestClient

from service.api.app import create_app
from service.cli import run
from service.config import RoofguardConfig
from service.pipeline.check import check_run
from service.settings import Settings
from service.store.db import make_engine, migrate, session_scope

NIGHT = datetime(2026, 11, 1, 3, tzinfo=UTC)
HUGE = 1e308

EXTREMES = {
    "duration": {"time_s": HUGE},
    "flops": {"flops": {"fp16": HUGE}},
    "all": {"time_s": HUGE, "flops": {"fp16": HUGE}, "dram_bytes": HUGE},
    "tiny": {"time_s": 5e-324},
}


def _night(n: int, **gemv):
    kernels = [make_kernel("gemv", **gemv), make_kernel("axpy", time_s=2e-3 * (1 + 0.01 * n))]
    return make_run(commit=f"{n:07x}aa", timestamp=NIGHT + timedelta(days=n), kernels=kernels)


@pytest.fixture(params=list(EXTREMES))
def poisoned(request, tmp_path):
    """A store whose history holds normal nights and nights with one impossible figure."""
    url = f"sqlite:///{tmp_path / 'h.db'}"
    engine = make_engine(url)
    migrate(engine)
    extreme = EXTREMES[request.param]
    with session_scope(engine) as session:
        for n in range(6):
            gemv = extreme if n % 2 else {"time_s": 1e-3 * (1 + 0.01 * n)}
            check_run(session=session, run=_night(n, **gemv), config=RoofguardConfig())
    yield url, engine, extreme
    engine.dispose()


@pytest.mark.parametrize("gemv_now", [None, {"time_s": 4e-3}])
def test_checks_after_a_stored_outlier_still_work(poisoned, tmp_path, capsys, gemv_now):
    url, _, _ = poisoned
    kernels = [make_kernel("axpy", time_s=2e-3)]
    if gemv_now is not None:
        kernels.append(make_kernel("gemv", **gemv_now))
    report = tmp_path / "now.json"
    report.write_text(make_run(commit="f00d", kernels=kernels).model_dump_json())
    common = [str(report), "--repo", "acme/kernels", "--commit", "f00d", "--db", url]
    for fmt, extra in (("markdown", ["--charts", str(tmp_path / "charts")]), ("text", [])):
        out = tmp_path / f"v.{fmt}"
        args = [*common, "--branch", "main", "--format", fmt, "--output", str(out), *extra]
        assert run(["check", *args]) in (0, 1), capsys.readouterr().err
        assert out.read_text()
    assert run(["ingest", *common, "--branch", "main"]) == 0


def test_the_run_pages_show_a_stored_outlier(poisoned):
    url, engine, _ = poisoned
    app = create_app(Settings(database_url=url), RoofguardConfig(), engine=engine)
    with TestClient(app) as client:
        for run_id in (1, 2, 6):
            page = client.get(f"/runs/{run_id}")
            assert page.status_code == 200, page.text[-2000:]
        for path in ("/kernels?repo=acme/kernels&key=gemv", "/search?q=gemv", "/"):
            assert client.get(path).status_code == 200, path


def test_the_door_refuses_such_figures(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    for name, extreme in EXTREMES.items():
        if name == "tiny":
            continue
        report = tmp_path / f"{name}.json"
        report.write_text(_night(1, **extreme).model_dump_json())
        args = ["ingest", str(report), "--repo", "acme/kernels", "--commit", "c1"]
        assert run([*args, "--branch", "main", "--db", url]) == 2, name
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and ("duration_s" in err or "flops.fp16" in err), err
