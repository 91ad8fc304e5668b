"""Dashboard pages (server-rendered, autoescaped) and the OpenAPI document (golden)."""

from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from factories import falling_gemm_runs, make_kernel, make_run
from svc_helpers import Service, auth

from collectors.schema import KernelRecord
from service.cli import run as cli
from service.pipeline.check import NEVER_CHECKED
from service.store.views import VARIANTS_KEPT

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "openapi.json"
GEMM = "gemm_bf16_128x128"
NASTY = "gemv<half, 4>&<script>alert(1)</script>"


def upload_night(
    service: Service,
    repo: str,
    night: int,
    *,
    token: str,
    start: datetime,
    kernels: list[KernelRecord],
    device: str | None = None,
) -> dict:
    """Upload night ``night`` after ``start`` (its own commit); the service's answer."""
    run = make_run(
        repo=repo,
        commit=f"{night:07x}bb",
        timestamp=start + timedelta(days=night),
        kernels=kernels,
        device=device,
    )
    answer = service.upload(run, token)
    assert answer.status_code in (200, 201), answer.text
    return dict(answer.json())


def seed(service: Service, repo: str, nights: int = 6, device: str | None = None) -> list[int]:
    token = service.token(repo)
    start = datetime.now(UTC) - timedelta(days=nights)
    ids = []
    for night in range(nights):
        kernels = [
            make_kernel(NASTY, key="gemv_half", time_s=1e-3 * (1.5 if night > 3 else 1)),
            make_kernel("reduce", dram_bytes=8e9, time_s=4e-3),
        ]
        answer = upload_night(
            service, repo, night, token=token, start=start, kernels=kernels, device=device
        )
        ids.append(answer["run_id"])
    return ids


def test_run_page_shows_the_verdict_with_its_roofline_chart(service, repo) -> None:
    run_id = seed(service, repo)[-1]
    page = service.client.get(f"/runs/{run_id}")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    assert f"Run {run_id}" in html and repo in html
    assert '<figure class="chart" id="roofline"><svg' in html
    assert "gemv&lt;half, 4&gt;&amp;&lt;script&gt;" in html and "<script>" not in html
    assert f"/kernels?repo={repo}&amp;key=gemv_half" in html
    chart = service.client.get(f"/runs/{run_id}/roofline.svg")
    assert chart.headers["content-type"] == "image/svg+xml" and chart.text.lstrip().startswith(
        "<?xml"
    )
    assert service.client.get("/runs/99999").status_code == 404


def test_kernel_page_shows_its_trend_per_device_and_across_cards(service, repo) -> None:
    seed(service, repo, nights=3, device="NVIDIA A100-SXM4-80GB")
    ids = seed(service, repo)
    html = service.client.get("/kernels", params={"repo": repo, "key": "gemv_half"}).text
    assert "gemv&lt;half, 4&gt;" in html and "<script>" not in html
    assert html.count('<figure class="chart" title="gemv&lt;half, 4&gt;') == 3
    assert "<h2>A100-SXM4-80GB</h2>" in html and "<h2>H100-SXM5</h2>" in html
    # First, both cards on one chart: percent of roof carried across the swap.
    assert html.index("<h2>every card</h2>") < html.index("<h2>A100-SXM4-80GB</h2>")
    assert 'id="series:A100-SXM4-80GB"' in html and 'id="series:H100-SXM5"' in html
    # The H100 ran six nights, the A100 joined three nights ago: its first night is marked.
    assert 'id="card:0"' in html and "first night on A100-SXM4-80GB" in html
    assert f'<a href="/runs/{ids[-1]}">' in html and "9 nightly measurements on 2 device(s)" in html
    missing = service.client.get("/kernels", params={"repo": repo, "key": "nope"})
    assert missing.status_code == 404 and "kernel nope" in missing.json()["detail"]


def test_the_kernel_page_without_a_kernel_is_the_search(service) -> None:
    """A bare /kernels answered a browser with FastAPI's JSON 422; an empty key a 422 page."""
    empty = ({"repo": "acme/x", "key": ""}, {"repo": "", "key": "gemv"}, {"repo": "", "key": ""})
    for params in ({}, {"repo": "acme/x"}, {"key": "gemv"}, *empty):
        page = service.client.get("/kernels", params=params, follow_redirects=False)
        assert page.status_code == 303 and page.headers["location"] == "/search"
    assert "search" in service.client.get("/kernels").text.lower()


def test_search_finds_kernels_by_part_of_the_name(service, repo) -> None:
    seed(service, repo, nights=1)
    html = service.client.get("/search", params={"q": "HALF", "repo": repo}).text
    assert "1 kernel(s) match" in html and "key=gemv_half" in html
    assert "0 kernel(s) match" in service.client.get("/search", params={"q": "100%_"}).text


def test_start_page_lists_the_recent_runs_with_links(service, repo) -> None:
    ids = seed(service, repo, nights=3)
    token = service.token(repo)
    pr_run = make_run(
        repo=repo,
        commit="feedface99",
        branch="topic",
        kind="pr",
        pull_request=7,
        timestamp=datetime.now(UTC),
        kernels=[make_kernel(NASTY, key="gemv_half", time_s=3e-3)],
        runner="gpu-runner-07",
    )
    pr_id = service.upload(pr_run, token).json()["run_id"]
    assert "H100-SXM5 (runner gpu-runner-07)" in service.client.get(f"/runs/{pr_id}").text
    page = service.client.get("/", params={"repo": repo})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    rows = page.text.split('<table id="runs">')[1].split("</table>")[0].split("<tr>")[2:]
    assert len(rows) == 4 and f'href="/runs/{pr_id}"' in rows[0]  # newest first
    assert f'href="/runs/{ids[0]}"' in rows[-1]
    newest = rows[0]
    device = 'H100-SXM5 <span class="muted">gpu-runner-07</span>'  # a swap shows in the list
    for text in (repo, "pr <span", "#7", "feedface99", "topic", device, "conclusion "):
        assert text in newest, text
    assert re.search(r'class="conclusion (pass|warn|fail)">(pass|warn|fail)</a>', newest)
    # the three nights judged nothing (fewer runs than the gate needs): not a pass
    for night in rows[1:]:
        assert '<a href="/runs/' in night and 'class="conclusion not-judged">not judged' in night
    assert re.search(r"<td>\d{4}-\d\d-\d\d \d\d:\d\d</td>", newest)
    assert f'href="/?repo={repo}"' in newest  # jinja's urlencode keeps the slash
    everything = service.client.get("/").text
    assert f'href="/runs/{pr_id}"' in everything and 'name="q"' in everything
    nightly = service.client.get("/", params={"repo": repo, "kind": "nightly"}).text
    assert f'href="/runs/{pr_id}"' not in nightly and f'href="/runs/{ids[-1]}"' in nightly
    # a filter that matches nothing says so, not "No runs stored yet"
    bogus = service.client.get("/", params={"repo": repo, "kind": "nighty"}).text
    assert "No runs stored yet" not in bogus
    assert f"No <strong>nighty</strong> runs stored for <strong>{repo}</strong> (kinds:" in bogus


def test_a_missing_page_is_html_for_a_browser_and_json_for_the_api(service) -> None:
    browser = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    page = service.client.get("/runs/999", headers=browser)
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "<h1>Not found</h1>" in page.text and "999" in page.text
    assert '<a href="/">Recent runs</a>' in page.text
    api = service.client.get("/runs/999", headers={"Accept": "application/json"})
    assert api.status_code == 404 and "999" in api.json()["detail"]


def test_kernel_trend_is_drawn_from_nightly_runs_only(service, repo) -> None:
    seed(service, repo, nights=4)
    token = service.token(repo)
    for n in range(3):  # PR runs of wildly different speed must not zig-zag the trend
        pr_run = make_run(
            repo=repo,
            commit=f"pr{n:05x}aa",
            branch="topic",
            kind="pr",
            pull_request=10 + n,
            timestamp=datetime.now(UTC) - timedelta(hours=n),
            kernels=[make_kernel(NASTY, key="gemv_half", time_s=9e-3)],
        )
        service.upload(pr_run, token)
    html = service.client.get("/kernels", params={"repo": repo, "key": "gemv_half"}).text
    assert "4 nightly measurements on 1 device(s)" in html
    series = html.split('<g id="series">')[1].split("</g>\n  </g>")[0]
    assert series.count("<use ") == 4  # one marker per nightly run
    history = html.split('<table id="history-table">')[1].split("</table>")[0]
    assert "<td>nightly</td>" in history and "<td>pr</td>" not in history
    apart = html.split('<table id="other-runs">')[1].split("</table>")[0]
    assert apart.count("<td>pr</td>") == 3 and "(not in the trend)" in html


def test_long_kernel_names_are_cut_in_the_middle_with_the_full_name_as_tooltip(
    service, repo
) -> None:
    cutlass = (
        "void cutlass::Kernel2<cutlass_80_wmma_tensorop_h161616gemm_{}x{}_128x2_tn_align8>"
        "(cutlass_80_wmma_tensorop_h161616gemm_32x32_128x2_tn_align8::Params)"
    )
    names = [cutlass.format(32, 32), cutlass.format(64, 64)]  # they differ in the middle only
    run = make_run(
        repo=repo,
        timestamp=datetime.now(UTC),
        kernels=[make_kernel(n, key=f"k{i}", time_s=1e-3) for i, n in enumerate(names)],
    )
    run_id = service.upload(run, service.token(repo)).json()["run_id"]
    chart = service.client.get(f"/runs/{run_id}").text.split('id="roofline">')[1]
    chart = chart.split("</figure>")[0]
    labels = re.findall(r'<g id="label:([^"]*)">\s*<title>([^<]*)</title>', chart)
    assert len(labels) == 2 and len({short for short, _ in labels}) == 2
    for short, full in labels:
        assert len(html.unescape(short)) <= 48 and "…" in short
        assert html.unescape(full) in names
        # the return type and the parameter list go first (render.names), the name stays
        assert html.unescape(short).startswith("cutlass::Kernel2<")


def test_every_cut_label_has_its_tooltip_quotes_and_the_no_flops_strip_too(service, repo) -> None:
    """Matched as ``html.escape`` writes ids, a label holding ``'`` or ``"`` (matplotlib
    quotes and escapes those otherwise), or any in the no-FLOPs strip, had no tooltip."""
    names = {
        "q1": "it's_" + "c" * 60 + "_tail",
        "q2": 'say"hi"_' + "y" * 60 + "_end",
        "copy": "memcpy_" + "z" * 60 + "_async",
    }
    kernels = [
        make_kernel(name, key=key, time_s=1e-3, flops={} if key == "copy" else None)
        for key, name in names.items()
    ]
    run = make_run(repo=repo, timestamp=datetime.now(UTC), kernels=kernels)
    run_id = service.upload(run, service.token(repo)).json()["run_id"]
    page = service.client.get(f"/runs/{run_id}").text
    titles = {html.unescape(t) for t in re.findall(r"<title>([^<]*)</title>", page)}
    assert set(names.values()) <= titles
    assert "no-flops:label:" in page


def test_digest_page_summarises_the_last_week(service, repo) -> None:
    seed(service, repo, nights=10)
    html = service.client.get("/digest", params={"repo": repo}).text
    assert "Weekly digest" in html and repo in html
    assert "nightly measurements scanned" in html
    none = service.client.get("/digest", params={"repo": "acme/none"})  # test_api_digest_repo
    assert none.status_code == 404 and "no run of acme/none" in none.json()["detail"]
    assert "<title>digest · roofguard</title>" in service.client.get("/digest").text


def test_the_digest_and_compare_pages_are_kept_until_a_run_is_stored(service, repo) -> None:
    """Both read every nightly measurement and need no token: rendered on each request, four
    reloads of a 40,000-kernel repository's digest slowed a 6-kernel upload to 9.9 s."""
    newest = seed(service, repo, nights=10)[-1]
    pages = {"digest": ("/digest", {"repo": repo}), "compare": ("/compare", {"repo": repo})}
    for path, params in pages.values():
        assert "roofguard" in service.client.get(path, params=params).text
    views = sa.text("UPDATE rendered_views SET body = 'kept: ' || view WHERE run_id = :newest")
    with service.engine.begin() as conn:
        assert conn.execute(views, {"newest": newest}).rowcount == 2
    for view, (path, params) in pages.items():
        assert service.client.get(path, params=params).text.startswith(f"kept: {view}:")
    seed(service, repo, nights=11)  # one night more: the history moved on
    for path, params in pages.values():
        assert not service.client.get(path, params=params).text.startswith("kept: ")


def test_each_form_of_the_compare_page_is_kept_on_its_own(service, repo) -> None:
    """One copy a repository: two forms taking turns were rendered on every request (2.6-8 s
    each for 33 runs of 30 kernels)."""
    newest = seed(service, repo, nights=10)[-1]
    forms = [{"repo": repo}, {"repo": repo, "kernel": "gemv"}, {"repo": repo, "kernel": "reduce"}]
    for params in forms:
        assert "roofguard" in service.client.get("/compare", params=params).text
    views = sa.text("UPDATE rendered_views SET body = 'kept ' || view WHERE run_id = :newest")
    with service.engine.begin() as conn:
        conn.execute(views, {"newest": newest})
    bodies = [service.client.get("/compare", params=params).text for params in forms * 2]
    assert all(b.startswith("kept compare") for b in bodies), "a form was rendered again"
    assert len(set(bodies)) == len(forms)


def test_the_forms_kept_of_a_page_are_bounded(service, repo) -> None:
    newest = seed(service, repo, nights=3)[-1]
    for i in range(VARIANTS_KEPT + 3):
        page = service.client.get("/compare", params={"repo": repo, "kernel": f"reduce|z{i}"})
        assert page.status_code == 200
    count = sa.text("SELECT count(*) FROM rendered_views WHERE run_id = :newest")
    with service.engine.connect() as conn:
        assert conn.execute(count, {"newest": newest}).scalar_one() == VARIANTS_KEPT


def test_openapi_document_is_golden(service, golden) -> None:
    document = service.client.get("/openapi.json").json()
    assert "/api/v1/runs" in document["paths"] and "/runs/{run_id}" not in document["paths"]
    upload = document["paths"]["/api/v1/runs"]["post"]
    assert set(upload["requestBody"]["content"]) == {"application/json", "multipart/form-data"}
    golden(GOLDEN, json.dumps(document, indent=2, sort_keys=True) + "\n")


@pytest.mark.parametrize("stopped_days_ago", [15, 120])
def test_digest_page_of_a_stalled_repository_names_the_device_not_measured(
    service, repo, stopped_days_ago: int
) -> None:
    """Nights that stopped 15 days ago, or 120 (past the lookback, no row read).

    The page's digest had no device and zero of all; 120 days on, "No nightly runs in the
    last 7 days", as a quiet week's.
    """
    token = service.token(repo)
    start = datetime.now(UTC) - timedelta(days=stopped_days_ago + 5)
    for night in range(6):
        kernels = [make_kernel("reduce", dram_bytes=8e9, time_s=4e-3)]
        upload_night(service, repo, night, token=token, start=start, kernels=kernels)
    html = service.client.get("/digest", params={"repo": repo}).text
    assert '<h2 id="unmeasured">Devices not measured (1)</h2>' in html
    assert "<strong>1 device not measured, 0 time regressions" in html
    last = (start + timedelta(days=5)).strftime("%Y-%m-%d")
    assert f"<td>{last}</td><td><code>0000005bb</code></td>" in html


def test_kernel_and_digest_pages_show_a_binding_change_like_for_like(service, repo) -> None:
    """A GEMM that fell off the tensor cores drops from 70% to 4.7% of its tensor_bf16 roof."""
    token = service.token(repo)
    start = datetime.now(UTC) - timedelta(days=10)
    for run in falling_gemm_runs(repo=repo, start=start, nights=10, fall_at=6):
        assert service.upload(run, token).status_code in (200, 201)
    page = service.client.get("/kernels", params={"repo": repo, "key": GEMM}).text
    table = page.split('id="history-table"')[1]
    assert table.count("4.7 % <span") == 4 and table.count("70.0 %</td>") == 6
    assert "of tensor_bf16 (70.0 % of fp32)" in table
    assert 'id="binding:0"' in page and "tensor_bf16 → fp32" in page
    digest = service.client.get("/digest", params={"repo": repo}).text
    assert GEMM in digest and "-93.2 %" in digest and "██▁▁▁▁" in digest, "the fall is listed"


def test_compare_runs_page_reads_two_stored_runs_like_for_like(service, repo) -> None:
    token = service.token(repo)
    start = datetime.now(UTC) - timedelta(days=10)
    runs = falling_gemm_runs(repo=repo, start=start, nights=8, fall_at=7)
    ids = [service.upload(run, token).json()["run_id"] for run in runs]
    page = service.client.get("/compare/runs", params={"base": ids[0], "head": ids[-1]})
    assert page.status_code == 200
    table = page.text.split('id="compare-runs"')[1]
    rows = re.findall(r"<tr class=\"(\w+)\">(.*?)</tr>", table, re.S)
    assert [status for status, _ in rows] == ["slower", "unchanged"]
    gemm = html.unescape(rows[0][1])
    assert GEMM in gemm and "(14.8×)" in gemm and "tensor_bf16 → fp32" in gemm
    assert "70.0% → 4.7% of tensor_bf16 (70.0% of fp32)" in gemm
    assert "1 slower, 0 new, 0 missing, 0 faster, 1 unchanged" in page.text
    run_page = service.client.get(f"/runs/{ids[-1]}").text
    assert 'action="/compare/runs"' in run_page and f'name="head" value="{ids[-1]}"' in run_page
    kernels = run_page.split('id="kernel-table"')[1]  # the run's verdict, like for like too
    assert '4.7 % <span class="muted">of tensor_bf16 (70.0 % of fp32)</span>' in kernels
    story = run_page.split('<p id="time-story"><strong>')[1].split("</strong>")[0]
    assert story.startswith("GPU time ") and "slowest: gemm_bf16_128x128 " in story
    assert "(14.8×), bound by fp32 instead of tensor_bf16 (4.7% of its tensor_bf16 roof)" in story
    assert service.client.get("/compare/runs").status_code == 200  # the form alone
    missing = service.client.get("/compare/runs", params={"base": 999999, "head": ids[0]})
    assert missing.status_code == 404 and "run 999999" in missing.text


def test_run_page_says_when_its_baseline_was_too_short_to_judge(service, repo) -> None:
    """As the comment's headline does: the run's "pass" judged nothing."""
    first, second = seed(service, repo, nights=2)
    pages = [service.client.get(f"/runs/{run_id}").text for run_id in (first, second)]
    assert "no baseline yet: 2 kernels stored, nothing judged." in pages[0]
    assert "baseline too short: 1 of the 3 runs the gate needs; 2 kernels stored" in pages[1]
    for page in pages:  # the title says it as the list does
        assert '<span class="conclusion not-judged">not judged</span></h1>' in page
    judged = service.client.get(f"/runs/{seed(service, repo, nights=4)[-1]}").text
    assert 'id="not-judged"' not in judged and "not judged</span></h1>" not in judged


def test_run_page_marks_a_percent_of_roof_from_part_of_the_work(service, repo) -> None:
    """A kernel placed without a precision its roof has a peak for: at least this percent.

    The terminal and the comment read "≥ 63.2%"; the run page read "63.2 %".
    """
    token = service.token(repo)
    kernels = [make_kernel("gemm_fp4", flops={"tensor_fp4": 2e12}, time_s=1e-3)]
    answer = upload_night(service, repo, 0, token=token, start=datetime.now(UTC), kernels=kernels)
    html = service.client.get(f"/runs/{answer['run_id']}").text
    verdict = service.client.get(f"/api/v1/runs/{answer['run_id']}/verdict", headers=auth(token))
    [row] = verdict.json()["verdict"]["kernels"]
    assert row["percent_is_lower_bound"]
    assert re.search(r'<td class="num">≥ [0-9.]+ ?%</td>', html)


def test_a_run_judged_again_reads_the_baseline_it_was_judged_against(service, repo) -> None:
    """Its page and its verdict do not count the nights stored after it as its baseline."""
    ids = seed(service, repo, nights=5)
    token = service.token(repo)
    again = service.client.get(f"/api/v1/runs/{ids[1]}/verdict", headers=auth(token)).json()
    baseline = again["verdict"]["baseline"]
    assert (baseline["runs"], baseline["commits"]) == (1, ["0000000bb", "0000000bb"])
    newest = service.client.get(f"/api/v1/runs/{ids[-1]}/verdict", headers=auth(token)).json()
    assert newest["verdict"]["baseline"]["runs"] == 4


def test_another_cards_history_judged_again_stops_where_it_first_did(service, repo) -> None:
    """A new card's first night, judged against the H100's nights, keeps that baseline."""
    token = service.token(repo)
    start = datetime.now(UTC) - timedelta(days=20)

    def night(n: int, device: str | None = None) -> dict:
        kernels = [make_kernel("reduce", dram_bytes=8e9, time_s=4e-3 * (1 + 0.01 * (n % 3)))]
        answer = upload_night(
            service, repo, n, token=token, start=start, kernels=kernels, device=device
        )
        assert answer["created"], "each night is new"
        return answer

    for n in range(6):
        night(n)
    first = night(6, device="NVIDIA H200")
    assert first["verdict"]["baseline"]["device"] == "H100-SXM5"
    for n in range(7, 10):
        night(n)
    path = f"/api/v1/runs/{first['run_id']}/verdict"
    again = service.client.get(path, headers=auth(token)).json()
    assert again["verdict"]["baseline"] == first["verdict"]["baseline"]


def test_a_night_stored_by_ingest_is_judged_on_its_page_not_passed(
    service, repo, db_url, tmp_path
) -> None:
    """ingest stores no verdict: "no findings" there is not a pass with every kernel unchanged."""
    for night in range(1, 7):  # night 6: gemm_03 twice as slow
        rows = "".join(
            f"gemm_{i:02d},{0.001 * (1 + i) * (2 if (i, night) == (3, 6) else 1)},1e10,1e8,1\n"
            for i in range(5)
        )
        report = tmp_path / f"n{night}.csv"
        report.write_text("name,duration_s,flops_fp32,bytes_dram,launches\n" + rows)
        when = f"2026-11-0{night}T02:00:00Z"
        args = ["--repo", repo, "--commit", f"c{night}", "--branch", "main", "--kind", "nightly"]
        args += ["--device", "H100-SXM5", "--timestamp", when, "--db", db_url]
        assert cli(["ingest", str(report), *args]) == 0
    token = auth(service.token(repo))
    runs = service.client.get("/api/v1/runs", params={"repo": repo}, headers=token).json()["data"]
    assert [r["judged"] for r in runs] == [None] * 6  # stored without a check
    listed = service.client.get("/", params={"repo": repo}).text
    assert listed.count('class="conclusion not-judged">not judged') == 6
    newest = runs[0]["id"]
    page = service.client.get(f"/runs/{newest}").text
    assert "pass</span></h1>" not in page and f"<li>{NEVER_CHECKED}</li>" in page
    verdict = service.client.get(f"/api/v1/runs/{newest}/verdict", headers=token).json()
    statuses = {k["key"]: k["status"] for k in verdict["verdict"]["kernels"]}
    assert statuses.pop("gemm_03") in ("regressed", "suspect")
    assert set(statuses.values()) == {"unchanged"} and NEVER_CHECKED in verdict["verdict"]["notes"]
