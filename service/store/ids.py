"""Identities in the history store: content hashes, key hashes and get-or-create of ids.

Ids are resolved with Core statements, a whole run's kernels at a time; creation uses
``INSERT ... ON CONFLICT DO NOTHING`` so two processes ingesting at once cannot collide.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any

import sqlalchemy as sa
from pydantic import TypeAdapter

from collectors import RunColumns
from collectors.schema import KernelRecord, RunRecord, SourceRef
from service.store.bulk import copy_ignoring_conflicts, copy_returning_ids
from service.store.coretables import DEVICES as _DEVICES
from service.store.coretables import KERNELS as _KERNELS
from service.store.coretables import REPOSITORIES as _REPOS
from service.store.fastread import one_of
from service.store.rows import KernelValues, NamedValues
from service.store.sessions import StoreSession


def canonical_json(run: RunRecord) -> str:
    """The canonical JSON of a run: sorted keys, no whitespace."""
    return _dumps(run.model_dump(mode="json"))


def _dumps(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def file_name(path: str) -> str:
    """The last component of a path as any machine wrote it (with / or backslashes)."""
    return PurePosixPath(path.replace("\\", "/")).name or path


def _named_by_file(source: SourceRef | None) -> SourceRef | None:
    if source is None or file_name(source.path) == source.path:
        return source
    return source.model_copy(update={"path": file_name(source.path)})


def stored_record(run: RunRecord) -> RunRecord:
    """The run as the store keeps it: every source named by its file name alone.

    Where a file lay on the machine that read it (a CI workspace, an upload's temporary
    folder) says nothing about the run, changes between attempts, and does not belong in
    the history; the file name and row still point a person at the entry.
    """
    kernels = tuple(
        k if k.source is None else k.model_copy(update={"source": _named_by_file(k.source)})
        for k in run.kernels
    )
    sources = tuple(_named_by_file(s) or s for s in run.sources)
    return run.model_copy(update={"kernels": kernels, "sources": sources})


def identity(run: RunRecord) -> tuple[str, str]:
    """The canonical JSON of ``stored_record(run)`` and the run's content hash.

    The hash leaves out the timestamp and the file names, takes the repository in lower case
    and the kernels in no order: a run is its measurements, repository, commit, branch, kind
    and device, not when, where or under what name its files were read, in which order its
    kernels were listed, nor how its repository's name was spelt. So a CI job run again, an
    upload retried, a report exported again, or the same file given by another path or as a
    copy stores one run (DESIGN.md: ingest is idempotent). The text keeps the kernels' order.
    """
    pieces: list[str] = []
    digest = write_identity(run, pieces.append)
    return "".join(pieces), digest


def write_identity(run: RunRecord, write: Callable[[str], None]) -> str:
    """``identity`` written piece by piece to ``write`` (a ``RecordWriter``'s); the hash.

    The text is written ``_CHUNK`` kernels at a time around the run's other fields, which
    gives the very text ``canonical_json(stored_record(run))`` gives (tests pin it) without a
    copy of every kernel and one dictionary per kernel of the whole run at once: a million
    kernels took 4-5 KB each and 40% of an ingest that way.
    """
    names = _FileNames()
    frame = _Frame.of(run, names)
    write(frame.record_head + "[")
    digests = _KernelDigests()
    for start in range(0, len(run.kernels), _CHUNK):
        kernels = _kernel_list().dump_python(list(run.kernels[start : start + _CHUNK]), mode="json")
        texts = []
        for kernel in kernels:
            source = kernel.get("source")
            if source:
                source["path"] = names(source["path"])
            text = _dumps(kernel)
            texts.append(text)
            digests.add(_without_place(text) if source else text)
        write(("," if start else "") + ",".join(texts))
    return frame.closed(write, digests)


def identity_of_columns(columns: RunColumns) -> tuple[str, str]:
    """``identity`` of a run read as columns: the same texts, the same hash."""
    pieces: list[str] = []
    digest = write_identity_of_columns(columns, pieces.append)
    return "".join(pieces), digest


def write_identity_of_columns(columns: RunColumns, write: Callable[[str], None]) -> str:
    """``write_identity`` of a run read as columns.

    Each kernel's JSON is written from its chunk's skeleton and columns
    (``collectors.batch``), which give the text its record would dump.
    """
    names = _FileNames()
    frame = _Frame.of(columns.head, names)
    write(frame.record_head + "[")
    digests = _KernelDigests()
    comma = ""
    for chunk in columns.chunks:
        path = chunk.shape.skeleton.get("source") or {}
        shown = names(path["path"]) if path.get("path") else ""
        hashed = list(chunk.texts(""))
        for text in hashed:
            digests.add(_without_place(text))
        write(comma + (chunk.joined(shown)[0] if shown else ",".join(hashed)))
        comma = ","
    return frame.closed(write, digests)


class _KernelDigests:
    """The sha256 of each kernel's hashed JSON: the run's hash takes them sorted, in no order.

    A report exported again, or a JSON upload, may list the same kernels in another order;
    each kernel's figures are still in its own digest. 32 bytes a kernel are held, not its text.
    """

    def __init__(self) -> None:
        self._digests: list[bytes] = []

    def add(self, text: str) -> None:
        """Take one kernel's JSON (its source's file name blanked)."""
        self._digests.append(hashlib.sha256(text.encode()).digest())

    def joined(self) -> bytes:
        """The digests sorted and joined: what the run's hash takes between its brackets."""
        self._digests.sort()
        return b"".join(self._digests)


@dataclass(frozen=True)
class _Frame:
    """The run's canonical JSON (stored, and hashed) around its list of kernels."""

    record_head: str
    record_tail: str
    hash_head: str
    hash_tail: str

    @classmethod
    def of(cls, run: RunRecord, names: _FileNames) -> _Frame:
        top = run.model_dump(mode="json", exclude={"kernels"})
        for source in top["sources"]:
            source["path"] = names(source["path"])
        marker = f"kernels-{uuid.uuid4().hex}"  # where the kernels go: a value no run holds
        top["kernels"] = marker
        record_head, record_tail = _dumps(top).split(_dumps(marker))
        top.pop("timestamp", None)
        # GitHub's names ignore case, and so does the store (``same_repo``): so does the hash.
        top["repo"] = top["repo"].lower() if top.get("repo") else top.get("repo")
        for source in top["sources"]:
            source["path"] = ""
        # A collector notes what it met in the file's order: a report in another order, its notes.
        top["notes"] = sorted(top.get("notes") or ())
        hash_head, hash_tail = _dumps(top).split(_dumps(marker))
        return cls(record_head, record_tail, hash_head, hash_tail)

    def closed(self, write: Callable[[str], None], digests: _KernelDigests) -> str:
        """The hash's hex digest, the kernels and then the record's tail written."""
        write(f"]{self.record_tail}")
        digest = hashlib.sha256(f"{self.hash_head}[".encode())
        digest.update(digests.joined())
        digest.update(f"]{self.hash_tail}".encode())
        return digest.hexdigest()


#: A kernel's source in its canonical JSON (keys sorted: format, path, row).
_SOURCE = re.compile(
    r'"source":\{("format":(?:null|"(?:[^"\\]|\\.)*"),)?'
    r'"path":"(?:[^"\\]|\\.)*","row":(?:null|"(?:[^"\\]|\\.)*")\}'
)


def _without_place(text: str) -> str:
    """``text`` (a kernel's JSON) with its source's file name and place in the file blanked.

    The place (a row, a launch ID, ``benchmarks[3]``) moves when a report lists its kernels in
    another order: the same run again. Replaced in the text when the source occurs once, so no
    parameter's ``path`` or ``row`` can be touched; otherwise the kernel is written again.
    """
    blanked, found = _SOURCE.subn(_blank_source, text)
    if found == 1:
        return blanked
    kernel = json.loads(text)
    kernel["source"].update(path="", row=None)
    return _dumps(kernel)


def _blank_source(found: re.Match[str]) -> str:
    return f'"source":{{{found[1] or ""}"path":"","row":null}}'


#: Kernels serialised at a time by ``identity``.
_CHUNK = 10_000


@functools.cache
def _kernel_list() -> TypeAdapter[list[KernelRecord]]:
    """The serialiser of a list of kernels (the run's own, made once, when first needed)."""
    return TypeAdapter(list[KernelRecord])


class _FileNames:
    """``file_name`` of each path, computed once per path (a file's kernels share it)."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        name = self._names.get(path)
        if name is None:
            name = self._names[path] = file_name(path)
        return name


def content_hash(run: RunRecord) -> str:
    """The content hash of ``run`` (see ``identity``)."""
    return identity(run)[1]


def key_hash(key: str) -> str:
    """sha256 of a kernel identity key (what uniqueness is enforced on)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def as_utc(ts: datetime) -> datetime:
    """A timezone-aware UTC datetime (naive values are taken as UTC, as SQLite returns them)."""
    return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)


def insert_ignore(
    session: StoreSession, table: sa.Table, rows: Sequence[Mapping[str, Any]]
) -> None:
    """Insert rows, skipping those that collide with a unique key (safe under concurrency)."""
    if not rows or copy_ignoring_conflicts(session, table, rows):  # COPY: many, PostgreSQL
        return
    session.execute(insert_skipping_conflicts(session, table), list(rows))


def insert_skipping_conflicts(session: StoreSession, table: sa.Table) -> Any:
    """An INSERT into ``table`` that skips a row colliding with a unique key, in the dialect's SQL.

    ``ON CONFLICT DO NOTHING`` (PostgreSQL, SQLite); ``.returning(...)`` gives no row for one
    skipped.
    """
    dialect = session.get_bind().dialect.name
    # Each dialect's module is imported only when used (PostgreSQL's costs a check 40 ms).
    if dialect == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table).on_conflict_do_nothing()
    if dialect == "sqlite":
        from sqlalchemy.dialects import sqlite

        return sqlite.insert(table).on_conflict_do_nothing()
    return sa.insert(table).prefix_with("IGNORE") if dialect == "mysql" else sa.insert(table)


def same_repo(column: sa.ColumnElement[str], repo: str) -> sa.ColumnElement[bool]:
    """``column`` names ``repo``: GitHub's names ignore case (``Acme/K`` is ``acme/k``)."""
    return sa.func.lower(column) == repo.lower()


def _named_id(
    session: StoreSession, table: sa.Table, name: str, match: sa.ColumnElement[bool] | None = None
) -> int:
    """Id of the row called ``name`` in repositories or devices, created when missing.

    ``match`` finds an existing row (default: the exact name); the oldest match wins.
    """
    where = table.c.name == name if match is None else match
    stmt = sa.select(table.c.id).where(where).order_by(table.c.id).limit(1)
    found = session.execute(stmt).scalar()
    if found is None:
        row: NamedValues = {"name": name, "created_at": datetime.now(UTC)}
        insert_ignore(session, table, [row])
        found = session.execute(stmt).scalar_one()
    return int(found)


def repo_id(*, session: StoreSession, repo: str, create: bool = False) -> int | None:
    """Id of repository ``repo`` in any letter case (created when ``create``), None if unknown.

    The first spelling stored stays the repository's name, so runs uploaded as ``Acme/K``
    and as ``acme/k`` share one history.
    """
    match = same_repo(_REPOS.c.name, repo)
    if create:
        return _named_id(session, _REPOS, repo, match)
    stmt = sa.select(_REPOS.c.id).where(match).order_by(_REPOS.c.id).limit(1)
    found = session.execute(stmt).scalar()
    return None if found is None else int(found)


def device_id(*, session: StoreSession, device: str, create: bool = False) -> int | None:
    """Id of device ``device`` (created when ``create``), None when unknown."""
    if create:
        return _named_id(session, _DEVICES, device)
    found = session.execute(sa.select(_DEVICES.c.id).where(_DEVICES.c.name == device)).scalar()
    return None if found is None else int(found)


def kernel_ids(
    *, session: StoreSession, repo_id: int, kernels: Mapping[str, str], create: bool = True
) -> dict[str, int]:
    """Ids of kernels by identity key (``kernels`` maps key -> display name).

    A large run on PostgreSQL sends every kernel by COPY and gets every id back by one join
    (``service.store.bulk.copy_returning_ids``); otherwise the ids are looked up by hash and
    the missing kernels inserted.
    """
    hashes = {key_hash(k): k for k in kernels}

    def rows(wanted: Iterable[str]) -> Iterator[KernelValues]:
        for h in wanted:
            yield {"repo_id": repo_id, "key": hashes[h], "key_hash": h, "name": kernels[hashes[h]]}

    if create:
        match = ("repo_id", "key_hash")
        copied = copy_returning_ids(session, _KERNELS, rows(hashes), count=len(hashes), match=match)
        if copied is not None:
            return {hashes[h]: i for h, i in copied.items()}
    ids = _kernel_ids_by_hash(session, repo_id, list(hashes))
    missing = [h for h in hashes if h not in ids]
    if create and missing:
        insert_ignore(session, _KERNELS, list(rows(missing)))
        ids.update(_kernel_ids_by_hash(session, repo_id, missing))
    return {hashes[h]: i for h, i in ids.items()}


#: Hashes per lookup: below every driver's parameter limit (SQLite's IN list), and one array
#: parameter per statement on PostgreSQL.
_LOOKUP_CHUNK = 5000
_ARRAY_CHUNK = 50_000


def _kernel_ids_by_hash(session: StoreSession, repo_id: int, hashes: list[str]) -> dict[str, int]:
    """Ids of the repository's kernels with these key hashes, in linear time.

    On PostgreSQL the hashes go as one array (``fastread.one_of``): an ``IN`` list of 5,000
    bind parameters is planned anew each time, and 130,000 kernels took 100 s there.
    """
    table, conn = _KERNELS, session.connection()
    chunk_size = _ARRAY_CHUNK if conn.dialect.name == "postgresql" else _LOOKUP_CHUNK
    found: dict[str, int] = {}
    for start in range(0, len(hashes), chunk_size):
        match = one_of(conn, table.c.key_hash, hashes[start : start + chunk_size])
        stmt = sa.select(table.c.key_hash, table.c.id).where(table.c.repo_id == repo_id, match)
        found.update({h: int(i) for h, i in session.execute(stmt)})
    return found
