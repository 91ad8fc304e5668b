"""Kernels timed alone (no counters) in the weekly digest: slower until the time comes back,
and two that vanished the night one new kernel came (a fusion) read as one change.

Percent of roof tracks a placed kernel's regression until it recovers; a Google Benchmark
kernel without work has none, so its time regression was listed the week it started and then
never again: the next week's digest read "0 unresolved regressions" while it was still 25%
slower (report-only probe of the digest).
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from datetime import UTC, datetime, timedelta

import pytest
from factories import make_kernel, make_run

from rules.hardware import builtin_catalog
from rules.placement import place_run
from service.cli import run
from service.store.db import open_store, session_scope
from service.store.ingest import ingest_run

FIRST = datetime(2026, 11, 1, 2, tzinfo=UTC)
#: Two kernels fused into one from 27 November on.
FUSED = datetime(2026, 11, 27, tzinfo=UTC)
#: Time-only kernels: one 25% slower from 25 November on, one slower 18-21 November only.
STILL_SLOW, BACK = (
    datetime(2026, 11, 25, tzinfo=UTC),
    (
        datetime(2026, 11, 18, tzinfo=UTC),
        datetime(2026, 11, 22, tzinfo=UTC),
    ),
)


def _night(index: int):
    when = FIRST + timedelta(days=index)
    wobble = 1 + 0.002 * ((index * 7) % 5 - 2)
    slow = 1.25 if when >= STILL_SLOW else 1.0
    dip = 1.25 if BACK[0] <= when < BACK[1] else 1.0
    kernels = [
        make_kernel("timed_slow", flops={}, dram_bytes=None, time_s=1e-3 * slow * wobble),
        make_kernel("timed_back", flops={}, dram_bytes=None, time_s=2e-3 * dip * wobble),
        make_kernel("gemv", flops={"fp32": 1e8}, dram_bytes=1e9, time_s=4e-4 * wobble),
    ]
    apart = (("part_a", 3e-4), ("part_b", 3e-4))
    parts = apart if when < FUSED else (("fused_ab", 3.5e-4),)
    kernels += [make_kernel(n, flops={}, dram_bytes=None, time_s=t * wobble) for n, t in parts]
    return make_run(kernels=kernels, commit=f"c{index:03d}", timestamp=when, device="H100-SXM5")


@pytest.fixture(scope="module")
def store_url(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('timed') / 'history.db'}"
    engine = open_store(url)
    roof = builtin_catalog().lookup("H100-SXM5").roof()
    with session_scope(engine) as session:
        for index in range(35):  # 1 November to 5 December
            record = _night(index)
            ingest_run(session=session, run=record, placements=place_run(record, roof), roof=roof)
    engine.dispose()
    return url


def _digest(url: str, start: str, end: str, *extra: str) -> str:
    argv = ["digest", "--db", url, "--repo", "acme/kernels", "--from", start, "--to", end]
    return _output(argv, *extra)


def _output(argv: list[str], *extra: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert run([*argv, *extra]) == 0
    return out.getvalue()


def test_a_time_regression_stays_unresolved_after_its_week(store_url) -> None:
    week48 = json.loads(_digest(store_url, "2026-11-23", "2026-11-29", "--json"))
    assert [t["kernel"] for t in week48["time_regressions"]] == ["timed_slow"]
    week49 = json.loads(_digest(store_url, "2026-11-30", "2026-12-05", "--json"))
    assert week49["time_regressions"] == []
    [still] = week49["unresolved_time"]
    assert (still["kernel"], still["device"]) == ("timed_slow", "H100-SXM5")
    assert still["ratio"] == pytest.approx(1.25, rel=0.01)
    assert still["since"].startswith("2026-11-25")
    assert still["current_s"] == pytest.approx(1.25e-3, rel=0.01)


def test_a_time_regression_that_came_back_is_not_unresolved(store_url) -> None:
    data = json.loads(_digest(store_url, "2026-11-23", "2026-11-29", "--json"))
    assert "timed_back" not in {t["kernel"] for t in data["unresolved_time"]}


def test_the_markdown_names_it_under_the_unresolved_regressions(store_url) -> None:
    text = _digest(store_url, "2026-11-30", "2026-12-05")
    assert "0 unresolved regressions, 1 unresolved time regression**" in text
    section = text.split("## Unresolved regressions by age", 1)[1]
    assert "Still slower in time" in section
    assert (
        "| `timed_slow` | `H100-SXM5` | 1.00 → 1.25 ms (1.25×) | 1.25 ms | 2026-11-25 |" in section
    )


def test_the_html_page_names_it_too(store_url, tmp_path) -> None:
    page = tmp_path / "digest.html"
    _digest(store_url, "2026-11-30", "2026-12-05", "--html", str(page))
    table = page.read_text().split('<table id="unresolved-time">', 1)[1].split("</table>")[0]
    assert "<code>timed_slow</code>" in table and "1.00 → 1.25 ms (1.25×)" in table


def test_two_kernels_fused_into_one_read_as_one_merge(store_url) -> None:
    """Each was "replaced by fused_ab" at its own time's ratio (1.17x), a slowdown twice."""
    data = json.loads(_digest(store_url, "2026-11-23", "2026-11-29", "--json"))
    merged = {v["kernel"]: v for v in data["vanished"]}
    assert set(merged) == {"part_a", "part_b"}
    assert merged["part_a"]["change"] == merged["part_b"]["change"] == "merged"
    assert merged["part_a"]["merged_with"] == ["part_b"]
    assert merged["part_a"]["replaced_by"] == ["fused_ab"]
    text = _digest(store_url, "2026-11-23", "2026-11-29")
    assert "with part_b, replaced by fused_ab" in text
    # The pair's time beside its replacement's: 0.6 ms of two kernels became 0.35 ms of one.
    both = merged["part_a"]["last_time_s"] + merged["part_b"]["last_time_s"]
    assert both == pytest.approx(6e-4, rel=0.01)
    after = merged["part_a"]["replacement_time_s"]
    assert f"{both * 1e6:.0f} → {after * 1e6:.0f} µs ({after / both:.2f}×)" in text
