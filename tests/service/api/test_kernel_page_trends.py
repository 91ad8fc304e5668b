"""The dashboard's kernel page: the trend of a benchmark timed alone, and runner swaps marked.

A benchmark timed without work (pytest-benchmark or Google Benchmark with no counters: no
roof) had a page with no chart at all, the trend being drawn from percent of roof only. And a
step on the night a runner took over looked like any regression: it is marked, where a pool's
rotation (no swap) is not.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from factories import make_run
from fastapi.testclient import TestClient

from collectors.schema import KernelRecord, RunRecord
from rules.hardware import builtin_catalog
from rules.placement import place_run
from service.api.app import create_app
from service.config import RoofguardConfig
from service.settings import Settings
from service.store.db import open_store, session_scope
from service.store.ingest import ingest_run

REPO = "acme/kernels"
DEVICE = "A100-SXM4-80GB"
NAME = "copy_kernel"


def _night(night: int, runner: str, first: datetime, timed_only: bool) -> RunRecord:
    slower = (1.07 if runner != "r1" else 1.0) * (1 + night / 100)
    work = {} if timed_only else {"dram": 3e9}
    kernel = KernelRecord(name=NAME, key=NAME, duration_s=0.001 * slower, bytes=work)
    return make_run(
        kernels=[kernel],
        repo=REPO,
        commit=f"{night:040x}",
        timestamp=first + timedelta(days=night),
        device=DEVICE,
        tool="pytest-benchmark" if timed_only else "nsys",
        runner=runner,
    )


def _page(tmp_path, runners: list[str], timed_only: bool = False) -> str:
    """The kernel page after one nightly run on each of ``runners``, oldest first."""
    url = f"sqlite:///{tmp_path / 'history.db'}"
    roof = builtin_catalog().lookup(DEVICE).roof()
    engine = open_store(url)
    first = datetime.now(UTC) - timedelta(days=len(runners) + 1)
    with session_scope(engine) as session:
        for night, runner in enumerate(runners):
            record = _night(night, runner, first, timed_only)
            ingest_run(session=session, run=record, placements=place_run(record, roof), roof=roof)
    engine.dispose()
    with TestClient(create_app(Settings(database_url=url), RoofguardConfig())) as client:
        return client.get("/kernels", params={"repo": REPO, "key": NAME}).text


def test_a_benchmark_timed_alone_gets_its_time_trend(tmp_path) -> None:
    page = _page(tmp_path, ["r1"] * 8, timed_only=True)
    assert page.count("<svg") == 1 and 'id="series"' in page
    assert "time (" in page  # the axis is time, not percent of roof
    table = page.split('<table id="history-table">')[1].split("</table>")[0]
    assert "nan" not in table  # the missing percent of roof read "nan %"
    # No roof: no column of dashes, and no word of like for like; what would place it instead.
    assert "% of roof" not in table and table.count("<tr>") == 9
    assert 'id="timed-alone"' in page and "like for like" not in page
    assert "ncu --set roofline" in page
    assert '<td class="num">1.07 ms</td>' in table  # the newest night's time


def test_each_run_names_its_runner(tmp_path) -> None:
    page = _page(tmp_path, ["r1"] * 4 + ["r2"] * 4)
    table = page.split('<table id="history-table">')[1].split("</table>")[0]
    assert "<th>runner</th>" in table
    assert (table.count("<td>r1</td>"), table.count("<td>r2</td>")) == (4, 4)
    assert "% of roof" in table and 'id="timed-alone"' not in page


def test_a_runner_swap_is_marked_on_the_trend(tmp_path) -> None:
    page = _page(tmp_path, ["r1"] * 6 + ["r2"] * 4)
    assert 'id="runner:0"' in page and 'id="runner:1"' not in page
    assert "runner r1 → r2" in page


@pytest.mark.parametrize(
    "runners",
    [["r1"] * 10, ["r1", "r2", "r3"] * 4, ["r1", "r1", "r2", "r2", "r3", "r3", "r1", "r1", "r2"]],
    ids=["one runner", "a pool rotating nightly", "a pool of stays"],
)
def test_no_swap_no_mark(tmp_path, runners: list[str]) -> None:
    page = _page(tmp_path, runners)
    assert 'id="series"' in page and 'id="runner:0"' not in page
