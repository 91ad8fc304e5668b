"""``serve`` where nothing can listen: one line naming host:port and why, exit 2.

A port above 65535 read as uvicorn's lifespan traceback and "unexpected OverflowError"; a
port in use or a host that is no address exited 3, a code roofguard's commands never use.
"""

from __future__ import annotations

import socket

import pytest

from service.cli import run


def _one_line_error(capsys, argv: list[str]) -> str:
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "unexpected" not in err and "uvicorn" not in err, err
    return err


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_a_port_out_of_range_is_a_usage_error(capsys, tmp_path, port: str) -> None:
    err = _one_line_error(capsys, ["serve", "--port", port, "--db", f"sqlite:///{tmp_path}/h.db"])
    assert "Invalid value for '--port'" in err


def test_a_port_in_use_is_named_with_its_host(capsys, tmp_path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        argv = ["serve", "--port", str(port), "--db", f"sqlite:///{tmp_path}/h.db"]
        err = _one_line_error(capsys, argv)
    assert (
        err
        == f"roofguard: error: serve: cannot listen on 127.0.0.1:{port}: Address already in use\n"
    )


def test_a_host_that_is_no_address_is_named(capsys, tmp_path) -> None:
    argv = ["serve", "--host", "999.1.1.1", "--db", f"sqlite:///{tmp_path}/h.db"]
    err = _one_line_error(capsys, argv)
    assert err.startswith("roofguard: error: serve: cannot listen on 999.1.1.1:8000: ")
    assert err.count("\n") == 1
