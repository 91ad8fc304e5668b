"""Small holes of issue 32 item 8: a webhook nested 100,000 deep, a token lookup on a cut
PostgreSQL connection."""

from __future__ import annotations

import logging

import pytest
import sqlalchemy as sa
from svc_helpers import auth
from test_api_webhook import SECRET

from service.github.signatures import sign


def test_a_signed_webhook_nested_100000_deep_is_a_422_not_a_500(service) -> None:
    raw = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    headers = {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": "d-deep",
        "Content-Type": "application/json",
        "X-Hub-Signature-256": sign(SECRET, raw),
    }
    answer = service.client.post("/api/v1/github/webhook", content=raw, headers=headers)
    assert answer.status_code == 422, answer.text  # as the README says (it said 400)
    assert answer.json()["detail"] == "webhook body is nested too deeply to read"


@pytest.mark.postgres
def test_the_token_lookup_survives_a_cut_connection(make_service, repo, db_url, caplog) -> None:
    if not db_url.startswith("postgresql"):
        pytest.skip("PostgreSQL cuts connections; SQLite has none to cut")
    service = make_service()
    token = service.token(repo)
    admin = sa.create_engine(service.engine.url, isolation_level="AUTOCOMMIT")
    cuts = []

    def cut_the_lookup(conn, cursor, statement, *args) -> None:
        if not cuts and "api_tokens" in statement and "token_hash" in statement:
            cuts.append(conn.connection.dbapi_connection.info.backend_pid)
            with admin.connect() as killer:
                killer.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": cuts[0]})

    sa.event.listen(service.engine, "before_cursor_execute", cut_the_lookup)
    try:
        with caplog.at_level(logging.WARNING, logger="roofguard.api"):
            answer = service.client.get(
                "/api/v1/runs", params={"repo": repo}, headers={"Authorization": f"Bearer {token}"}
            )
    finally:
        sa.event.remove(service.engine, "before_cursor_execute", cut_the_lookup)
        admin.dispose()
    assert cuts, "the lookup ran"
    assert answer.status_code == 200, answer.text
    assert any("token lookup: attempt 1 failed" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("path", "params", "detail"),
    [
        ("/api/v1/runs", {"limit": "-1"}, "query limit: Input should be greater than or equal"),
        ("/api/v1/runs", {"kind": "weekly"}, "query kind: "),
        ("/api/v1/runs/abc", {}, "path run_id: Input should be a valid integer"),
    ],
)
def test_a_refused_parameter_is_one_line_as_every_422(service, repo, path, params, detail) -> None:
    """FastAPI's own 422s were lists of objects; the OpenAPI document says ``ErrorPublic``."""
    answer = service.client.get(
        path, params={"repo": repo, **params}, headers=auth(service.token(repo))
    )
    assert answer.status_code == 422
    body = answer.json()
    assert isinstance(body["detail"], str) and body["detail"].startswith(detail), body
