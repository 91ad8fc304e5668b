"""What a check leaves beside its verdict: the run's roofline chart and the links to it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from collectors.schema import RunRecord
from service.errors import BadInput
from service.pipeline.check import CheckOutcome

if TYPE_CHECKING:  # jinja2: imported only when there are charts to link
    from service.render.markdown import VerdictLinks

ROOFLINE_CHART = "roofline.svg"


def artifact_links(charts: Path | None, artifact_name: str) -> VerdictLinks | None:
    """Links for a verdict whose charts travel as a workflow artifact (not hosted)."""
    if charts is None:
        return None
    from service.render.markdown import VerdictLinks

    return VerdictLinks(artifact_name=artifact_name, artifact_charts=(ROOFLINE_CHART,))


def write_charts(outcome: CheckOutcome, run: RunRecord, folder: Path) -> None:
    """The run's roofline chart (SVG) in ``folder``, each kernel's baseline from its verdict."""
    from service.render.chart_bytes import figure_bytes  # matplotlib
    from service.render.charts import roofline_chart, run_points

    points = run_points(run, outcome.placements, {}, outcome.verdict.kernels)
    title = f"{outcome.roof.label}: {run.commit[:12] if run.commit else 'run'}"
    svg = figure_bytes(roofline_chart(outcome.roof, points, title=title), "svg")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ROOFLINE_CHART).write_bytes(svg)
    except OSError as exc:  # a bare errno line named neither the flag nor the file
        where = exc.filename if exc.filename is not None else folder / ROOFLINE_CHART
        raise BadInput(f"--charts: {where}: cannot write: {exc.strerror or exc}") from exc
