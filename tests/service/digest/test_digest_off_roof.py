"""Kernels whose profile lost its roofline metrics are named by the digest while it lasts.

Before, a nightly job that dropped `--set roofline` kept timing every kernel, and those
kernels left every percent-of-roof section of the digest without a word.
"""

from __future__ import annotations

import json
from datetime import timedelta

import numpy as np
from digest_history import FIRST_NIGHT, PERIOD_END, PERIOD_START, commit_of, make_digest_history

from service.digest.build import build_digest
from service.render.digest_render import render_digest_html, render_digest_markdown


def _off_roof(frame, device: str, kernels: tuple[str, ...], night: int):
    """``frame`` with ``kernels`` on ``device`` timed alone from ``night`` on."""
    stamps = frame["timestamp"]
    rows = (
        frame["device"].eq(device)
        & frame["kernel_key"].isin(kernels)
        & (stamps >= FIRST_NIGHT + timedelta(days=night))
    )
    frame = frame.copy()
    frame.loc[rows, ["percent_of_roof", "total_flops", "bytes_dram", "bytes_l2"]] = np.nan
    frame.loc[rows, ["regime", "binding"]] = None
    return frame


def _digest(frame):
    return build_digest(frame, start=PERIOD_START, end=PERIOD_END, repo="acme/llm")


def test_kernels_timed_alone_since_they_left_the_roof_are_named() -> None:
    frame = _off_roof(make_digest_history(), "H100-SXM5", ("gemv_bf16", "softmax_fwd"), 36)
    digest = _digest(frame)
    [entry] = digest.off_roof
    assert (entry.device, entry.kernels, entry.last_commit) == ("H100-SXM5", 2, commit_of(35))
    assert entry.last_on_roof == FIRST_NIGHT + timedelta(days=35)
    assert set(entry.examples) == {"gemv_bf16_kernel", "softmax_fwd_kernel"}
    assert digest.headline.startswith("2 kernels off the roof, ")
    markdown = render_digest_markdown(digest)
    assert "## Kernels off the roof" in markdown and f"`{commit_of(35)[:8]}`" in markdown
    assert '<table id="off-roof">' in render_digest_html(digest)
    assert json.loads(digest.model_dump_json())["off_roof"][0]["kernels"] == 2


def test_it_is_said_each_week_it_lasts_within_the_lookback() -> None:
    frame = _off_roof(make_digest_history(), "A100-SXM4-80GB", ("gemm_bf16",), 10)
    [entry] = _digest(frame).off_roof
    assert entry.last_on_roof == FIRST_NIGHT + timedelta(days=9)


def test_a_history_on_the_roof_all_along_names_none() -> None:
    digest = _digest(make_digest_history())
    assert digest.off_roof == []
    assert "off the roof" not in digest.headline
    assert "Kernels off the roof" not in render_digest_markdown(digest)
