"""The ``/digest`` page lists every section its headline counts, as ``roofguard digest --html``.

The page counted time regressions, binding flips, vanished kernels and unresolved time
regressions in its headline and listed none of them ("None." under every section).
"""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta

from factories import time_only_runs


def _table(page: str, name: str) -> str:
    """The text of the table ``id=name`` of ``page``, its markup dropped."""
    found = re.search(rf'<table id="{name}">(.*?)</table>', page, re.S)
    assert found, f"no table {name}"
    return html.unescape(re.sub(r"<[^>]+>", " ", found.group(1)))


def test_the_page_lists_time_regressions_and_split_kernels_of_benchmarks_timed_alone(
    service, repo
) -> None:
    token = service.token(repo)
    start = datetime.now(UTC) - timedelta(days=9)
    for run in time_only_runs(repo=repo, start=start):
        assert service.upload(run, token).status_code in (200, 201)
    page = service.client.get("/digest", params={"repo": repo}).text
    headline = re.search(r'<p id="headline"><strong>(.*?)</strong>', page).group(1)
    assert headline.startswith("1 time regression, 0 new regressions")
    assert "1 vanished or split kernel" in headline
    assert headline.endswith("1 unresolved time regression")
    slower = _table(page, "time-regressions")
    assert "BM_plain_0" in slower and "200 → 400 µs (2.00×)" in slower
    assert "split into 2: BM_plain_2a, BM_plain_2b" in _table(page, "vanished")
    assert "BM_plain_0" in _table(page, "unresolved-time")
