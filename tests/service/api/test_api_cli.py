"""``roofguard token``, ``roofguard upload`` against a live server, ``roofguard serve``."""

from __future__ import annotations

import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from factories import make_kernel, make_run
from svc_helpers import Service, free_port, start_live

from service.cli import run
from service.store.db import make_engine, migrate
from service.store.tables import ApiToken
from service.store.tokens import hash_token

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    engine = make_engine(url)
    migrate(engine)
    engine.dispose()
    return url


def test_token_create_list_revoke(sqlite_url, capsys) -> None:
    assert (
        run(
            [
                "token",
                "create",
                "--repo",
                "acme/kernels",
                "--write",
                "--name",
                "ci",
                "--db",
                sqlite_url,
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    token = out.splitlines()[-1]
    assert out == token + "\n" and token.startswith("rgt_") and len(token) > 40
    assert "not shown again" in err and token not in err
    engine = make_engine(sqlite_url)
    with engine.connect() as conn:
        stored = conn.execute(sa.select(ApiToken.__table__)).one()._mapping
    assert stored["token_hash"] == hash_token(token) and token not in str(dict(stored))
    assert run(["token", "list", "--db", sqlite_url]) == 0
    listing = capsys.readouterr().out
    assert "acme/kernels" in listing and "write" in listing and "active" in listing
    assert token not in listing
    assert run(["token", "revoke", str(stored["id"]), "--db", sqlite_url]) == 0
    assert "revoked" in capsys.readouterr().out
    run(["token", "list", "--db", sqlite_url])
    assert "revoked" in capsys.readouterr().out
    assert run(["token", "revoke", "999", "--db", sqlite_url]) == 2
    assert run(["token", "create", "--repo", "not-a-repo", "--db", sqlite_url]) == 2
    capsys.readouterr()
    # a name the upload API refuses: the token could never be used, and was created
    assert run(["token", "create", "--repo", "acme/ kernels", "--db", sqlite_url]) == 2
    assert "--repo: expected OWNER/NAME, got 'acme/ kernels'" in capsys.readouterr().err
    engine.dispose()


def test_serve_refuses_several_workers_on_sqlite(sqlite_url, capsys) -> None:
    assert run(["serve", "--workers", "2", "--db", sqlite_url]) == 2
    assert "--workers: several processes need PostgreSQL" in capsys.readouterr().err


def test_token_commands_refuse_an_unmigrated_store(tmp_path, capsys) -> None:
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    assert run(["token", "list", "--db", url]) == 2
    assert "roofguard db upgrade" in capsys.readouterr().err


def test_upload_command_writes_the_verdict(
    service: Service, repo, tmp_path, capsys, monkeypatch
) -> None:
    live = start_live(service.app)
    try:
        token = service.token(repo)
        report = tmp_path / "run.json"
        report.write_text(make_run(repo=None, kernels=[make_kernel("gemv")]).model_dump_json())
        out = tmp_path / "verdict.md"
        args = [
            "upload",
            str(report),
            "--server",
            live.url,
            "--token",
            token,
            "--repo",
            repo,
            "--commit",
            "abc1234",
            "--kind",
            "nightly",
            "--output",
            str(out),
        ]
        assert run(args) == 0
        assert "gemv" in out.read_text() and f"{live.url}/runs/" in out.read_text()
        assert "verdict (not judged) of run" in capsys.readouterr().err  # a first run: no pass
        assert run([*args[:-2], "--format", "json", "--output", str(tmp_path / "v.json")]) == 0
        verdict = json.loads((tmp_path / "v.json").read_text())
        assert verdict["repo"] == repo and f"/runs/{verdict['run_id']}" in out.read_text()
        assert run([*args[:5], "rgt_wrong", *args[6:]]) == 2
        assert "HTTP 401" in capsys.readouterr().err
        summary = tmp_path / "summary.md"
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
        assert run([*args, "--base-branch", "main", "--base-sha", "abc1234"]) == 0
        assert "gemv" in summary.read_text() and f"({live.url}/runs/" in summary.read_text()
    finally:
        live.stop()


def test_upload_command_says_when_the_server_is_unreachable(tmp_path, capsys) -> None:
    from service.cli.upload_cmd import UploadFailed, upload

    report = tmp_path / "run.json"
    report.write_text("{}")
    with pytest.raises(UploadFailed, match="cannot reach") as refused:
        upload(
            server=f"http://127.0.0.1:{free_port()}",
            token="t",
            files=[report],
            data={"repo": "a/b"},
            delays=(0.0,),
        )
    why = str(refused.value).partition("(gave up after retries): ")[2]
    assert why.strip(), "the connection's own error says what failed (refused, DNS, TLS)"


@pytest.mark.parametrize("server", ["127.0.0.1:8000", "", "ftp://host/x", "http://"])
def test_upload_refuses_a_server_that_is_no_url_at_once(tmp_path, server: str) -> None:
    """A URL without its scheme was retried for 14 s and reported as a network outage."""
    from service.cli.upload_cmd import UploadFailed, upload

    report = tmp_path / "run.json"
    report.write_text("{}")
    with pytest.raises(UploadFailed, match=r"--server .*: give the service's URL with its scheme"):
        upload(server=server, token="t", files=[report], data={"repo": "a/b"}, delays=(0.0,))


class _SignOnPage(http.server.BaseHTTPRequestHandler):
    """What a single sign-on proxy answers a request without its cookie: 200, a login page."""

    def do_POST(self) -> None:
        body = b"<html><body>Sign in</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        return


def test_upload_names_an_answer_that_is_not_the_services(tmp_path) -> None:
    """A proxy's login page read as "unexpected JSONDecodeError"."""
    from service.cli.upload_cmd import UploadFailed, upload

    report = tmp_path / "run.json"
    report.write_text("{}")
    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _SignOnPage)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    server = f"http://127.0.0.1:{proxy.server_address[1]}"
    try:
        with pytest.raises(UploadFailed) as refused:
            upload(server=server, token="t", files=[report], data={"repo": "a/b"}, delays=(0.0,))
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert str(refused.value).startswith(f"{server}: HTTP 200 (text/html; charset=utf-8) is not")


def test_serve_runs_the_service_as_a_process(sqlite_url, tmp_path) -> None:
    port = free_port()
    env = {**os.environ, "ROOFGUARD_WEBHOOK_SECRET": "whsec-process-secret"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "service", "serve", "--port", str(port), "--db", sqlite_url],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                ready = httpx.get(f"{base}/readyz", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, "serve did not start"
                time.sleep(0.2)
        assert ready.status_code == 200
        secret_token = "rgt_" + "s" * 43
        refused = httpx.get(
            f"{base}/api/v1/runs",
            params={"repo": "a/b"},
            headers={"Authorization": f"Bearer {secret_token}"},
        )
        assert refused.status_code == 401
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=15)
    assert 'GET /api/v1/runs?repo=a%2Fb HTTP/1.1" 401' in err
    assert secret_token not in err and "whsec-process-secret" not in err
