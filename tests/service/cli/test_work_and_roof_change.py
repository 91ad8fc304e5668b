"""A declared work model edited after a datasheet figure was corrected: every read agrees.

Sixteen nights of a GEMM through ``roofguard check``: the tensor_bf16 peak is corrected on
night 10 (989.4 -> 1,500 TFLOP/s) and the GEMM's work model on night 12 (``2*M*N*K`` ->
``M*N*K``). Nights 0-9 are on the old figure and the old work. The check read its baseline
on today's roof first and then on today's work; the kernel page, the ``/digest`` page and
``roofguard plot kernel`` did the work first, and the roof re-read then placed the nights'
stored (old) work on the new roof: those nights read at twice their percent of roof and the
digest listed a 50% regression on the night of the correction.
"""

from __future__ import annotations

import html
import json
import math
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from factories import make_kernel, make_run
from fastapi.testclient import TestClient

from service.api.app import create_app
from service.cli import run
from service.cli.plot_cmd import _kernel_series
from service.config import RoofguardConfig
from service.settings import Settings

REPO = "acme/gemms"
GEMM = "BM_gemm/4096"
NIGHTS, CORRECTED_AT, EDITED_AT = 16, 10, 12
PEAK = '[devices."H100-SXM5".peak_flop_per_s]\ntensor_bf16 = 1.5e15\n'
MODEL = '[[work_models]]\npattern = "BM_gemm*"\nflops = {{ tensor_bf16 = "{flops}" }}\n'
#: Every night on today's work (M*N*K) and today's peak, from its own time.
TODAY = 100 * (4096**3 / 1.5e15) / 1e-3


def _time(night: int) -> float:
    return 1e-3 * (1 + 0.004 * math.sin(night))


def _night(tmp_path: Path, url: str, night: int, start: datetime) -> dict:
    """Night ``night`` through ``roofguard check`` under that night's configuration."""
    config = tmp_path / "roofguard.toml"
    flops = "M*N*K" if night >= EDITED_AT else "2*M*N*K"
    config.write_text(MODEL.format(flops=flops) + (PEAK if night >= CORRECTED_AT else ""))
    gemm = make_kernel(
        GEMM,
        flops={},
        dram_bytes=None,
        time_s=_time(night),
        params={"M": 4096, "N": 4096, "K": 4096},
    )
    record = make_run(repo=REPO, kernels=[gemm], timestamp=start + timedelta(days=night))
    report = tmp_path / f"night-{night}.json"
    report.write_text(record.model_dump_json())
    out = tmp_path / f"verdict-{night}.json"
    argv = ["check", str(report), "--repo", REPO, "--commit", f"{night:07x}"]
    argv += ["--branch", "main", "--kind", "nightly", "--config", str(config), "--db", url]
    assert run([*argv, "--format", "json", "--output", str(out)]) == 0
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict]:
    """The store after the sixteen nights, and the last night's verdict."""
    tmp_path = tmp_path_factory.mktemp("gemms")
    url = f"sqlite:///{tmp_path / 'history.db'}"
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=NIGHTS)
    verdicts = [_night(tmp_path, url, night, start) for night in range(NIGHTS)]
    return url, verdicts[-1]


def _expected() -> list[float]:
    return [TODAY / (_time(night) / 1e-3) for night in range(NIGHTS)]


def test_the_check_reads_every_night_on_todays_roof_and_work(history) -> None:
    _, verdict = history
    gemm = next(k for k in verdict["kernels"] if k["key"] == GEMM)
    assert gemm["status"] == "unchanged"
    window = len(gemm["baseline"]["history"])
    assert gemm["baseline"]["history"] == pytest.approx(_expected()[-1 - window : -1], rel=1e-6)


def test_the_kernel_page_reads_the_nights_as_the_check(history) -> None:
    url, _ = history
    with TestClient(create_app(Settings(database_url=url), RoofguardConfig())) as client:
        page = client.get("/kernels", params={"repo": REPO, "key": GEMM}).text
    table = page.split('<table id="history-table">')[1].split("</table>")[0]
    shown = [float(p) for p in re.findall(r'<td class="num">([\d.]+) ?%</td>', table)]
    assert shown[::-1] == pytest.approx(_expected(), rel=0.01)  # newest first, rounded


def test_the_digest_page_lists_no_step_at_the_edit(history) -> None:
    url, _ = history
    with TestClient(create_app(Settings(database_url=url), RoofguardConfig())) as client:
        page = html.unescape(client.get("/digest", params={"repo": REPO}).text)
    headline = re.search(r'<p id="headline"><strong>(.*?)</strong>', page).group(1)
    assert set(re.findall(r"(\d+) ", headline)) == {"0"}, headline  # nothing moved


def test_plot_kernel_reads_the_nights_as_the_check(history) -> None:
    url, _ = history
    nightly, _ = _kernel_series(url, REPO, GEMM, None)
    assert list(nightly["percent_of_roof"]) == pytest.approx(_expected(), rel=1e-6)


def test_the_digest_reads_the_nights_as_the_check(history, capsys) -> None:
    url, _ = history
    capsys.readouterr()
    assert run(["digest", "--repo", REPO, "--db", url, "--json"]) == 0
    digest = json.loads(capsys.readouterr().out)
    moved = [m["kernel"] for name in ("regressions", "improvements") for m in digest[name]]
    assert GEMM not in moved, digest["headline"]
