"""``roofguard compare``: one kernel's percent of roof across cards, on a real store.

30 nights on an A100, then 8 on an H100 (real catalog roofs); a memory-bound GEMV kept its
percent of roof, a bf16 GEMM fell from 80% to 50% of the tensor roof.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from device_fleet import KERNELS, REPO, Work, datasheet, nights, store

from service.cli import run
from service.compare.build import CompareRequest, compare_history
from service.compare.cards import CompareView
from service.compare.render import card_points, render_text, suite_line
from service.config import RoofguardConfig
from service.render.figures import fmt_ratio, fmt_seconds
from service.store.db import open_store, session_scope

A100, H100 = "A100-SXM4-80GB", "H100-SXM5"


def two_cards(
    folder: Path,
    nights_on: tuple[int, int],
    a100_kernels: dict[str, Work] = KERNELS,
    h100_kernels: dict[str, Work] = KERNELS,
) -> str:
    """A store of ``nights_on[0]`` nights on the A100, then ``nights_on[1]`` on the H100."""
    a100, h100 = nights_on
    url = f"sqlite:///{folder / 'history.db'}"
    engine = open_store(url)
    try:
        store(engine, nights(A100, a100, kernels=a100_kernels), datasheet(A100))
        store(engine, nights(H100, h100, start=a100, kernels=h100_kernels), datasheet(H100))
    finally:
        engine.dispose()
    return url


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    return two_cards(tmp_path_factory.mktemp("compare"), (30, 8))


def invoke(capsys: pytest.CaptureFixture[str], db: str, *args: str) -> tuple[int, str, str]:
    code = run(["compare", "--repo", REPO, "--db", db, *args])
    out, err = capsys.readouterr()
    return code, out, err


def rows(capsys: pytest.CaptureFixture[str], db: str, *args: str) -> list[dict]:
    code, out, err = invoke(capsys, db, "--format", "json", *args)
    assert code == 0, err
    return json.loads(out)


def test_json_is_a_row_per_kernel_and_card(capsys, db) -> None:
    found = rows(capsys, db)
    assert [(r["kernel"], r["device"]) for r in found] == [
        ("gemm", A100),
        ("gemm", H100),
        ("gemv", A100),
        ("gemv", H100),
    ]
    for row in found:
        assert {"kernel", "device", "percent_of_roof", "time_s", "binding", "runs"} <= set(row)
    by = {(r["kernel"], r["device"]): r for r in found}
    assert by["gemv", A100]["percent_of_roof"] == pytest.approx(85.0, rel=3e-3)
    assert by["gemv", H100]["percent_of_roof"] == pytest.approx(84.0, rel=3e-3)
    assert (by["gemv", A100]["runs"], by["gemv", H100]["runs"]) == (30, 8)
    assert by["gemm", H100]["binding"] == "tensor_bf16"
    assert by["gemv", H100]["time_s"] == pytest.approx(KERNELS["gemv"].time_on(H100), rel=3e-3)


def test_each_card_is_compared_with_the_first_as_the_roofs_predict(capsys, db) -> None:
    by = {(r["kernel"], r["device"]): r for r in rows(capsys, db)}
    gemv, gemm = by["gemv", H100], by["gemm", H100]
    assert gemv["reference"] == A100 and by["gemv", A100]["keeping"] is None
    assert gemv["expected_time_ratio"] == pytest.approx(2.039 / 3.35)  # the HBM bandwidths
    assert gemm["expected_time_ratio"] == pytest.approx(312 / 989.4)  # the bf16 peaks
    assert gemv["time_ratio"] == pytest.approx(
        KERNELS["gemv"].time_on(H100) / KERNELS["gemv"].time_on(A100), rel=5e-3
    )
    assert (gemv["keeping"], gemm["keeping"]) == ("kept-up", "not-kept-up")


def test_devices_choose_the_order_and_kernel_filters(capsys, db) -> None:
    found = rows(capsys, db, "--devices", "H100,a100-sxm4-80gb", "--kernel", "^gem[m]$")
    assert [(r["kernel"], r["device"]) for r in found] == [("gemm", H100), ("gemm", A100)]
    assert found[1]["reference"] == H100 and found[1]["keeping"] == "faster"


def test_text_and_markdown_say_what_scaled(capsys, db) -> None:
    code, text, _ = invoke(capsys, db)
    assert code == 0
    assert "did not keep up" in text and "kept up" in text and "roofs predict 0.61×" in text
    code, markdown, _ = invoke(capsys, db, "--format", "markdown")
    assert code == 0
    assert "| `gemm` | H100\\-SXM5 |" in markdown
    assert "| Kernel | Card | % of roof | Time | Binding | Runs |" in markdown


def test_forecast_keeps_each_kernels_percent_of_roof(capsys, db) -> None:
    found = [r for r in rows(capsys, db, "--forecast", "H200") if r["forecast"]]
    assert {r["device"] for r in found} == {"H200-SXM"}
    gemv = next(r for r in found if r["kernel"] == "gemv")
    h200 = datasheet("H200-SXM")
    expected = KERNELS["gemv"].roof_time(h200) / (gemv["percent_of_roof"] / 100)
    assert gemv["time_s"] == pytest.approx(expected)
    assert gemv["source"] == H100 and gemv["runs"] == 0
    assert "keeps its percent of roof" in gemv["assumption"]


def test_unknown_cards_get_one_error_with_the_nearest_names(capsys, db) -> None:
    code, _, err = invoke(capsys, db, "--devices", "A100,H1000")
    assert code == 2
    assert err.count("error") == 1 and "'H1000'" in err and "closest known: H100" in err
    code, _, err = invoke(capsys, db, "--devices", "V100-SXM2-32GB")
    assert code == 2 and "V100-SXM2-32GB has no base-branch history" in err
    assert f"cards with history: {A100}, {H100}" in err
    code, _, err = invoke(capsys, db, "--forecast", "H2000")
    assert code == 2 and "--forecast: unknown device 'H2000'; closest known:" in err
    # a card with runs: its forecast total replaced its measured one, and ratios were off it
    code, _, err = invoke(capsys, db, "--forecast", A100)
    assert code == 2 and f"--forecast: {A100} has runs of its own" in err


def test_forecast_to_a_card_without_the_precision(capsys, tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'fp8.db'}"
    engine = open_store(url)
    fp8 = {"gemm_fp8": Work({"tensor_fp8": 4e12}, {"dram": 4e9}, {H100: 70.0})}
    try:
        store(engine, nights(H100, 6, kernels=fp8), datasheet(H100))
    finally:
        engine.dispose()
    code, _, err = invoke(capsys, url, "--forecast", "A100-SXM4-80GB")
    assert code == 2
    assert "A100-SXM4-80GB has no peak for tensor_fp8, which kernel 'gemm_fp8' needs" in err
    assert "nearest known cards with one: " in err


def test_forecast_leaves_out_only_the_kernels_the_card_cannot_place(capsys, tmp_path) -> None:
    """An fp8 GEMM beside a bf16 one: the A100 (no fp8 peak) refused the whole table."""
    url = f"sqlite:///{tmp_path / 'mixed.db'}"
    engine = open_store(url)
    mixed = {
        "gemm_fp8": Work({"tensor_fp8": 4e12}, {"dram": 4e9}, {H100: 70.0}),
        "gemm_bf16": Work({"tensor_bf16": 2e12}, {"dram": 4e9}, {H100: 70.0}),
    }
    try:
        store(engine, nights(H100, 6, kernels=mixed), datasheet(H100))
    finally:
        engine.dispose()
    forecast = [r for r in rows(capsys, url, "--forecast", "A100-SXM4-80GB") if r["forecast"]]
    assert [r["kernel"] for r in forecast] == ["gemm_bf16"]
    code, out, _ = invoke(capsys, url, "--forecast", "A100-SXM4-80GB")
    flat = " ".join(out.split())  # the terminal's lines wrapped
    assert code == 0
    assert "1 kernel(s) not forecast: A100-SXM4-80GB has no peak for tensor_fp8" in flat
    assert "(e.g. 'gemm_fp8'; the nearest cards with one: " in flat


def test_one_roofline_per_card(capsys, db, tmp_path) -> None:
    code, _, err = invoke(capsys, db, "--forecast", "H200-SXM", "--chart", str(tmp_path / "c.svg"))
    assert code == 0
    written = sorted(p.name for p in tmp_path.glob("c-*.svg"))
    assert written == ["c-A100-SXM4-80GB.svg", "c-H100-SXM5.svg", "c-H200-SXM.svg"]
    svg = (tmp_path / "c-H100-SXM5.svg").read_text()
    assert 'id="kernels"' in svg and 'id="roof:tensor_bf16:dram"' in svg
    assert str(tmp_path / "c-H100-SXM5.svg") in err


def test_bad_flags(capsys, db) -> None:
    assert invoke(capsys, db, "--format", "yaml")[0] == 2
    assert invoke(capsys, db, "--kernel", "(")[0] == 2
    code = run(["compare", "--db", db])
    assert code == 2 and "--repo" in capsys.readouterr().err
    assert Path(db.removeprefix("sqlite:///")).exists()


def test_a_copy_sits_on_the_zero_flop_strip_of_each_card(tmp_path, capsys) -> None:
    copy = Work({"fp32": 0.0}, {"dram": 2e9}, {A100: 70.0, H100: 75.0})
    with_copy = {**KERNELS, "copy": copy}
    url = two_cards(tmp_path, (3, 3), with_copy, with_copy)
    code, _, err = invoke(capsys, url, "--chart", str(tmp_path / "c.svg"))
    assert code == 0, err
    for card, percent in ((A100, 70.0), (H100, 75.0)):
        svg = (tmp_path / f"c-{card}.svg").read_text()
        assert 'id="no-flops:kernels"' in svg, f"{card}: the copy is left off the chart"
        assert f"copy {percent:.0f}%" in svg


def test_a_card_added_last_night_is_shown_from_the_runs_it_has(tmp_path, capsys) -> None:
    """Two nights on a new H100 are fewer than a level needs: the card's rows showed nothing.

    Its kernels now read the median of their runs, marked, and are judged against the first
    card; the forecast still reads the card with enough runs.
    """
    url = two_cards(tmp_path, (10, 2))
    by = {(r["kernel"], r["device"]): r for r in rows(capsys, url, "--forecast", "H200")}
    gemv, gemm = by["gemv", H100], by["gemm", H100]
    assert (gemv["runs"], gemv["few_runs"], by["gemv", A100]["few_runs"]) == (2, True, False)
    assert gemv["percent_of_roof"] == pytest.approx(84.0, rel=3e-3)
    assert (gemv["keeping"], gemm["keeping"]) == ("kept-up", "not-kept-up")
    assert by["gemv", "H200-SXM"]["source"] == A100
    code, text, _ = invoke(capsys, url)
    assert code == 0 and "2 (median)" in text
    assert "fewer than the 3 runs a kernel's level needs on that card" in text


def test_a_kernel_the_first_card_never_ran_is_not_the_first_card(tmp_path, capsys) -> None:
    only_h100 = {**KERNELS, "fp8_gemm": Work({"tensor_fp8": 4e12}, {"dram": 4e9}, {H100: 70.0})}
    url = two_cards(tmp_path, (4, 4), h100_kernels=only_h100)
    found = rows(capsys, url, "--kernel", "fp8")
    assert [(r["device"], r["reference"], r["time_ratio"]) for r in found] == [(H100, A100, None)]
    code, text, _ = invoke(capsys, url, "--kernel", "fp8")
    assert code == 0 and "(the first card)" not in text


def stored_view(db: str) -> CompareView:
    """The repository's cross-card view, as the command builds it."""
    engine = open_store(db)
    try:
        with session_scope(engine, readonly=True) as session:
            return compare_history(
                session=session, request=CompareRequest(REPO), config=RoofguardConfig()
            )
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    ("width", "hidden"), [(200, ""), (90, "runs"), (70, "runs, binding, time")]
)
def test_the_text_table_fits_the_terminal_and_names_what_it_hides(db, width, hidden) -> None:
    view = stored_view(db)
    text = render_text(view.comparison, width=width)
    table = text[text.index("kernel") :].splitlines()
    assert max(map(len, table)) <= width
    words = set(" ".join(table).split())
    assert {"gemm", "H100-SXM5", "did", "not", "keep", "up", "kept", "predict"} <= words
    assert (f"{hidden} hidden to fit {width} columns" in text) == bool(hidden)


def test_the_charts_flag_the_kernels_that_did_not_keep_up(db: str) -> None:
    """A chart of more kernels than it names names these first (``service.render.chart_focus``)."""
    view = stored_view(db)
    names = {lv.name: lv.name for card in view.cards for lv in card.levels.values()}
    flagged = {
        card.label: {p.name for p in card_points(view, card, names) if p.flagged}
        for card in view.cards
    }
    assert flagged == {A100: set(), H100: {"gemm"}}


def test_the_suite_line_sums_the_kernels_every_card_has(db: str, capsys) -> None:
    """What the new card gives the suite: its GPU time on each card, and the ratio."""
    view = stored_view(db)
    times = {(r.device, r.kernel): r.time_s for r in view.comparison.rows}
    a100 = sum(t for (card, _), t in times.items() if card == A100)
    h100 = sum(t for (card, _), t in times.items() if card == H100)
    line = suite_line(view.comparison)
    assert line == (
        f"GPU time over the 2 kernels on every card: {A100} {fmt_seconds(a100)}; "
        f"{H100} {fmt_seconds(h100)} ({fmt_ratio(h100 / a100)})"
    )
    code, out, _ = invoke(capsys, db, "--format", "markdown")
    assert code == 0 and "GPU time over the 2 kernels on every card" in out
    _, forecast, _ = invoke(capsys, db, "--forecast", "H200-SXM")
    [suite] = [line for line in forecast.splitlines() if line.startswith("GPU time over")]
    assert suite.endswith("forecast)") and "H200-SXM" in suite


def test_a_kernel_above_its_roof_is_flagged_in_every_format(tmp_path, capsys) -> None:
    """inspect says 'above roof!' of a figure no roof allows; compare printed it as plain."""
    proxy = Work({"fp32": 1e6}, {"dram": 1e9}, {A100: 85.0, H100: 130.0})  # a proxy byte count
    kernels = {**KERNELS, "copy": proxy}
    db = two_cards(tmp_path, (6, 6), a100_kernels=kernels, h100_kernels=kernels)
    flagged = {(r["kernel"], r["device"]) for r in rows(capsys, db) if r["above_roof"]}
    assert flagged == {("copy", H100)}
    code, out, _ = invoke(capsys, db)
    assert code == 0
    flagged_lines = [row for row in out.splitlines() if "above roof!" in row]
    assert len(flagged_lines) == 1 and flagged_lines[0].split()[:2] == ["copy", H100]


def test_a_chart_into_a_missing_folder_is_refused_before_the_table(capsys, db, tmp_path) -> None:
    """The whole table was printed, then the chart failed: exit 2 after a full answer."""
    missing = tmp_path / "charts" / "roof.svg"
    code, out, err = invoke(capsys, db, "--chart", str(missing))
    assert code == 2 and out == ""
    assert f"--chart: the folder {missing.parent} does not exist" in err


def test_a_kernel_that_kept_up_then_fell_on_the_card_is_not_the_cards(tmp_path, capsys) -> None:
    """The GEMV kept up on its first two H100 nights and fell 25% on the next four: the gate
    confirmed that fall, the digest counted it as kept up, and compare said "did not keep up"."""
    url = two_cards(tmp_path, (30, 2))
    engine = open_store(url)
    try:
        fallen = {**KERNELS, "gemv": Work({"fp32": 5e8}, {"dram": 1e9}, {H100: 63.0})}
        store(engine, nights(H100, 4, start=32, kernels=fallen), datasheet(H100))
    finally:
        engine.dispose()
    by = {(r["kernel"], r["device"]): r for r in rows(capsys, url)}
    assert by["gemv", H100]["keeping"] == "fell-since"
    assert by["gemv", H100]["percent_of_roof"] == pytest.approx(63.0, rel=0.01)
    assert by["gemm", H100]["keeping"] == "not-kept-up"  # 50% from its first night there
    code, out, _ = invoke(capsys, url, "--format", "text")
    assert code == 0 and "kept up, then fell on this card" in out
