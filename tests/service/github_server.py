"""A local GitHub for tests: a loopback HTTP server that the real github3.py client talks to.

Responses are built from real recorded GitHub responses (``github_responses/*.json``, from
github3.py's own cassettes) with URLs, owner/repo, ids and bodies rewritten per request, and
the server keeps state (comments, statuses, check runs, issues) so a test can run the same
publish twice. Every request is recorded; any request no route expects is answered 404 and
listed in ``unexpected`` (the ``github_server`` fixture fails the test on it).

Faults are injected with ``fail_next``: a status, headers and body for the next request that
matches, optionally after applying it (a lost response: GitHub did the work, the client saw
an error).
"""

from __future__ import annotations

import html
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

RESPONSES = Path(__file__).resolve().parent / "github_responses"
RECORDED_REPOS = ("sigmavirus24/github3.py", "westphahl/github3.py", "github3py/github3.py")
BOT = "github-actions[bot]"
READ_ONLY = {
    "message": "Resource not accessible by integration",
    "documentation_url": "https://docs.github.com/rest",
}


def template(name: str) -> Any:
    """The recorded response body of ``github_responses/<name>.json``."""
    return json.loads((RESPONSES / f"{name}.json").read_text())["body"]


@dataclass
class Request:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    json: Any


@dataclass
class Fault:
    """An injected response for the next matching request."""

    method: str
    path: re.Pattern[str]
    status: int
    headers: dict[str, str]
    body: Any
    apply: bool


@dataclass
class Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


class FakeGitHub:
    """State and routes of the fake GitHub; ``url`` is its API base."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.unexpected: list[str] = []
        self.comments: dict[int, dict[str, Any]] = {}
        self.statuses: list[dict[str, Any]] = []
        self.check_runs: list[dict[str, Any]] = []
        self.issues: dict[int, dict[str, Any]] = {}
        self.pull_heads: dict[int, str] = {}
        # token -> login. A listed token is a user's (a PAT or a bot user's): GET /user names
        # it. Any other token acts as GITHUB_TOKEN: it posts as BOT and GET /user is refused.
        self.logins: dict[str, str] = {}
        # token -> login of a GitHub App's installation token: GET /user is refused, as for
        # GITHUB_TOKEN, and it posts as its App's bot (``<app-slug>[bot]``).
        self.app_logins: dict[str, str] = {}
        self.read_only = False
        self.per_page_cap = 100
        self.faults: list[Fault] = []
        self._ids = iter(range(1000, 10**9))
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.url = ""

    # -- set-up helpers ------------------------------------------------------------------
    def fail_next(
        self,
        method: str,
        path: str,
        status: int,
        *,
        headers: dict[str, str] | None = None,
        body: Any = None,
        apply: bool = False,
    ) -> None:
        """Answer the next ``method`` request whose path matches regex ``path`` with ``status``."""
        body = body if body is not None else {"message": f"injected {status}"}
        self.faults.append(Fault(method, re.compile(path), status, headers or {}, body, apply))

    def add_comment(self, repo: str, pr: int, body: str, login: str = BOT) -> int:
        """A comment that already exists on the PR (e.g. from another user)."""
        owner, name = repo.split("/")
        return int(self._new_comment(owner, name, pr, body, login)["id"])

    def calls(self, method: str | None = None) -> list[tuple[str, str]]:
        """(method, path) of every request, optionally of one method."""
        return [(r.method, r.path) for r in self.requests if method in (None, r.method)]

    def pr_comments(self, pr: int) -> list[dict[str, Any]]:
        """The comments on PR ``pr``, oldest first."""
        return [c for c in self.comments.values() if c["pr"] == pr]

    # -- rewriting recorded bodies ----------------------------------------------------------
    def _rewrite(self, body: Any, owner: str, name: str) -> Any:
        text = json.dumps(body).replace("https://api.github.com", self.url)
        for recorded in RECORDED_REPOS:
            text = text.replace(recorded, f"{owner}/{name}")
        return json.loads(text)

    def _user(self, login: str) -> dict[str, Any]:
        user = dict(template("POST_repos_o_r_issues_n_comments")["user"])
        user.update(login=login, type="Bot" if login.endswith("[bot]") else "User")
        return user

    def _new_comment(self, owner: str, name: str, pr: int, body: str, login: str) -> dict[str, Any]:
        cid = next(self._ids)
        comment = self._rewrite(template("POST_repos_o_r_issues_n_comments"), owner, name)
        api = f"{self.url}/repos/{owner}/{name}"
        comment.update(
            id=cid,
            body=body,
            body_text=body,
            body_html=html.escape(body),
            url=f"{api}/issues/comments/{cid}",
            issue_url=f"{api}/issues/{pr}",
            html_url=f"https://github.invalid/{owner}/{name}/pull/{pr}#issuecomment-{cid}",
            user=self._user(login),
            pr=pr,
        )
        self.comments[cid] = comment
        return comment

    def _public(self, comment: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in comment.items() if k != "pr"}

    # -- routes -----------------------------------------------------------------------------
    def routes(self) -> list[tuple[str, str, Callable[..., Reply]]]:
        repo = r"/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)"
        return [
            ("GET", repo + r"$", self.get_repo),
            ("GET", repo + r"/issues/(?P<n>\d+)$", self.get_issue),
            ("GET", repo + r"/pulls/(?P<n>\d+)$", self.get_pull),
            ("GET", repo + r"/issues/(?P<n>\d+)/comments$", self.list_comments),
            ("POST", repo + r"/issues/(?P<n>\d+)/comments$", self.create_comment),
            ("PATCH", repo + r"/issues/comments/(?P<cid>\d+)$", self.edit_comment),
            ("DELETE", repo + r"/issues/comments/(?P<cid>\d+)$", self.delete_comment),
            ("POST", repo + r"/statuses/(?P<sha>[0-9a-f]{40})$", self.create_status),
            ("POST", repo + r"/check-runs$", self.create_check_run),
            ("GET", repo + r"/issues$", self.list_issues),
            ("POST", repo + r"/issues$", self.create_issue),
            ("PATCH", repo + r"/issues/(?P<n>\d+)$", self.edit_issue),
            ("POST", r"/app/installations/(?P<iid>\d+)/access_tokens$", self.access_token),
            ("GET", r"/user$", self.get_user),
        ]

    def get_user(self, req: Request) -> Reply:
        token = req.headers.get("authorization", "").partition(" ")[2]
        if token not in self.logins:  # an installation token (GITHUB_TOKEN) has no user
            return Reply(403, template("403_resource_not_accessible"))
        user = self._rewrite(template("GET_user"), "", "")
        login = self.logins[token]
        user.update(login=login, type="Bot" if login.endswith("[bot]") else "User")
        return Reply(200, user)

    def get_repo(self, req: Request, owner: str, name: str) -> Reply:
        return Reply(200, self._rewrite(template("GET_repos_o_r"), owner, name))

    def get_issue(self, req: Request, owner: str, name: str, n: str) -> Reply:
        issue = self._rewrite(template("GET_repos_o_r_issues_n"), owner, name)
        api = f"{self.url}/repos/{owner}/{name}"
        issue.update(
            number=int(n), url=f"{api}/issues/{n}", comments_url=f"{api}/issues/{n}/comments"
        )
        return Reply(200, issue)

    def get_pull(self, req: Request, owner: str, name: str, n: str) -> Reply:
        pull = self._rewrite(template("GET_repos_o_r_pulls_n"), owner, name)
        pull["number"] = int(n)
        pull["head"]["sha"] = self.pull_heads.get(int(n), pull["head"]["sha"])
        return Reply(200, pull)

    def list_comments(self, req: Request, owner: str, name: str, n: str) -> Reply:
        items = [self._public(c) for c in self.pr_comments(int(n))]
        per_page = min(int(req.query.get("per_page", ["30"])[0]), self.per_page_cap)
        page = int(req.query.get("page", ["1"])[0])
        chunk = items[(page - 1) * per_page : page * per_page]
        headers = {}
        if page * per_page < len(items):
            query = f"per_page={per_page}&page={page + 1}"
            nxt = f"{self.url}/repos/{owner}/{name}/issues/{n}/comments?{query}"
            headers["Link"] = f'<{nxt}>; rel="next"'
        return Reply(200, chunk, headers)

    def _login(self, req: Request) -> str:
        token = req.headers.get("authorization", "").partition(" ")[2]
        return self.logins.get(token) or self.app_logins.get(token, BOT)

    def create_comment(self, req: Request, owner: str, name: str, n: str) -> Reply:
        comment = self._new_comment(owner, name, int(n), req.json["body"], self._login(req))
        return Reply(201, self._public(comment))

    def edit_comment(self, req: Request, owner: str, name: str, cid: str) -> Reply:
        comment = self.comments.get(int(cid))
        if comment is None:
            return Reply(404, {"message": "Not Found"})
        if comment["user"]["login"] != self._login(req):
            return Reply(403, {"message": "Must have admin rights to Repository."})
        body = req.json["body"]
        comment.update(body=body, body_text=body, body_html=html.escape(body))
        return Reply(200, self._public(comment))

    def delete_comment(self, req: Request, owner: str, name: str, cid: str) -> Reply:
        return (
            Reply(204)
            if self.comments.pop(int(cid), None)
            else Reply(404, {"message": "Not Found"})
        )

    def create_status(self, req: Request, owner: str, name: str, sha: str) -> Reply:
        status = self._rewrite(template("POST_repos_o_r_statuses_sha"), owner, name)
        status.update(
            req.json, id=next(self._ids), url=f"{self.url}/repos/{owner}/{name}/statuses/{sha}"
        )
        self.statuses.append({"sha": sha, **req.json})
        return Reply(201, status)

    def create_check_run(self, req: Request, owner: str, name: str) -> Reply:
        run = self._rewrite(template("POST_repos_o_r_check-runs"), owner, name)
        rid = next(self._ids)
        output = req.json.get("output", {})
        run.update(
            {k: v for k, v in req.json.items() if k != "output"},
            id=rid,
            url=f"{self.url}/repos/{owner}/{name}/check-runs/{rid}",
        )
        run["output"].update(
            title=output.get("title"), summary=output.get("summary"), text=output.get("text")
        )
        self.check_runs.append(dict(req.json))
        return Reply(201, run)

    def _issue(self, owner: str, name: str, number: int) -> dict[str, Any]:
        stored = self.issues[number]
        issue = self._rewrite(template("POST_repos_o_r_issues"), owner, name)
        api = f"{self.url}/repos/{owner}/{name}"
        issue.update(
            number=number,
            id=number + 5000,
            title=stored["title"],
            body=stored["body"],
            body_text=stored["body"],
            body_html=html.escape(stored["body"]),
            labels=[
                {
                    "name": n,
                    "color": "ededed",
                    "default": False,
                    "id": 1,
                    "url": f"{api}/labels/{n}",
                }
                for n in stored["labels"]
            ],
            user=self._user(stored["login"]),
            state=stored["state"],
            url=f"{api}/issues/{number}",
            comments_url=f"{api}/issues/{number}/comments",
        )
        return issue

    def list_issues(self, req: Request, owner: str, name: str) -> Reply:
        wanted = set(filter(None, req.query.get("labels", [""])[0].split(",")))
        state = req.query.get("state", ["open"])[0]
        found = [
            self._issue(owner, name, n)
            for n, i in sorted(self.issues.items())
            if wanted <= set(i["labels"]) and state in ("all", i["state"])
        ]
        return Reply(200, found)

    def create_issue(self, req: Request, owner: str, name: str) -> Reply:
        number = max(self.issues, default=0) + 1
        self.issues[number] = {
            "title": req.json["title"],
            "body": req.json.get("body") or "",
            "labels": req.json.get("labels") or [],
            "state": "open",
            "login": self._login(req),
        }
        return Reply(201, self._issue(owner, name, number))

    def edit_issue(self, req: Request, owner: str, name: str, n: str) -> Reply:
        if int(n) not in self.issues:
            return Reply(404, {"message": "Not Found"})
        self.issues[int(n)].update(
            {k: v for k, v in req.json.items() if k in ("title", "body", "state")}
        )
        return Reply(200, self._issue(owner, name, int(n)))

    def access_token(self, req: Request, iid: str) -> Reply:
        body = template("POST_app_installations_id_access_tokens")
        body.update(token=f"ghs_installation_{iid}", expires_at="2099-01-01T00:00:00Z")
        return Reply(201, body)

    # -- dispatch ---------------------------------------------------------------------------
    def handle(self, req: Request) -> Reply:
        with self._lock:
            self.requests.append(req)
            fault = next(
                (f for f in self.faults if f.method == req.method and f.path.search(req.path)), None
            )
            if fault is not None:
                self.faults.remove(fault)
                if fault.apply:
                    self._route(req)
                return Reply(fault.status, fault.body, fault.headers)
            if self.read_only and req.method != "GET" and "access_tokens" not in req.path:
                return Reply(403, READ_ONLY)
            return self._route(req)

    def _route(self, req: Request) -> Reply:
        for method, pattern, handler in self.routes():
            match = re.match(pattern, req.path)
            if method == req.method and match:
                return handler(req, **match.groupdict())
        self.unexpected.append(f"{req.method} {req.path}")
        return Reply(404, {"message": "Not Found (unexpected request)"})

    # -- server -----------------------------------------------------------------------------
    def start(self) -> FakeGitHub:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                path = parts.path.removeprefix("/api/v3")
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                req = Request(
                    self.command,
                    path,
                    parse_qs(parts.query),
                    headers,
                    json.loads(raw) if raw else None,
                )
                reply = fake.handle(req)
                data = b"" if reply.body is None else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = _serve

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        server = self._server
        threading.Thread(
            target=lambda: server.serve_forever(poll_interval=0.02), daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


@pytest.fixture(name="github_server")
def github_server_fixture() -> Iterator[FakeGitHub]:
    """A running fake GitHub; the test fails if any request hit no route."""
    server = FakeGitHub().start()
    try:
        yield server
    finally:
        server.stop()
    assert not server.unexpected, f"unexpected GitHub requests: {server.unexpected}"


class FakeClock:
    """Epoch clock that only moves when slept on; records the sleeps."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.t = start
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds
