"""``serve`` refuses a bad ``ROOFGUARD_*`` setting at start: one line naming it, exit 2.

Before, a ``ROOFGUARD_PUBLIC_URL`` without a scheme started the service, whose posts then
built a check's ``details_url`` GitHub answers 422 (after the comment was written), and a
non-integer limit read "unexpected ValidationError" without naming the variable.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from service.cli import run
from service.settings import Settings


@pytest.fixture
def taken_port(monkeypatch, tmp_path) -> Iterator[int]:
    """A port something else listens on: a server that got as far as binding fails there."""
    monkeypatch.chdir(tmp_path)  # a server that got as far as its store makes it here
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


@pytest.mark.parametrize(
    ("variable", "value", "why"),
    [
        ("ROOFGUARD_PUBLIC_URL", "roofguard.example.com", "not an absolute http(s) URL"),
        ("ROOFGUARD_PUBLIC_URL", "javascript:alert(1)", "not an absolute http(s) URL"),
        ("ROOFGUARD_PUBLIC_URL", "https://", "not an absolute http(s) URL"),
        ("ROOFGUARD_PUBLIC_URL", "https://a b.example", "not an absolute http(s) URL"),
        ("ROOFGUARD_MAX_UPLOAD_KERNELS", "many", "valid integer"),
        ("ROOFGUARD_UPLOAD_ANSWER_S", "500", "less than or equal to 110"),
    ],
)
def test_a_bad_setting_is_named_before_the_port_is_bound(
    monkeypatch, capsys, taken_port: int, variable: str, value: str, why: str
) -> None:
    monkeypatch.setenv(variable, value)
    assert run(["serve", "--port", str(taken_port)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unexpected" not in err and "uvicorn" not in err
    assert err.startswith(f"roofguard: error: {variable}: ") and repr(value) in err and why in err


def test_a_bad_setting_is_named_with_several_workers(monkeypatch, capsys, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ROOFGUARD_PUBLIC_URL", "foo")
    assert run(["serve", "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert err == "roofguard: error: ROOFGUARD_PUBLIC_URL: not an absolute http(s) URL: 'foo'\n"


@pytest.mark.parametrize(
    "url", ["https://roofguard.example.com", "https://roofguard.example.com/", "http://h:8080/rg/"]
)
def test_an_http_url_is_taken_as_before(monkeypatch, url: str) -> None:
    monkeypatch.setenv("ROOFGUARD_PUBLIC_URL", url)
    assert Settings().public_url == url
