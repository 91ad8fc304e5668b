"""``roofguard digest`` reads a card's full columns only for the rows it judges or draws.

The device changes (``service.digest.rowread``) and the HTML's charts
(``service.digest.chartread``) come from the compact history; here the command's JSON and HTML
are held, byte for byte, to the digest of the full history (``nightly_history`` like for
like, as the command read it before), on SQLite and on PostgreSQL. The store has a card that
starts in the period (the H100's last four nights run on an H200 too, one kernel not keeping
up) and a kernel whose binding changed (like for like recomputes it).
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from digest_history import PERIOD_END, PERIOD_START, history_runs, make_digest_history

import service.digest.workers as workers
from collectors.schema import DeviceInfo, KernelRecord, RunRecord
from rules.hardware import builtin_catalog
from rules.placement import place_run
from service.cli import run
from service.digest.build import build_digest
from service.digest.chartread import chart_history
from service.digest.model import DigestOptions
from service.digest.storeread import compact_history
from service.render.digest_charts import roofline_charts, trend_charts
from service.render.digest_render import render_digest_html, render_digest_json
from service.store.db import open_store, session_scope
from service.store.history import nightly_history
from service.store.ingest import ingest_run
from service.store.likeforlike import with_like_for_like

REPO = "acme/cards"
NEW_CARD = "H200-SXM"
LOOKBACK = 90
PERIOD = ["--from", PERIOD_START.isoformat(), "--to", PERIOD_END.isoformat()]


def _on_new_card(kernel: KernelRecord) -> KernelRecord:
    """The kernel's time on the new card: the GEMM slower, the others faster."""
    factor = 2.0 if kernel.key == "gemm_bf16" else 0.7
    return kernel.model_copy(update={"duration_s": kernel.duration_s * factor})


def _runs() -> list[RunRecord]:
    runs = history_runs(make_digest_history(), repo=REPO)
    moved = [r for r in runs if r.device.name == "H100-SXM5"][-4:]
    return runs + [
        r.model_copy(
            update={
                "device": DeviceInfo(name=NEW_CARD),
                "kernels": tuple(_on_new_card(k) for k in r.kernels),
            }
        )
        for r in moved
    ]


def _fill(url: str) -> None:
    engine = open_store(url)
    try:
        with session_scope(engine) as session:
            for record in _runs():
                roof = builtin_catalog().lookup(record.device.name).roof()
                ingest_run(
                    session=session, run=record, placements=place_run(record, roof), roof=roof
                )
    finally:
        engine.dispose()


def _full_history(url: str):
    """The digest's history as the command read it before: every column, like for like."""
    start = PERIOD_START - timedelta(days=LOOKBACK)
    engine = open_store(url)
    try:
        with session_scope(engine, readonly=True) as session:
            full = nightly_history(
                session=session, repo=REPO, start=start, end=PERIOD_END + timedelta(microseconds=1)
            )
            return with_like_for_like(session=session, frame=full, repo=REPO)
    finally:
        engine.dispose()


def _expected(url: str) -> tuple[str, bytes]:
    """JSON and HTML of the digest of the full history (device changes and charts from it)."""
    full = _full_history(url)
    options = DigestOptions(lookback_days=LOOKBACK, min_segment=2)
    digest = build_digest(full, start=PERIOD_START, end=PERIOD_END, repo=REPO, options=options)
    charts = {**trend_charts(full, digest), **roofline_charts(full, digest)}
    return render_digest_json(digest), render_digest_html(digest, charts).encode()


def _command(url: str, tmp_path: Path, capsys, *flags: str) -> tuple[str, bytes]:
    config = tmp_path / "roofguard.toml"
    config.write_text("")
    base = ["digest", *PERIOD, "--repo", REPO, "--db", url, "--config", str(config), *flags]
    assert run([*base, "--json"]) == 0
    data = capsys.readouterr().out
    page = tmp_path / "digest.html"
    assert run([*base, "--html", str(page)]) == 0
    capsys.readouterr()
    return data, page.read_bytes()


def _same(url: str, tmp_path: Path, capsys) -> None:
    data, page = _command(url, tmp_path, capsys)
    want_data, want_page = _expected(url)
    digest = json.loads(data)
    [change] = digest["device_changes"]
    assert (change["from_device"], change["to_device"]) == ("H100-SXM5", NEW_CARD)
    assert "gemm_bf16" in [k["kernel"] for k in change["not_kept_up"]]
    assert digest["regime_flips"], "a kernel's binding changed: like for like recomputed it"
    assert data == want_data
    assert page.count(b"<svg") >= 6, "trend charts and a roofline per card"
    assert page == want_page


def test_compact_read_gives_the_full_historys_json_and_html(tmp_path, capsys) -> None:
    url = f"sqlite:///{tmp_path / 'history.db'}"
    _fill(url)
    _same(url, tmp_path, capsys)


@pytest.mark.postgres
def test_compact_read_on_postgresql(postgres_url, tmp_path, capsys) -> None:
    _fill(postgres_url)
    _same(postgres_url, tmp_path, capsys)


def test_a_large_historys_stages_share_worker_processes(tmp_path, capsys, monkeypatch) -> None:
    """Judging the new card, both scans and the charts go to one pool: the same bytes."""
    url = f"sqlite:///{tmp_path / 'history.db'}"
    _fill(url)
    monkeypatch.setattr("service.cli.digest_cmd.PARALLEL_POINTS", 0)  # as at 29 M rows
    monkeypatch.setattr("service.digest.changes.PARALLEL_POINTS", 0)
    pools: list[int] = []
    submitted: set[str] = set()
    real_pool, real_submit = workers.ProcessPoolExecutor, workers.Workers.submit

    def counted(count: int, **kw):
        pools.append(count)
        return real_pool(count, **kw)

    def recorded(self, call, *args):
        submitted.add(call.__name__)
        return real_submit(self, call, *args)

    monkeypatch.setattr(workers, "ProcessPoolExecutor", counted)
    monkeypatch.setattr(workers.Workers, "submit", recorded)
    data, page = _command(url, tmp_path, capsys, "--workers", "2")
    assert pools == [2, 2], "one pool a command (--json, then --html)"
    assert {"judge_card", "_slab_cells", "_trend_svg", "_roofline_svg"} <= submitted
    assert (data, page) == _expected(url)


def test_the_charts_rows_are_those_of_the_drawn_series(tmp_path) -> None:
    """With the charts' limit, only the drawn series' rows are read: the same charts."""
    url = f"sqlite:///{tmp_path / 'history.db'}"
    _fill(url)
    engine = open_store(url)
    try:
        with session_scope(engine, readonly=True) as session:
            start = PERIOD_START - timedelta(days=LOOKBACK)
            history = compact_history(session, REPO, start, PERIOD_END, with_ids=True)
            digest = build_digest(history, start=PERIOD_START, end=PERIOD_END, repo=REPO)
            every, first, none = (
                chart_history(session, history, digest, limit=n) for n in (None, 1, 0)
            )
    finally:
        engine.dispose()

    # Limit 0: the regressions' series and each card's last night, not every night of the
    # improvement's or of softmax_fwd's, an unresolved regression of before the period.
    def softmax(rows):
        return rows[(rows["kernel_key"] == "softmax_fwd") & (rows["device"] == "H100-SXM5")]

    assert len(softmax(none)) == 1 < len(softmax(every))
    assert trend_charts(first, digest, limit=1) == trend_charts(every, digest, limit=1)
    assert roofline_charts(none, digest) == roofline_charts(every, digest)


def test_a_small_history_starts_no_workers(tmp_path, capsys, monkeypatch) -> None:
    """Below the scans' size nothing is spawned (a worker costs about a second to start)."""
    url = f"sqlite:///{tmp_path / 'history.db'}"
    _fill(url)

    def refused(count: int, **kw):
        raise AssertionError(f"{count} workers started for a small history")

    monkeypatch.setattr(workers, "ProcessPoolExecutor", refused)
    assert _command(url, tmp_path, capsys, "--workers", "2") == _expected(url)
