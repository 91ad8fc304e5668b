"""The digest's roofline per device: copies and memsets sit on the zero-FLOP strip."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd

from service.digest.model import Digest
from service.render.digest_charts import roofline_charts

NIGHT = datetime(2026, 11, 30, tzinfo=UTC)


def _row(kernel: str, flops: float, percent: float) -> dict[str, object]:
    return {
        "timestamp": NIGHT,
        "device": "H100-SXM5",
        "run_id": 1,
        "commit": "c0",
        "kernel_key": kernel,
        "time_s": 1e-3,
        "total_flops": flops,
        "bytes_dram": 2e9,
        "binding": "dram",
        "peak_flop_time_s": flops / 989e12,
        "percent_of_roof": percent,
    }


def test_the_copy_is_drawn_at_its_percent_of_the_bandwidth_roof() -> None:
    history = pd.DataFrame([_row("gemv", 1e9, 80.0), _row("copy", 0.0, 62.0)])
    digest = Digest.model_construct(end=NIGHT, regressions=[])
    svg = roofline_charts(history, digest)["roofline:H100-SXM5"].decode()
    assert 'id="kernels"' in svg, "the GEMV is on the log-log axes"
    assert 'id="no-flops:kernels"' in svg and "copy 62%" in svg
