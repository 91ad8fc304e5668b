"""The dashboard in a real headless Chromium (Selenium): what a person sees on the pages.

Needs the Debian packages ``chromium`` and ``chromium-driver``; skips with the reason when
they are absent. Screenshots are kept under ``test-artifacts/`` (gitignored) for review.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from factories import falling_gemm_runs, make_kernel, make_run, time_only_runs
from svc_helpers import Service, start_live

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts"
NAME = "decode_gemv<half, 128>&<script>alert('x')</script>"

pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
    reason="headless browser test needs /usr/bin/chromium and /usr/bin/chromedriver "
    "(apt-get install -y chromium chromium-driver)",
)


@pytest.fixture(scope="module")  # one Chromium for the module: each test opens its own server
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as DriverService

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,1600",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # the console, to read
    driver = webdriver.Chrome(options=options, service=DriverService(str(CHROMEDRIVER)))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def seed(service: Service, repo: str) -> int:
    token = service.token(repo)
    start = datetime.now(UTC) - timedelta(days=10)
    run_id = 0
    for night in range(10):
        slow = 1.4 if night >= 8 else 1.0
        kernels = [
            make_kernel(NAME, key="decode_gemv", time_s=1e-3 * slow),
            make_kernel("rmsnorm", dram_bytes=2e9, time_s=8e-4),
        ]
        run = make_run(
            repo=repo,
            commit=f"{night:07x}cc",
            timestamp=start + timedelta(days=night),
            kernels=kernels,
        )
        run_id = service.upload(run, token).json()["run_id"]
    return int(run_id)


def heading_after_click(driver, starts: str) -> str:
    """The new page's h1, once it starts with ``starts``.

    A click starts a navigation and may return before it ends (seen on a loaded CI machine:
    no h1 yet), so wait for the new page rather than read the old or a half-loaded one.
    Chromium may also report the old page's h1 as "Node with given id does not belong to the
    document", a plain ``WebDriverException`` rather than a stale element: the wait reads
    again, and a page that never arrives still fails (a timeout) after 30 s.
    """
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

    arrived = expected_conditions.text_to_be_present_in_element((By.TAG_NAME, "h1"), starts)
    WebDriverWait(driver, 30, ignored_exceptions=(WebDriverException,)).until(arrived)
    return str(driver.find_element(By.TAG_NAME, "h1").text)


def shot(driver, name: str) -> Path:
    """``name``'s screenshot in ``ARTIFACTS``, written whole before it takes that name.

    A test's SQLite and PostgreSQL runs go on two workers at once and shoot the same name:
    one truncated the file while the other read its size (0 bytes, a failed CI run).
    """
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    own = path.with_name(f"{path.stem}.{os.getpid()}{path.suffix}")
    assert driver.save_screenshot(str(own)), f"no screenshot written to {own}"
    assert own.stat().st_size > 10_000
    os.replace(own, path)
    return path


def test_verdict_and_kernel_pages_in_chromium(service, repo, browser) -> None:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    run_id = seed(service, repo)
    live = start_live(service.app)
    try:
        browser.get(f"{live.url}/runs/{run_id}")
        assert browser.title == f"run {run_id} · {repo} · roofguard"
        heading = browser.find_element(By.TAG_NAME, "h1").text
        assert heading.startswith(f"Run {run_id}") and heading.split()[-1] in (
            "pass",
            "warn",
            "fail",
        )
        chart = browser.find_element(By.CSS_SELECTOR, "figure#roofline svg")
        assert chart.is_displayed() and chart.size["width"] > 300 and chart.size["height"] > 200
        kernels = browser.find_element(By.ID, "kernel-table").text
        assert NAME in kernels and "rmsnorm" in kernels  # the name as written, not as markup
        assert "1.00 → 1.40 ms (1.40×)" in kernels  # its time at baseline and now, as the comment
        story = browser.find_element(By.ID, "time-story").text
        assert story.startswith("GPU time ") and f"slowest: {NAME} 1.00 → 1.40 ms" in story
        with pytest.raises(NoAlertPresentException):
            browser.switch_to.alert.text  # noqa: B018 - the kernel name's <script> never ran
        shot(browser, "run-page.png")

        browser.find_element(By.LINK_TEXT, NAME).click()
        assert heading_after_click(browser, "Kernel") == f"Kernel {NAME}"
        trend = browser.find_elements(By.CSS_SELECTOR, "section.device figure.chart svg")
        assert len(trend) == 1 and trend[0].is_displayed()
        rows = browser.find_elements(By.CSS_SELECTOR, "#history-table tbody tr")
        assert len(rows) == 10 and rows[0].text.startswith(str(run_id))
        shot(browser, "kernel-page.png")
    finally:
        live.stop()


CUTLASS = (
    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_h161616gemm_{0}x{0}_128x2_tn_align8>"
    "(cutlass_80_wmma_tensorop_h161616gemm_{0}x{0}_128x2_tn_align8::Params)"
)


def test_start_page_not_found_and_long_names_in_chromium(service, repo, browser) -> None:
    from selenium.webdriver.common.by import By

    last = seed(service, repo)
    kernels = [make_kernel(CUTLASS.format(n), key=f"cutlass{n}", time_s=1e-3) for n in (32, 64)]
    run = make_run(repo=repo, commit="abcdef1234", timestamp=datetime.now(UTC), kernels=kernels)
    cutlass_run = service.upload(run, service.token(repo)).json()["run_id"]
    live = start_live(service.app)
    try:
        browser.get(f"{live.url}/?repo={repo}")  # the PostgreSQL database is shared
        assert browser.title == "recent runs · roofguard"
        rows = browser.find_elements(By.CSS_SELECTOR, "#runs tbody tr")
        assert len(rows) == 11 and rows[0].text.startswith(str(cutlass_run))
        assert repo in rows[1].text and "nightly" in rows[1].text and "H100-SXM5" in rows[1].text
        shot(browser, "start-page.png")
        rows[1].find_element(By.LINK_TEXT, str(last)).click()
        assert heading_after_click(browser, f"Run {last}").startswith(f"Run {last}")

        browser.get(f"{live.url}/runs/999")
        assert browser.find_element(By.TAG_NAME, "h1").text == "Not found"
        shot(browser, "not-found.png")

        browser.get(f"{live.url}/runs/{cutlass_run}")
        svg = browser.find_element(By.CSS_SELECTOR, "figure#roofline svg")
        labels = svg.find_elements(By.CSS_SELECTOR, "g[id^='label:'] text")
        assert len(labels) == 2
        right = svg.rect["x"] + svg.rect["width"]
        for label in labels:  # cut in the middle: every label stays inside the chart
            assert (
                svg.rect["x"] <= label.rect["x"] and label.rect["x"] + label.rect["width"] <= right
            )
        tips = [t.get_attribute("textContent") for t in svg.find_elements(By.TAG_NAME, "title")]
        assert sorted(t for t in tips if "cutlass" in t) == sorted(k.name for k in kernels)
        shot(browser, "long-names.png")
    finally:
        live.stop()


def test_a_binding_change_reads_as_the_drop_it_is_in_chromium(service, repo, browser) -> None:
    from selenium.webdriver.common.by import By

    token = service.token(repo)
    start = datetime.now(UTC) - timedelta(days=10)
    for run in falling_gemm_runs(repo=repo, start=start, nights=10, fall_at=6):
        service.upload(run, token)
    live = start_live(service.app)
    try:
        browser.get(f"{live.url}/kernels?repo={repo}&key=gemm_bf16_128x128")
        svg = browser.find_element(By.CSS_SELECTOR, "section.device figure.chart svg")
        marker = svg.find_element(By.CSS_SELECTOR, "g[id='binding:0']")
        assert marker.is_displayed()
        label = svg.find_element(By.CSS_SELECTOR, "g[id='binding-label:0']")
        assert label.get_attribute("textContent").strip() == "tensor_bf16 → fp32"
        rows = browser.find_elements(By.CSS_SELECTOR, "#history-table tbody tr")
        assert len(rows) == 10
        assert "4.7 % of tensor_bf16 (70.0 % of fp32)" in rows[0].text
        assert "70.0 %" in rows[-1].text and "of tensor_bf16" not in rows[-1].text
        shot(browser, "binding-change.png")
    finally:
        live.stop()


def test_two_stored_runs_compared_in_chromium(service, repo, browser) -> None:
    from selenium.webdriver.common.by import By

    token = service.token(repo)
    start = datetime.now(UTC) - timedelta(days=10)
    runs = falling_gemm_runs(repo=repo, start=start, nights=8, fall_at=7)
    ids = [service.upload(run, token).json()["run_id"] for run in runs]
    live = start_live(service.app)
    try:
        browser.get(f"{live.url}/runs/{ids[-1]}")
        form = browser.find_element(By.ID, "compare-with")
        form.find_element(By.NAME, "base").send_keys(str(ids[0]))
        form.find_element(By.TAG_NAME, "button").click()
        assert heading_after_click(browser, "Two runs") == "Two runs"
        rows = browser.find_elements(By.CSS_SELECTOR, "#compare-runs tbody tr")
        assert len(rows) == 2
        assert "4.7% of tensor_bf16 (70.0% of fp32)" in rows[0].text
        assert rows[0].text.endswith("slower") and "(14.8×)" in rows[0].text
        shot(browser, "compare-runs.png")
    finally:
        live.stop()


def test_the_digest_page_shows_what_its_headline_counts_in_chromium(service, repo, browser):
    """Benchmarks timed alone: a 2x slowdown and a split kernel, once read "None." throughout."""
    from selenium.webdriver.common.by import By

    token = service.token(repo)
    for run in time_only_runs(repo=repo, start=datetime.now(UTC) - timedelta(days=9)):
        service.upload(run, token)
    live = start_live(service.app)
    try:
        browser.get(f"{live.url}/digest?repo={repo}")
        headline = browser.find_element(By.ID, "headline").text
        assert headline.startswith("1 time regression") and "1 vanished or split" in headline
        for table, text in (
            ("time-regressions", "BM_plain_0 H100-SXM5 200 → 400 µs (2.00×)"),
            ("vanished", "split into 2: BM_plain_2a, BM_plain_2b"),
            ("unresolved-time", "BM_plain_0 H100-SXM5 200 → 400 µs (2.00×)"),
        ):
            shown = browser.find_element(By.ID, table)
            assert shown.is_displayed() and text in shown.text, table
        shot(browser, "digest-page.png")
    finally:
        live.stop()


def test_the_pages_log_no_console_error_in_chromium(service, repo, browser) -> None:
    """Every page logged ``GET /favicon.ico 404``: the pages declared no icon."""
    import time

    run_id = seed(service, repo)
    live = start_live(service.app)
    try:
        browser.get_log("browser")  # what the module's earlier tests left there
        pages = ["/", f"/runs/{run_id}", f"/kernels?repo={repo}&key=decode_gemv", "/search?q=rms"]
        for path in [*pages, f"/compare/runs?base={run_id - 1}&head={run_id}"]:
            browser.get(f"{live.url}{path}")
            time.sleep(0.5)  # the icon is asked for once the page has loaded
            severe = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
            assert severe == [], (path, severe)
    finally:
        live.stop()
