"""A store in a folder this process cannot write: read commands work, the others say why.

SQLite's WAL makes ``-wal``/``-shm`` files beside the store even to read, so every command
said "unable to open database file"; the default store in a read-only working directory
was "unexpected OSError: [Errno 30] Read-only file system: '.roofguard'".
A non-root user gets a read-only folder from chmod; root, whom chmod does not stop, from a
read-only bind mount in a mount namespace of its own (``unshare -m``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from service.store.db import HEAD_REVISION

_MOUNT_READ_ONLY = 'mount --bind -o ro "$0" "$0" && cd "$1" && shift && exec "$@"'


def _read_only(
    folder: Path, argv: list[str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``roofguard argv`` run in ``cwd`` (default ``folder``) while ``folder`` is read-only."""
    command = [sys.executable, "-m", "service", *argv]
    env = {k: v for k, v in os.environ.items() if k != "ROOFGUARD_DATABASE_URL"}
    where = str(cwd or folder)
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            return subprocess.run(command, cwd=where, env=env, capture_output=True, text=True)
        finally:
            folder.chmod(0o755)
    if shutil.which("unshare") is None:
        pytest.skip("root needs unshare(1) to make a read-only folder")
    wrapped = ["unshare", "-m", "sh", "-c", _MOUNT_READ_ONLY, str(folder), where, *command]
    done = subprocess.run(wrapped, env=env, capture_output=True, text=True)
    if done.returncode != 0 and done.stderr.startswith(("unshare:", "mount:")):
        pytest.skip(f"no read-only bind mount here: {done.stderr.strip()}")
    return done


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A migrated store in a folder of its own (its WAL files gone, as after any command)."""
    folder = tmp_path / "shared"
    folder.mkdir()
    db = folder / "h.db"
    done = subprocess.run(
        [sys.executable, "-m", "service", "db", "upgrade", "--db", f"sqlite:///{db}"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["h.db"]
    return db


def test_commands_that_only_read_work_in_a_read_only_folder(store: Path) -> None:
    url = f"sqlite:///{store}"
    done = _read_only(store.parent, ["db", "current", "--db", url])
    assert done.returncode == 0, done.stderr
    assert f"at migration {HEAD_REVISION} (newest)" in done.stdout
    for argv in (["digest"], ["token", "list"]):
        done = _read_only(store.parent, [*argv, "--db", url])
        assert done.returncode == 0, (argv, done.stderr)
    assert sorted(p.name for p in store.parent.iterdir()) == ["h.db"]


def test_a_command_that_stores_says_the_folder_is_not_writable(store: Path, tmp_path) -> None:
    report = tmp_path / "run.csv"
    report.write_text("name,duration_s,flops_fp32,bytes_dram,launches\ngemm,0.001,1e10,1e8,1\n")
    argv = ["ingest", str(report), "--repo", "acme/k", "--branch", "main", "--commit", "c1"]
    done = _read_only(store.parent, [*argv, "--device", "H100-SXM5", "--db", f"sqlite:///{store}"])
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "is read-only" in done.stderr
    assert f"its folder {store.parent} is not writable" in done.stderr


def test_the_default_store_in_a_read_only_directory_is_one_named_error(tmp_path) -> None:
    done = _read_only(tmp_path, ["db", "upgrade"])
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "unexpected" not in done.stderr
    assert f"cannot make its folder {tmp_path / '.roofguard'}" in done.stderr
