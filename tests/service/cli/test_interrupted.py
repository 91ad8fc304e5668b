"""A command stopped by Ctrl-C or SIGTERM says so, and that running it again is safe.

Typer turns Ctrl-C into exit 130 without a word, and SIGTERM (a cancelled CI job) killed
the process as it stood: an ingest stopped midway exited silently.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from service.cli import EXIT_INTERRUPTED, INTERRUPTED, INTERRUPTED_PLAIN


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_ingest_stopped_midway_says_it_was_interrupted(tmp_path: Path, signum: int) -> None:
    report = tmp_path / "run.csv"
    report.write_text("name,duration_s,flops_fp32,bytes_dram,launches\ngemm,0.001,1e10,1e8,1\n")
    args = ["ingest", str(report), "--repo", "acme/k", "--branch", "main", "--commit", "c1"]
    assert _interrupted_while_connecting([*args, "--device", "H100-SXM5"], signum) == INTERRUPTED


def test_a_command_that_stores_nothing_says_only_that_it_was_interrupted() -> None:
    """`db current` only reads: it was told that its run is stored in one transaction."""
    said = _interrupted_while_connecting(["db", "current"], signal.SIGTERM)
    assert said == INTERRUPTED_PLAIN


def _interrupted_while_connecting(args: list[str], signum: int) -> str:
    """The last line of ``args`` stopped by ``signum`` while it waits on its store to answer."""
    with socket.create_server(("127.0.0.1", 0)) as server:  # a database that never answers
        server.settimeout(60)
        port = server.getsockname()[1]
        db = f"postgresql+psycopg://root@127.0.0.1:{port}/stalled?connect_timeout=300"
        args = [*args, "--db", db]
        proc = subprocess.Popen(
            [sys.executable, "-m", "service", *args],
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_as_on_a_terminal,
        )
        try:
            connection, _ = server.accept()  # the ingest waits on its store
            _stop(proc, signum)
            _, err = proc.communicate(timeout=60)
            connection.close()
        finally:
            proc.kill()
    assert proc.returncode == EXIT_INTERRUPTED, err
    return err.strip().splitlines()[-1]


def _as_on_a_terminal() -> None:
    """Ctrl-C's default in the child, as on a terminal.

    A shell without job control starts a background job (a CI script run with ``&``) with
    SIGINT ignored, and Python keeps it ignored in its children.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _stop(proc: subprocess.Popen[str], signum: int, every_s: float = 3.0) -> None:
    """Send ``signum`` until the process exits, as a user presses Ctrl-C again.

    One that lands inside the driver's connect wait can be lost (once, on a loaded CI box).
    """
    for _ in range(20):
        proc.send_signal(signum)
        try:
            proc.wait(timeout=every_s)
            return
        except subprocess.TimeoutExpired:
            continue
