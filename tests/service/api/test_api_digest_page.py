"""The ``/digest`` page lists every section its headline counts, as ``roofguard digest --html``.

The page counted time regressions, binding flips, vanished kernels and unresolved time
regressions in its headline and listed none of them ("None." under every section), and it
listed a change a maintainer accepted as a regression.
"""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta

from factories import falling_gemm_runs, time_only_runs

from service.config import RoofguardConfig
from service.store.baselines import accept_baseline
from service.store.db import session_scope

GEMM = "gemm_bf16_128x128"


def _table(page: str, name: str) -> str:
    """The text of the table ``id=name`` of ``page``, its markup dropped."""
    found = re.search(rf'<table id="{name}">(.*?)</table>', page, re.S)
    assert found, f"no table {name}"
    return html.unescape(re.sub(r"<[^>]+>", " ", found.group(1)))


def _timed_alone_page(service, repo: str) -> tuple[str, str]:
    """The ``/digest`` page after 9 nights of benchmarks timed alone, and its headline."""
    token = service.token(repo)
    start = datetime.now(UTC) - timedelta(days=9)
    for run in time_only_runs(repo=repo, start=start):
        assert service.upload(run, token).status_code in (200, 201)
    page = service.client.get("/digest", params={"repo": repo}).text
    return page, re.search(r'<p id="headline"><strong>(.*?)</strong>', page).group(1)


def test_the_page_lists_time_regressions_and_split_kernels_of_benchmarks_timed_alone(
    service, repo
) -> None:
    page, headline = _timed_alone_page(service, repo)
    assert headline.startswith("1 time regression, 0 new regressions")
    assert "1 vanished or split kernel" in headline
    assert headline.endswith("1 unresolved time regression")
    slower = _table(page, "time-regressions")
    assert "BM_plain_0" in slower and "200 → 400 µs (2.00×)" in slower
    assert "split into 2: BM_plain_2a, BM_plain_2b" in _table(page, "vanished")
    assert "BM_plain_0" in _table(page, "unresolved-time")


def test_the_page_lists_an_accepted_change_apart_and_kernels_below_their_target(
    make_service, repo
) -> None:
    """A GEMM that fell off the tensor cores, accepted on its pull request before the merge."""
    config = RoofguardConfig.model_validate(
        {"rules": {"groups": [{"pattern": "gemm*", "name": "GEMMs", "target_percent": 50}]}}
    )
    service = make_service(config)
    token = service.token(repo)
    start = datetime.now(UTC) - timedelta(days=10)
    for run in falling_gemm_runs(repo=repo, start=start, nights=10, fall_at=6):
        assert service.upload(run, token).status_code in (200, 201)
    with session_scope(service.engine) as session:
        accept_baseline(
            session=session,
            repo=repo,
            kernel_key=GEMM,
            device="H100-SXM5",
            accepted_by="octocat",
            reason="fp32 on purpose <for now>",
            accepted_at=start + timedelta(days=5.5),
        )
    page = service.client.get("/digest", params={"repo": repo}).text
    assert '<h2 id="regressions">Regressions (0)</h2>' in page
    assert '<h2 id="unresolved">Unresolved regressions (0)</h2>' in page
    assert "0 time regressions" in page and "1 accepted change" in page
    accepted = _table(page, "accepted")
    assert GEMM in accepted and "-93.2 %" in accepted and "(14.8×)" in accepted
    assert "octocat" in accepted and "this card" in accepted
    assert "fp32 on purpose &lt;for now&gt;" in page, "the reason, escaped"
    assert "tensor_bf16 → fp32" in _table(page, "binding-flips"), "still a binding flip"
    assert "GEMMs" in _table(page, "below-target")


def test_the_page_leaves_out_the_kernels_the_config_ignores(make_service, repo) -> None:
    """``rules.ignore_kernels``: not judged, not listed, on the page as by ``roofguard digest``."""
    config = RoofguardConfig.model_validate({"rules": {"ignore_kernels": ["BM_plain_0"]}})
    service = make_service(config)
    page, headline = _timed_alone_page(service, repo)
    assert headline.startswith("0 time regressions, 0 new regressions")
    assert "BM_plain_0" not in page
    assert "split into 2: BM_plain_2a, BM_plain_2b" in _table(page, "vanished")
