r"""Escaping for strings that come from reports or users (kernel names, branches, notes).

GitHub renders PR comments as GFM, then links ``@user`` / ``#123``, then sanitises the HTML.
Everything here follows GitHub's documented rendering (GFM spec, the sanitiser's allow-list)
and was checked with cmark-gfm:

* code spans: the fence is one backtick longer than the longest backtick run inside, padded
  with a space when the content starts or ends with a backtick; ``<``/``&`` stay literal there
  and mentions are not linked inside ``<code>``.
* tables: GFM splits rows on ``|`` before inline parsing, so ``|`` is escaped even in code spans.
* text: every ASCII punctuation character is backslash-escaped (no HTML, no links, no
  emphasis); a word joiner after ``@`` and ``#`` stops mentions and issue references
  (``\\@user`` still pings on GitHub), after the ``-`` of ``GH-123``, and after the ``:`` of a
  scheme and the ``.`` of ``www.`` so that no autolink forms.
* newlines and other control characters become spaces, so one string is one line.
"""

from __future__ import annotations

import functools
import html
import re
import string
from urllib.parse import quote, urlsplit

#: U+2060 WORD JOINER: invisible, and breaks GitHub's mention/reference/autolink matching.
WORD_JOINER = "\u2060"
#: Bidirectional overrides can make a name read differently from what it is (Trojan Source).
_BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_CONTROL = re.compile(f"[\x00-\x1f\x7f{_BIDI}]")
#: Each ASCII punctuation character to itself behind a backslash (one ``str.translate``).
_ESCAPE_PUNCTUATION = str.maketrans({c: f"\\{c}" for c in string.punctuation})
_BACKTICK_RUN = re.compile(r"`+")
#: Characters after which a word joiner is inserted in prose and HTML text.
_NO_LINK = re.compile(r"([@#]|(?<=[A-Za-z]):(?=//)|(?<=[Ww]{3})\.|(?<=\b[Gg][Hh])-(?=\d))")
_SAFE_URL_CHARS = "-._~:/?#[]@!$&'*+,;=%"
_MARKER_VALUE = re.compile(r"[^A-Za-z0-9._/+-]+")


_BIDI_ONLY = re.compile(f"[{_BIDI}]")


def without_bidi(value: object) -> object:
    """A page's value with bidirectional overrides as spaces (markup stays markup).

    Autoescaped HTML kept them: a kernel named ``gemm_<U+202E>rlo_kernel`` reversed the rest
    of roofguard's sentence about it on the run page, figures included. Jinja's ``finalize``
    for the HTML pages and the digest.
    """
    if not isinstance(value, str) or not _BIDI_ONLY.search(value):
        return value
    return type(value)(bidi_free(value))  # ``Markup`` is a ``str`` of its own type


def bidi_free(text: str) -> str:
    """``text`` with bidirectional overrides as spaces: ``without_bidi`` of a plain string."""
    return _BIDI_ONLY.sub(" ", text)


def flatten(value: str) -> str:
    """One line: newlines, tabs, other control characters and bidi overrides become spaces."""
    return _CONTROL.sub(" ", value.replace("\r\n", "\n"))


def shorten(value: str, limit: int) -> str:
    """Cut ``value`` to at most ``limit`` characters, ending with an ellipsis when cut."""
    if len(value) <= limit:
        return value
    return value[: max(limit - 1, 0)] + "…"


def cut_utf8(text: str, max_bytes: int, note: str) -> str:
    """``text`` in at most ``max_bytes`` of UTF-8: cut at a line end, ``note`` appended."""
    data = text.encode()
    if len(data) <= max_bytes:
        return text
    cut = data[: max(max_bytes - len(note.encode()), 0)].decode(errors="ignore")
    return cut[: cut.rfind("\n") + 1 or len(cut)] + note


def _no_links(value: str) -> str:
    return _NO_LINK.sub(r"\1" + WORD_JOINER, value)


def escape_code(value: str, *, in_table: bool = False, limit: int | None = None) -> str:
    r"""``value`` as an inline code span that renders exactly as given (on one line).

    Args:
        value: Any string, e.g. ``void gemm<float, 128>(float const*, int)``.
        in_table: Escape ``|`` as ``\\|`` (required inside GFM table cells, even in code).
        limit: Shorten to this many characters first.
    """
    text = flatten(value)
    if limit is not None:
        text = shorten(text, limit)
    if not text.strip():
        return "*(empty)*"
    runs = [len(run) for run in _BACKTICK_RUN.findall(text)]
    fence = "`" * (max(runs, default=0) + 1)
    if text.startswith("`") or text.endswith("`") or (text[0] == " " and text[-1] == " "):
        text = f" {text} "
    if in_table:
        text = text.replace("|", r"\|")
    return f"{fence}{text}{fence}"


def escape_text(value: str, *, limit: int | None = None) -> str:
    """``value`` as plain markdown text: no markup, HTML, links, mentions or references."""
    if len(value) <= _CACHED_LENGTH:
        return _escaped_short_text(value, limit)
    return _escaped_text(value, limit)


def _escaped_text(value: str, limit: int | None) -> str:
    text = flatten(value)
    if limit is not None:
        text = shorten(text, limit)
    return _no_links(text).translate(_ESCAPE_PUNCTUATION)


#: A verdict escapes the same labels, devices and units once per finding: each string once.
#: Only short strings are kept, so a service fed 64 KiB kernel names keeps at most about
#: 4096 x 256 characters (and their escapes), not 4096 such names.
_CACHED_LENGTH = 256
_escaped_short_text = functools.lru_cache(maxsize=4096)(_escaped_text)


def escape_html(value: str, *, limit: int | None = None) -> str:
    """``value`` as text inside a raw HTML block (e.g. ``<summary>``): entities, no links.

    The word joiners go in before the entities: after them, the ``#`` of ``&#x27;`` got one
    and a kernel ``k<'q'>`` read ``k<&#x27;q&#x27;>`` in its finding's header.
    """
    text = flatten(value)
    if limit is not None:
        text = shorten(text, limit)
    return html.escape(_no_links(text), quote=True)


def safe_url(url: str | None) -> str | None:
    """An http(s) URL fit for a markdown link destination, or None when it is not one.

    Parentheses, spaces, angle brackets and quotes are percent-encoded so the URL cannot end
    the link early or smuggle markup; other schemes (``javascript:``, ``data:``) are refused.
    """
    if not url:
        return None
    parts = urlsplit(flatten(url).strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return quote(parts.geturl(), safe=_SAFE_URL_CHARS)


def marker_value(value: str | int | None) -> str:
    """A value safe inside an HTML comment marker (no ``-->``, no spaces): ``_`` elsewhere."""
    text = _MARKER_VALUE.sub("_", str(value if value is not None else "-"))
    return text.replace("--", "-_") or "-"


#: Terminal control sequences: CSI (colours, cursor moves), OSC (``ESC ]``: titles, OSC 8
#: hyperlinks) up to BEL or ST, other two-byte escapes, and the C1 forms of CSI/OSC/DCS.
_TERMINAL_ESCAPE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI ... final byte (7-bit and C1 forms)
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c)"  # OSC, DCS ... BEL/ST
    r"|\x1b[ -~]?"  # two-byte escapes, a lone ESC, or the opening of an unterminated one
    r"|[\x80-\x9f]",  # any other C1 control
    re.DOTALL,
)


def strip_terminal_escapes(value: str) -> str:
    """``value`` without terminal escape sequences (whole: OSC 8 targets, titles, CSI codes).

    A kernel name from a report could otherwise set the window title, draw an OSC 8
    hyperlink that points elsewhere than it reads, move the cursor over earlier output or
    recolour the rest of the screen. Dropping only the ESC byte would leave the rest of the
    sequence (``]8;;https://...``) printed as if it were the name.
    """
    return _TERMINAL_ESCAPE.sub("", value)


def terminal_text(value: str) -> str:
    """``value`` safe to print on a terminal, on one line (escapes removed, controls spaces)."""
    return flatten(strip_terminal_escapes(value))


def csv_cell(value: object) -> object:
    """A value safe in a spreadsheet: text starting like a formula gets a leading ``'``.

    Spreadsheets evaluate cells beginning with ``=``, ``+``, ``-``, ``@``, tab or CR (OWASP's
    CSV injection list), so a kernel named ``=HYPERLINK(...)`` would run on opening. Numbers
    are left alone: a negative number is not a formula.
    """
    if isinstance(value, str) and value[:1] in _FORMULA_START:
        return "'" + value
    return value


_FORMULA_START = frozenset("=+-@\t\r")


def escape_command_data(value: str) -> str:
    """Escape the message of a workflow command (``::error ...::message``)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_command_property(value: str) -> str:
    """Escape a property value of a workflow command (``file=``, ``title=``)."""
    return escape_command_data(value).replace(":", "%3A").replace(",", "%2C")
