"""A GitHub App's login: retried as any call, its failure keeps the verdict, a bad key named.

The installation token exchange (``POST /app/installations/<id>/access_tokens``) ran once,
outside the retries and before the fallback: a 502 there exited with no step outputs, job
summary or artifact folder, which a token's 502 or 401 leaves. A key PyJWT cannot read was
``unexpected InvalidKeyError: Could not parse the provided public key.``
"""

from __future__ import annotations

import io
import socket
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from github_server import FakeClock, FakeGitHub, github_server_fixture
from test_github_cli import PR, REPO, SHA, actions_env, outputs, write_verdict
from verdict_factory import regression_verdict

from service.cli import run
from service.github.publish import PostOptions, PostTarget, post_verdict_from_env
from service.github.retry import GitHubFailed

#: The fake GitHub's fixture (``github_server``), imported for these tests.
FIXTURES = (github_server_fixture,)
TOKENS = r"/app/installations/678/access_tokens$"


@pytest.fixture(name="app_env")
def app_env_fixture(github_server: FakeGitHub, tmp_path: Path) -> dict[str, str]:
    """An Actions job posting as a GitHub App (its key in a file) to ``github_server``."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    (tmp_path / "app.pem").write_bytes(pem)
    env = actions_env(github_server, tmp_path)
    del env["GITHUB_TOKEN"]
    env.update(
        ROOFGUARD_GITHUB_APP_ID="12345",
        ROOFGUARD_GITHUB_APP_INSTALLATION_ID="678",
        ROOFGUARD_GITHUB_APP_PRIVATE_KEY_PATH=str(tmp_path / "app.pem"),
        ROOFGUARD_GITHUB_APP_SLUG="roofguard",
    )
    return env


def post(env: dict[str, str], clock: FakeClock, out: io.StringIO):
    return post_verdict_from_env(
        regression_verdict(),
        PostTarget(REPO, PR, SHA),
        PostOptions(clock=clock),
        env=env,
        out=out,
    )


def exchanges(server: FakeGitHub) -> int:
    return sum(1 for _, path in server.calls("POST") if "access_tokens" in path)


def assert_verdict_kept(tmp: Path, out: io.StringIO) -> None:
    """What a token's failed post leaves: step outputs, the job summary, the artifact folder."""
    assert outputs(tmp / "output")["posted"] == "false"
    assert "roofguard:verdict" in (tmp / "summary.md").read_text()
    assert (tmp / "artifact" / "verdict.json").is_file()
    assert out.getvalue().startswith("::warning title=roofguard::")


def test_a_502_on_the_token_exchange_is_retried(
    github_server: FakeGitHub, app_env: dict[str, str]
) -> None:
    for _ in range(2):
        github_server.fail_next("POST", TOKENS, 502)
    clock = FakeClock()
    result = post(app_env, clock, io.StringIO())
    assert result.posted and result.comment_action == "created"
    assert exchanges(github_server) == 3 and clock.sleeps == [2.0, 4.0]


def test_the_token_exchange_down_past_the_retries_keeps_the_verdict(
    github_server: FakeGitHub, app_env: dict[str, str], tmp_path: Path
) -> None:
    for _ in range(5):
        github_server.fail_next("POST", TOKENS, 502)
    clock, out = FakeClock(), io.StringIO()
    with pytest.raises(GitHubFailed, match=r"installation 678.* after 5 attempt"):
        post(app_env, clock, out)
    assert exchanges(github_server) == 5 and clock.sleeps == [2.0, 4.0, 8.0, 16.0]
    assert_verdict_kept(tmp_path, out)


def test_a_refused_login_names_the_credentials_and_keeps_the_verdict(
    github_server: FakeGitHub, app_env: dict[str, str], tmp_path: Path
) -> None:
    said = {"message": "A JSON web token could not be decoded"}
    github_server.fail_next("POST", TOKENS, 401, body=said)
    out = io.StringIO()
    with pytest.raises(GitHubFailed, match=r"refused: 401 A JSON web token.*APP_ID"):
        post(app_env, FakeClock(), out)
    assert exchanges(github_server) == 1  # a 401 is not retried
    assert_verdict_kept(tmp_path, out)


def test_no_connection_to_the_token_exchange_is_retried_then_kept(
    app_env: dict[str, str], tmp_path: Path
) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app_env["GITHUB_API_URL"] = f"http://127.0.0.1:{port}"
    clock, out = FakeClock(), io.StringIO()
    with pytest.raises(GitHubFailed, match=r"after 5 attempt.*onnection"):
        post(app_env, clock, out)
    assert clock.sleeps == [2.0, 4.0, 8.0, 16.0]
    assert_verdict_kept(tmp_path, out)


@pytest.mark.parametrize("where", ["variable", "file"])
def test_a_key_that_is_not_pem_is_one_line_naming_where_it_came_from(
    github_server: FakeGitHub,
    app_env: dict[str, str],
    tmp_path: Path,
    where: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if where == "variable":
        app_env["ROOFGUARD_GITHUB_APP_PRIVATE_KEY"] = "not a key"
        named = "ROOFGUARD_GITHUB_APP_PRIVATE_KEY: not a PEM private key"
    else:
        Path(app_env["ROOFGUARD_GITHUB_APP_PRIVATE_KEY_PATH"]).write_text("ssh-rsa AAAA\n")
        named = f"ROOFGUARD_GITHUB_APP_PRIVATE_KEY_PATH: {tmp_path}/app.pem: not a PEM private"
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    for name, value in app_env.items():
        monkeypatch.setenv(name, value)
    verdict = write_verdict(tmp_path, regression_verdict())
    assert run(["comment", "--repo", REPO, "--verdict", str(verdict)]) == 2
    said = capsys.readouterr().err
    assert said.startswith(f"roofguard: error: {named}") and said.count("\n") == 1
    assert "InvalidKeyError" not in said and not github_server.requests
