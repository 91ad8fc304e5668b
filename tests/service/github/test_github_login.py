"""Whose comments are ours: the login comes from GET /user, with no configuration.

The real github3.py client against the fake GitHub: a personal access token (or a bot user's
token) is answered by GET /user with its user (recorded response ``GET_user.json``); a
``GITHUB_TOKEN`` is refused there (403 "Resource not accessible by integration") and posts as
``github-actions[bot]``. ``ROOFGUARD_GITHUB_BOT_LOGIN`` still overrides, without the request.
"""

from __future__ import annotations

from pathlib import Path

from github_server import BOT, FakeClock, FakeGitHub, github_server_fixture  # noqa: F401
from verdict_factory import regression_verdict

from rules.verdict import Conclusion
from service.github.auth import ANY_APP_BOT, GitHubCredentials
from service.github.client import make_client
from service.github.publish import PostOptions, PostTarget, post_verdict_from_env
from service.render.markdown import verdict_marker

REPO, PR = "acme/kernels", 42
SHA = "0123456789abcdef0123456789abcdef01234567"


def post(server: FakeGitHub, tmp: Path, conclusion: Conclusion = Conclusion.FAIL, **env: str):
    environ = {"GITHUB_API_URL": server.url, "GITHUB_OUTPUT": str(tmp / "out"), **env}
    return post_verdict_from_env(
        regression_verdict(conclusion=conclusion),
        PostTarget(REPO, PR, SHA),
        PostOptions(clock=FakeClock()),
        env=environ,
    )


def user_lookups(server: FakeGitHub) -> int:
    return server.calls("GET").count(("GET", "/user"))


def test_a_personal_token_edits_its_own_comment(github_server: FakeGitHub, tmp_path: Path) -> None:
    github_server.logins["ghp_perfbot"] = "acme-perf-bot"
    first = post(github_server, tmp_path, GITHUB_TOKEN="ghp_perfbot")
    second = post(github_server, tmp_path, Conclusion.PASS, GITHUB_TOKEN="ghp_perfbot")
    (comment,) = github_server.pr_comments(PR)
    assert comment["user"]["login"] == "acme-perf-bot"
    assert (first.comment_action, second.comment_action) == ("created", "updated")
    assert comment["id"] == first.comment_id == second.comment_id
    # asked only when there is a comment to recognise: the first run found none
    assert user_lookups(github_server) == 1


def test_github_token_is_refused_get_user_and_posts_as_actions_bot(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    client = make_client(GitHubCredentials(token="ghs_actions"), api_url=github_server.url)
    assert client.bot_login == ANY_APP_BOT and client.bot_login == ANY_APP_BOT
    assert user_lookups(github_server) == 1  # learned once, then remembered
    post(github_server, tmp_path, GITHUB_TOKEN="ghs_actions")
    post(github_server, tmp_path, Conclusion.PASS, GITHUB_TOKEN="ghs_actions")
    (comment,) = github_server.pr_comments(PR)
    assert comment["user"]["login"] == BOT


def test_an_apps_installation_token_edits_its_own_comment(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    """``actions/create-github-app-token``'s token: refused GET /user, posts as the App's bot."""
    github_server.app_logins["ghs_app"] = "acme-perf-bot[bot]"
    marker = verdict_marker(REPO, PR, "H100-SXM5")
    spoof = github_server.add_comment(REPO, PR, f"{marker}\nspoofed", login="eve")
    results = [post(github_server, tmp_path, GITHUB_TOKEN="ghs_app") for _ in range(3)]
    assert [r.comment_action for r in results] == ["created", "unchanged", "unchanged"]
    ours = [c for c in github_server.pr_comments(PR) if c["id"] != spoof]
    assert [c["user"]["login"] for c in ours] == ["acme-perf-bot[bot]"]
    assert github_server.comments[spoof]["body"] == f"{marker}\nspoofed"


def test_a_personal_token_leaves_the_actions_bots_comment_alone(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    marker = verdict_marker(REPO, PR, "H100-SXM5")
    other = github_server.add_comment(REPO, PR, f"{marker}\nby GITHUB_TOKEN", login=BOT)
    github_server.logins["ghp_perfbot"] = "acme-perf-bot"
    result = post(github_server, tmp_path, GITHUB_TOKEN="ghp_perfbot")
    assert result.comment_action == "created" and result.comment_id != other
    assert github_server.comments[other]["body"] == f"{marker}\nby GITHUB_TOKEN"


def test_the_override_wins_and_skips_the_lookup(github_server: FakeGitHub, tmp_path: Path) -> None:
    github_server.logins["ghp_perfbot"] = "acme-perf-bot"
    env = {"GITHUB_TOKEN": "ghp_perfbot", "ROOFGUARD_GITHUB_BOT_LOGIN": "acme-perf-bot"}
    first = post(github_server, tmp_path, **env)
    second = post(github_server, tmp_path, Conclusion.PASS, **env)
    assert (first.comment_action, second.comment_action) == ("created", "updated")
    assert len(github_server.pr_comments(PR)) == 1 and user_lookups(github_server) == 0


def test_a_check_without_a_pr_never_asks_who_we_are(
    github_server: FakeGitHub, tmp_path: Path
) -> None:
    environ = {"GITHUB_API_URL": github_server.url, "GITHUB_TOKEN": "ghp_x"}
    result = post_verdict_from_env(
        regression_verdict(),
        PostTarget(REPO, None, SHA),
        PostOptions(clock=FakeClock()),
        env=environ,
    )
    assert result.check_kind == "check-run" and user_lookups(github_server) == 0


def test_an_empty_override_means_ask() -> None:
    # compose passes ${ROOFGUARD_GITHUB_BOT_LOGIN:-}: set but empty must not become the login
    env = {"GITHUB_TOKEN": "ghp_x", "ROOFGUARD_GITHUB_BOT_LOGIN": ""}
    assert GitHubCredentials.from_env(env).bot_login is None
    assert GitHubCredentials.from_env({**env, "ROOFGUARD_GITHUB_BOT_LOGIN": "me"}).bot_login == "me"
