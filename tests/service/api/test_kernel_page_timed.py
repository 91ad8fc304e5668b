"""The dashboard's kernel page of a benchmark timed without work (no roof): its time trend.

pytest-benchmark or Google Benchmark results without counters are judged on time, and the
kernel page drew percent of roof only: such a benchmark's page had no chart at all.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient

from collectors.schema import DeviceInfo, KernelRecord, ProfilerInfo, RunKind, RunRecord
from rules.hardware import builtin_catalog
from rules.placement import place_run
from service.api.app import create_app
from service.config import RoofguardConfig
from service.settings import Settings
from service.store.db import open_store, session_scope
from service.store.ingest import ingest_run

REPO = "acme/bench"
DEVICE = "A100-SXM4-80GB"


def _night(night: int, first: datetime) -> RunRecord:
    name = "bench_softmax[4096]"
    timed = KernelRecord(name=name, key=name, duration_s=0.001 * (1 + night / 100))
    return RunRecord(
        repo=REPO,
        commit=f"{night:040x}",
        branch="main",
        kind=RunKind.NIGHTLY,
        timestamp=first + timedelta(days=night),
        device=DeviceInfo(name=DEVICE),
        profiler=ProfilerInfo(tool="pytest-benchmark"),
        kernels=(timed,),
    )


def test_a_benchmark_timed_alone_gets_its_time_trend(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'history.db'}"
    roof = builtin_catalog().lookup(DEVICE).roof()
    engine = open_store(url)
    first = datetime.now(UTC) - timedelta(days=10)
    with session_scope(engine) as session:
        for night in range(8):
            record = _night(night, first)
            ingest_run(session=session, run=record, placements=place_run(record, roof), roof=roof)
    engine.dispose()
    app = create_app(Settings(database_url=url), RoofguardConfig())
    with TestClient(app) as client:
        page = client.get("/kernels", params={"repo": REPO, "key": "bench_softmax[4096]"}).text
    assert page.count("<svg") == 1
    assert 'id="series"' in page
    assert "time (" in page  # the axis is time, not percent of roof
    table = page.split('<table id="history-table">')[1].split("</table>")[0]
    assert "nan" not in table  # the missing percent of roof read "nan %"
    assert table.count('<td class="num">–</td>') == 8
    assert '<td class="num">1.07 ms</td>' in table  # the newest night's time
