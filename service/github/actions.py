"""GitHub Actions environment helpers: job summary, annotations, step outputs, artifacts.

All of them take the environment as a mapping (``os.environ`` at the edge) and do nothing
outside Actions, so the CLI can call them unconditionally.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rules import Severity, Verdict
from service.errors import BadInput
from service.render.escape import (
    cut_utf8,
    escape_command_data,
    escape_command_property,
    flatten,
    shorten,
)

if TYPE_CHECKING:  # jinja2: the markdown is rendered only where a summary is written
    from service.render.markdown import VerdictLinks

#: GitHub refuses a step summary over 1 MiB (and then shows none of it).
SUMMARY_LIMIT_BYTES = 1024 * 1024
#: Error annotations GitHub shows per step.
MAX_ERROR_ANNOTATIONS = 10
_CUT_NOTE = "\n\n> ✂️ Cut to fit the 1 MiB job-summary limit; the verdict artifact has everything.\n"


def in_actions(env: Mapping[str, str]) -> bool:
    """Whether we run inside GitHub Actions."""
    return env.get("GITHUB_ACTIONS") == "true"


def append_step_summary(markdown: str, env: Mapping[str, str]) -> bool:
    """Append ``markdown`` to ``$GITHUB_STEP_SUMMARY`` within the 1 MiB step limit.

    Returns:
        False when there is no step summary (not in Actions).
    """
    room = summary_room(env)
    if room is None:
        return False
    text = cut_utf8(markdown.rstrip("\n") + "\n\n", room, _CUT_NOTE)
    with Path(env["GITHUB_STEP_SUMMARY"]).open("a", encoding="utf-8") as handle:
        handle.write(text)
    return True


def summary_room(env: Mapping[str, str]) -> int | None:
    """Bytes ``$GITHUB_STEP_SUMMARY`` has left under the step limit; None outside Actions."""
    path = env.get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    summary = Path(path)
    return SUMMARY_LIMIT_BYTES - (summary.stat().st_size if summary.exists() else 0)


def append_verdict_summary(
    verdict: Verdict, env: Mapping[str, str], *, links: VerdictLinks | None = None, note: str = ""
) -> bool:
    """Append ``note``, then the verdict with every kernel the step summary has room for.

    The comment counts what it has no room to list; the summary lists it (up to 1 MiB).

    Returns:
        False when there is no step summary (not in Actions).
    """
    room = summary_room(env)
    if room is None:
        return False
    from service.render.markdown import render_job_summary  # jinja2, on demand

    room -= len(note.encode()) + 2  # append_step_summary ends it with a blank line
    markdown = render_job_summary(verdict, links=links, max_bytes=max(room, 0))
    return append_step_summary(note + markdown, env)


def set_outputs(outputs: Mapping[str, str], env: Mapping[str, str]) -> bool:
    """Write step outputs to ``$GITHUB_OUTPUT`` (multi-line values use a random delimiter)."""
    path = env.get("GITHUB_OUTPUT")
    if not path:
        return False
    lines = []
    for name, value in outputs.items():
        if "\n" in value or "\r" in value:
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            lines.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
        else:
            lines.append(f"{name}={value}\n")
    try:
        with Path(path).open("a", encoding="utf-8") as handle:
            handle.write("".join(lines))
    except OSError as exc:  # the runner's file: a bare errno line named no file
        raise BadInput(f"GITHUB_OUTPUT: {path}: cannot write: {exc.strerror or exc}") from exc
    return True


def annotation_lines(
    verdict: Verdict, *, file: str | None = None, limit: int = MAX_ERROR_ANNOTATIONS
) -> list[str]:
    """``::error`` workflow commands for the failing kernels (escaped, at most ``limit``)."""
    failing = [f for f in verdict.findings if f.severity == Severity.FAIL and f.counts]
    lines = []
    for finding in failing[:limit]:
        name = shorten(flatten(finding.kernel_name or finding.kernel or "run"), 120)
        props = [f"title={escape_command_property(f'roofguard {finding.rule}: {name}')}"]
        if file:
            props.insert(0, f"file={escape_command_property(file)}")
        message = escape_command_data(shorten(finding.message, 1000))
        lines.append(f"::error {','.join(props)}::{message}")
    if len(failing) > limit:
        lines.append(
            f"::notice title=roofguard::{len(failing) - limit} more failing kernels "
            "are in the job summary"
        )
    return lines


def emit_annotations(
    verdict: Verdict, out: TextIO, env: Mapping[str, str], *, file: str | None = None
) -> int:
    """Print the annotations (only inside Actions); returns how many were printed."""
    if not in_actions(env):
        return 0
    lines = annotation_lines(verdict, file=file)
    for line in lines:
        out.write(line + "\n")
    return len(lines)


def warning_line(title: str, message: str) -> str:
    """A ``::warning`` workflow command."""
    return f"::warning title={escape_command_property(title)}::{escape_command_data(message)}"


def write_artifact(verdict: Verdict, markdown: str, directory: Path) -> Sequence[Path]:
    """The verdict as an artifact-ready folder: ``verdict.json`` and ``verdict.md``.

    The fork-safe trusted workflow downloads it and posts it with ``roofguard comment``.
    """
    directory.mkdir(parents=True, exist_ok=True)
    files = (directory / "verdict.json", directory / "verdict.md")
    files[0].write_text(verdict.model_dump_json(indent=1) + "\n", encoding="utf-8")
    files[1].write_text(markdown, encoding="utf-8")
    return files
