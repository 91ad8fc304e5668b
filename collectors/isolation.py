"""Read a file in a child process, so that a crash in native code is one clear error.

NVIDIA's ``ncu_report`` module aborts the whole process (SIGABRT inside protobuf) on some
damaged ``.ncu-rep`` files; in ``roofguard serve`` that would take the worker and its
in-flight requests down. A collector that sets ``isolated = True`` is run here instead: the
child (``python -m collectors.isolation``) runs the collector's ``parse_here`` under a CPU-time
and an address-space limit and sends back the record as JSON, or the collector's error. A
child that dies, overruns its time or memory, or answers garbage becomes a ``ReaderCrashed``
naming the file. One child per file: a start costs a fraction of a second, well below what
reading a report costs the profiler that wrote it.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import os
import resource
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from collectors import jsonio
from collectors.base import CollectOptions
from collectors.errors import (
    CollectorBug,
    CollectorError,
    MalformedReport,
    ReaderCrashed,
    TooManyKernels,
)
from collectors.schema import RunRecord

_KNOWN_ERRORS = {"MalformedReport": MalformedReport}


@dataclass(frozen=True, slots=True)
class Limits:
    """What one child may use.

    Attributes:
        time_s: Wall-clock seconds (the CPU-time limit is the same number).
        memory_bytes: Address space the reading may add (``RLIMIT_AS``, set once the
            child has imported the collector and the modules it ``preload``s).
        preload: Modules to import before the limits apply (a native library's own size
            is not what reading a file costs).
    """

    time_s: float = 120.0
    memory_bytes: int = 8 * 1024**3
    preload: tuple[str, ...] = ()


def read_in_child(name: str, path: str, options: CollectOptions, limits: Limits) -> RunRecord:
    """Run collector ``name``'s ``parse_here(path)`` in a child process.

    Raises:
        MalformedReport: The collector's own error, as the child raised it.
        ReaderCrashed: The child crashed, overran a limit or answered nothing readable.
    """
    request = json.dumps(
        {
            "collector": name,
            "path": path,
            "options": options.model_dump(mode="json"),
            "time_s": limits.time_s,
            "memory_bytes": limits.memory_bytes,
            "preload": limits.preload,
        }
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "collectors.isolation"],
            input=request.encode(),
            capture_output=True,
            timeout=limits.time_s,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ReaderCrashed(path, f"reading it took longer than {limits.time_s:g} s") from None
    return _answer(done, path, limits)


def _answer(done: subprocess.CompletedProcess[bytes], path: str, limits: Limits) -> RunRecord:
    """The child's record, its error raised here, or a ``ReaderCrashed`` saying what happened."""
    try:
        answer = json.loads(done.stdout) if done.returncode == 0 else {}
    except ValueError:
        answer = {}
    if isinstance(answer, dict) and "record" in answer:
        record = answer["record"]
        if jsonio.has_surrogate_escape(done.stdout.decode("utf-8", "replace")):
            record = jsonio.scrub(record)  # json escapes lone surrogates; they must not return
        return RunRecord.model_validate(record)
    if b"bad_alloc" in done.stderr or b"MemoryError" in done.stderr:
        raise ReaderCrashed(path, _over_memory(limits))
    if done.returncode < 0:
        raise ReaderCrashed(path, _death(-done.returncode, done.stderr, limits))
    if not isinstance(answer, dict) or "error" not in answer:
        status = f"the reader exited with status {done.returncode} and no answer"
        raise ReaderCrashed(path, status + _last_line(done.stderr))
    raise _child_error(answer.get("error") or {}, path, limits)


def _child_error(error: dict[str, Any], path: str, limits: Limits) -> CollectorError:
    """The error the child answered, as this process raises it."""
    if error.get("type") == "MemoryError":
        return ReaderCrashed(path, _over_memory(limits))
    if error.get("type") == "CollectorBug":
        return CollectorBug(path, str(error.get("message")))
    if error.get("type") == "TooManyKernels":
        return TooManyKernels(path, int(error.get("limit") or 0))
    kind = _KNOWN_ERRORS.get(str(error.get("type")))
    if kind is None:
        return ReaderCrashed(path, str(error.get("message") or "the reader gave no answer"))
    return kind(path, error.get("row"), error.get("field"), str(error.get("reason")))


def _over_memory(limits: Limits) -> str:
    return f"reading it needed more than its {limits.memory_bytes / 1024**2:g} MiB of memory"


def _death(signum: int, stderr: bytes, limits: Limits) -> str:
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    if signum in (signal.SIGXCPU, signal.SIGKILL):
        return f"reading it overran its limits ({limits.time_s:g} s CPU, {name})"
    return (
        f"the report reader crashed ({name}): the file is damaged, truncated or from an "
        f"unsupported Nsight Compute version{_last_line(stderr)}"
    )


def _last_line(stderr: bytes) -> str:
    """The native library's own message, where it wrote one (``Check failed: ...``)."""
    lines = [x.strip() for x in stderr.decode("utf-8", "replace").splitlines() if x.strip()]
    useful = [x for x in lines if "Check failed" in x or "rror" in x] or lines[-1:]
    if not useful:
        return ""
    # absl's prefix (severity, time, thread, source line) says nothing about the file
    said = useful[-1].split("] ", 1)[-1].strip()
    return f"; it said: {said[-300:]}"


def _limit(request: dict[str, Any]) -> None:
    for module in request["preload"]:
        with contextlib.suppress(ImportError):  # the collector names a missing extra itself
            importlib.import_module(module)
    seconds = max(1, math.ceil(float(request["time_s"])))
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    memory = _address_space() + int(request["memory_bytes"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def _address_space() -> int:
    """The child's address space now, in bytes (``VmSize``)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _child() -> int:
    """The child: read the request from stdin, answer on the original stdout."""
    answer_to = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # native code that prints must not garble the answer
    request = json.loads(sys.stdin.read())
    from collectors.registry import get

    collector = get(request["collector"])(CollectOptions.model_validate(request["options"]))
    _limit(request)
    try:
        record = collector.parse_here(request["path"])  # type: ignore[attr-defined]
        answer: dict[str, Any] = {"record": record.model_dump(mode="json")}
    except MalformedReport as exc:
        answer = {"error": {"type": "MalformedReport", **_fields(exc)}}
    except MemoryError:
        answer = {"error": {"type": "MemoryError", "message": ""}}
    except TooManyKernels as exc:
        answer = {"error": {"type": "TooManyKernels", "limit": exc.limit}}
    except CollectorError as exc:
        answer = {"error": {"type": type(exc).__name__, "message": exc.reason}}
    except Exception as exc:  # a bug of the collector, named as one (not as a crash)
        answer = {"error": {"type": "CollectorBug", "message": f"{type(exc).__name__}: {exc}"}}
    json.dump(answer, answer_to)
    answer_to.close()
    return 0


def _fields(exc: MalformedReport) -> dict[str, Any]:
    return {"row": exc.row, "field": exc.field, "reason": exc.reason}


if __name__ == "__main__":
    sys.exit(_child())
