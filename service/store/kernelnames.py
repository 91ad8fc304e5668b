"""A kernel as a user names it: its identity key, or its name as the verdict prints it.

The verdict prints ``void softmax_kernel<float, 8192>(const float*, float*, int)`` where the
key is ``softmax_kernel<float, 8192>``, and tables cut long names in the middle (``…``). Every
command and page that takes a kernel (``plot kernel``, the kernel history API and page,
``/roofguard accept``) resolves it here, so each of those spellings finds the same kernel.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import sqlalchemy as sa

from collectors import normalise_name
from service.errors import BadInput
from service.store.coretables import KERNELS as _KERNELS
from service.store.ids import key_hash, repo_id
from service.store.sessions import StoreSession

_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ELLIPSIS = "…"
#: Characters of a word the candidates' LIKE looks for: SQLite refuses a pattern over 50,000
#: bytes ("pattern too complex"), which answered a long key 503 "history store failed".
#: ``matching_keys`` then checks the whole text, so a shorter pattern finds no other kernel.
LIKE_WORD_CHARS = 1_000


def _plain(text: str) -> str:
    return _SPACE.sub(" ", text.strip())


def _cut_matches(text: str, value: str) -> bool:
    """``value`` is what ``text``, a name cut in the middle (``head…tail``), was cut from."""
    head, _, tail = text.partition(ELLIPSIS)
    return len(value) > len(head) + len(tail) and value.startswith(head) and value.endswith(tail)


def matching_keys(text: str, kernels: Iterable[tuple[str, str]]) -> list[str]:
    """Keys of the ``(key, name)`` pairs that ``text`` names, the closest spelling first.

    In order: the key itself; the name as printed; the name's key (return type and
    parameter list dropped, as identity keys are); a name or key cut in the middle, whole or
    compacted first (``service.render.names``: ``softmax_k…8192>(…)``). The
    first of these that matches anything decides; several keys mean the text is ambiguous.
    """
    plain = _plain(text)
    normal = normalise_name(plain)
    pairs = [(key, _plain(name)) for key, name in kernels]
    tiers = (
        lambda key, name: key == plain,
        lambda key, name: name == plain,
        lambda key, name: normal in (key, normalise_name(name)),
        lambda key, name: (
            ELLIPSIS in plain
            and any(_cut_matches(cut, value) for cut in (plain, normal) for value in (key, name))
        ),
    )
    for matches in tiers:
        found = sorted({key for key, name in pairs if matches(key, name)})
        if found:
            return found
    return []


def resolve_kernel_key(*, session: StoreSession, repo: str, text: str) -> str:
    """The identity key of the kernel of ``repo`` that ``text`` names (see the module).

    A text that names no stored kernel comes back as it is, so the caller's "no history"
    names what the user typed.

    Raises:
        BadInput: The text names several kernels (e.g. one name launched with two
            configurations); the error lists their keys.
    """
    rid = repo_id(session=session, repo=repo)
    if rid is None:
        return text
    exact = sa.select(_KERNELS.c.key).where(
        _KERNELS.c.repo_id == rid, _KERNELS.c.key_hash == key_hash(text)
    )
    if session.execute(exact).first() is not None:
        return text
    found = matching_keys(text, _candidates(session, rid, text))
    if len(found) > 1:
        shown = ", ".join(repr(k) for k in found[:5]) + (" ..." if len(found) > 5 else "")
        raise BadInput(
            f"kernel {text!r} names {len(found)} kernels of {repo}: {shown}; give its key"
        )
    return found[0] if found else text


def _candidates(session: StoreSession, rid: int, text: str) -> list[tuple[str, str]]:
    """The kernels of the repository whose key or name holds the text's longest word."""
    words = _WORD.findall(text)
    if not words:
        return []
    word = max(words, key=len)[:LIKE_WORD_CHARS]
    pattern = "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    stmt = sa.select(_KERNELS.c.key, _KERNELS.c.name).where(
        _KERNELS.c.repo_id == rid,
        sa.or_(
            _KERNELS.c.key.like(pattern, escape="\\"), _KERNELS.c.name.like(pattern, escape="\\")
        ),
    )
    return [(str(key), str(name)) for key, name in session.execute(stmt)]
