"""roofguard JSON of a RunRecord version this roofguard does not read is refused, naming it.

``"schema_version": 99`` or ``-5`` was read as version 1 and judged so; a newer roofguard's
record may mean something else by the same fields.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import collectors
from collectors.errors import MalformedReport
from service.cli import run

GBENCH = "gbench/google_benchmark__tools_gbench_Inputs_test1_run1.json"


def _record(corpus_dir: Path, tmp_path: Path, **changes: object) -> Path:
    """A corpus report as ``roofguard inspect --json`` writes it, ``changes`` made."""
    data = json.loads(collectors.collect(corpus_dir / GBENCH).model_dump_json())
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data | changes), encoding="utf-8")
    return path


NEWER = "; upgrade roofguard to read a newer one"


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        (
            {"schema_version": 99},
            "version 99: this roofguard reads RunRecord version 1 only" + NEWER,
        ),
        # a newer record whose fields this version cannot read: its version is the reason
        (
            {"schema_version": 2, "kernels": {"by_key": {}}},
            "version 2: this roofguard reads RunRecord version 1 only" + NEWER,
        ),
        ({"schema_version": -5}, "version -5: this roofguard reads RunRecord version 1 only"),
        ({"schema_version": 0}, "version 0: this roofguard reads RunRecord version 1 only"),
    ],
)
def test_another_version_is_refused_naming_the_field(
    corpus_dir: Path, tmp_path: Path, changes: dict[str, object], reason: str
) -> None:
    path = _record(corpus_dir, tmp_path, **changes)
    with pytest.raises(MalformedReport) as info:
        collectors.collect(path)
    assert (info.value.path, info.value.row, info.value.field) == (
        str(path),
        None,
        "schema_version",
    )
    assert info.value.reason == reason


def test_version_1_and_a_record_giving_none_still_read(corpus_dir: Path, tmp_path: Path) -> None:
    assert collectors.collect(_record(corpus_dir, tmp_path, schema_version=1)).schema_version == 1
    path = _record(corpus_dir, tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["schema_version"]
    path.write_text(json.dumps(data), encoding="utf-8")
    assert collectors.collect(path).schema_version == 1


@pytest.mark.parametrize("command", ["inspect", "ingest"])
def test_the_command_line_says_so_with_exit_2(
    corpus_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    path = _record(corpus_dir, tmp_path, schema_version=99)
    argv = [command, str(path)]
    if command == "ingest":
        argv += ["--repo", "acme/k", "--commit", "c1", "--branch", "main"]
        argv += ["--db", f"sqlite:///{tmp_path / 'h.db'}", "--device", "H100-SXM5"]
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert f"{path}, field 'schema_version': version 99: this roofguard reads" in err
