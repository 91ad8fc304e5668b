"""The run chart's baseline point of a kernel judged against another card's history.

The demo's decode step moved to an H200 and is judged on the H100's history. The chart (run
page, ``check --charts``) drew each kernel's baseline at its H100 time on the H200 roof: the
GEMMs that kept up with the card read as improved by 43%, and the attention kernel the verdict
calls suspect (it fell short of what the roofs predict) read as improved too.
"""

from __future__ import annotations

import pytest

from rules import KernelStatus
from service.cli.demo_cmd import run_demo
from service.pipeline.check import CheckOutcome
from service.render.charts import KernelPoint, judged_point


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> CheckOutcome:
    url = f"sqlite:///{tmp_path_factory.mktemp('moved') / 'history.db'}"
    return run_demo(url, device_change=True)


def test_baselines_from_another_card_sit_where_the_roofs_predict(outcome: CheckOutcome):
    """As the run page draws them (``pages._roofline_figure``); no arrow for those kept up."""
    assert outcome.roof.device == "H200-SXM"
    drawn = 0
    for kernel in outcome.verdict.kernels:
        placement = outcome.placements.get(kernel.key)
        point = placement and KernelPoint.from_placement(kernel.key, placement, time_share=0.1)
        if point is None:
            continue
        point = judged_point(point, kernel)
        assert kernel.baseline is not None and kernel.baseline.device == "H100-SXM5"
        assert point.baseline is not None, kernel.name
        drawn += 1
        moved = point.achieved_flop_per_s / point.baseline[1]
        if kernel.status == KernelStatus.UNCHANGED:
            assert moved == pytest.approx(1.0, rel=0.02), kernel.name
        else:
            assert kernel.status == KernelStatus.SUSPECT and moved < 0.8, kernel.name
    assert drawn >= 5
