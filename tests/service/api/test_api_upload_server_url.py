"""``roofguard upload --server`` given the API's path, or another URL, says what to give.

``--server http://host/api/v1`` (the API prefix included) failed with a bare
``HTTP 404: Not Found``: upload adds ``/api/v1/runs`` to the service's root URL itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from factories import make_kernel, make_run
from svc_helpers import Service, start_live

from service.cli import run


def _upload(server: str, token: str, repo: str, tmp_path: Path) -> int:
    report = tmp_path / "run.json"
    report.write_text(make_run(repo=None, kernels=[make_kernel("gemv")]).model_dump_json())
    argv = ["upload", str(report), "--server", server, "--token", token, "--repo", repo]
    argv += ["--output", str(tmp_path / "verdict.md")]
    return run([*argv, "--commit", "abc1234", "--kind", "nightly"])


@pytest.mark.parametrize("api", ["/api/v1", "/api/v1/", "/api/v1/runs"])
def test_the_apis_path_is_refused_naming_the_root(
    service: Service, repo: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], api: str
) -> None:
    live = start_live(service.app)
    try:
        token = service.token(repo)
        assert _upload(live.url + api, token, repo, tmp_path) == 2
        err = capsys.readouterr().err
        path = api.rstrip("/")
        assert f"give the service's root URL, without {path} " in err
        assert err.rstrip().endswith(f": {live.url}")
        assert _upload(live.url, token, repo, tmp_path) == 0  # the root it names uploads
    finally:
        live.stop()


def test_another_path_that_answers_404_says_to_check_the_url(
    service: Service, repo: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    live = start_live(service.app)
    try:
        assert _upload(live.url + "/roofguard", service.token(repo), repo, tmp_path) == 2
        err = capsys.readouterr().err
        assert "HTTP 404: Not Found; is --server the service's root URL" in err
    finally:
        live.stop()
