"""Stored history like for like: the trend, the plot and the digest show a binding change.

A GEMM at 70% of the tensor_bf16 roof falls off the tensor cores (fp32, 14.8x slower) and
stays at 70% of the fp32 roof: the stored figure is flat, the like-for-like one drops to 4.7%.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from factories import falling_gemm_runs

from rules import builtin_catalog, place_run
from service.cli import run
from service.store.db import open_store, session_scope
from service.store.history import kernel_history
from service.store.ingest import ingest_run
from service.store.likeforlike import with_like_for_like

REPO = "acme/kernels"
GEMM = "gemm_bf16_128x128"
START = datetime(2026, 3, 2, tzinfo=UTC)


@pytest.fixture(scope="module")
def store_url(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('lfl') / 'history.db'}"
    engine = open_store(url)
    try:
        with session_scope(engine) as session:
            for record in falling_gemm_runs(repo=REPO, nights=14, fall_at=10, start=START):
                roof = builtin_catalog().lookup(record.device.name).roof()
                ingest_run(
                    session=session, run=record, placements=place_run(record, roof), roof=roof
                )
    finally:
        engine.dispose()
    return url


def test_history_is_read_like_for_like_from_the_stored_counters(store_url):
    engine = open_store(store_url)
    try:
        with session_scope(engine, readonly=True) as session:
            stored = kernel_history(session=session, repo=REPO, key=GEMM)
            like = with_like_for_like(session=session, frame=stored, repo=REPO)
    finally:
        engine.dispose()
    assert stored["percent_of_roof"].round(0).tolist() == [70.0] * 14
    assert like["percent_of_roof"].round(1).tolist() == [70.0] * 10 + [4.7] * 4
    assert like["own_percent_of_roof"].round(0).tolist() == [70.0] * 14
    assert set(like["reference_binding"]) == {"tensor_bf16"}


def test_plot_kernel_marks_the_binding_change(store_url, tmp_path):
    out = tmp_path / "trend.svg"
    args = ["plot", "kernel", GEMM, "--repo", REPO, "--db", store_url, "--output", str(out)]
    assert run(args) == 0
    svg = out.read_text(encoding="utf-8")
    assert 'id="binding:0"' in svg
    assert "tensor_bf16 → fp32" in svg
    assert "% of tensor_bf16 roof" in svg


def test_the_digest_lists_the_fall_as_a_regression(store_url, capsys):
    end = START + timedelta(days=13, hours=12)
    period = ["--from", (end - timedelta(days=6)).date().isoformat(), "--to", end.isoformat()]
    assert run(["digest", *period, "--repo", REPO, "--db", store_url, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    fell = [e for e in data["regressions"] if e["kernel"] == GEMM]
    assert fell, data["regressions"]
    assert fell[0]["after"] < 5.0 < 69.0 < fell[0]["before"]
    assert fell[0]["sparkline"][-1] == "▁", "the sparkline ends low"
