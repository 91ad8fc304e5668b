"""Every escaper, in the context it is made for, renders a kernel's name as it is under GFM.

cmark-gfm is what GitHub renders comments with; mentions, issue references and bare URLs are
linked by GitHub afterwards, so the escaped text must leave none of them for it to find.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import given, settings
from hypothesis import strategies as st
from verdict_factory import make_finding, make_kernel, make_verdict

from rules.verdict import KernelStatus
from service.render.escape import WORD_JOINER, escape_code, escape_html, escape_text
from service.render.markdown import render_verdict

#: Pieces of kernel names and of what a hostile report might put in one, space-separated.
_HOSTILE_PIECES = r"""< > & ' " ` `` | \ # #123 #7 @ @octocat @me GH-12 acme/other#9
https://evil.example/x http://a.io www.evil.example a@b.com &amp; &#x27; &#39; &lt; <b> </code>
</summary> <!-- --> :: * _ ~~ [ ]( ) ( ! : . - 1. ="""
_PIECES = (*_HOSTILE_PIECES.split(), ", ", " ")
_IDENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_", min_size=1, max_size=6)
NAMES = (
    st.lists(st.sampled_from(_PIECES) | _IDENT, min_size=1, max_size=14)
    .map(lambda parts: "".join(parts).strip())
    .filter(bool)
)


def _gfm(text: str) -> str:
    """GitHub's renderer, raw HTML allowed (GitHub sanitises afterwards)."""
    return cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE)


def _shown(fragment: str) -> str:
    """The text a reader sees: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def _summary(name: str) -> tuple[str, str]:
    block = f"<details><summary><code>{escape_html(name)}</code></summary>\n\nbody\n\n</details>"
    return block, r"<summary>(.*)</summary>"


def _prose(name: str) -> tuple[str, str]:
    return f"fell: {escape_text(name)}", r"<p>fell: (.*)</p>"


def _text_cell(name: str) -> tuple[str, str]:
    return f"| a | b |\n|---|---|\n| x | {escape_text(name)} |", r"<td>x</td>\s*<td>(.*)</td>"


def _code(name: str) -> tuple[str, str]:
    return f"fell: {escape_code(name)}", r"<p>fell: (.*)</p>"


def _code_cell(name: str) -> tuple[str, str]:
    table = f"| a | b |\n|---|---|\n| x | {escape_code(name, in_table=True)} |"
    return table, r"<td>x</td>\s*<td>(.*)</td>"


CONTEXTS: dict[str, Callable[[str], tuple[str, str]]] = {
    "escape_html in <summary>": _summary,
    "escape_text in prose": _prose,
    "escape_text in a table cell": _text_cell,
    "escape_code in prose": _code,
    "escape_code in a table cell": _code_cell,
}


def _rendered(context: str, name: str) -> tuple[str, str]:
    """The whole rendering, and what a reader sees where the name went."""
    markdown, where = CONTEXTS[context](name)
    out = _gfm(markdown)
    match = re.search(where, out, flags=re.S)
    assert match, out
    return out, _shown(match.group(1))


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize(
    "name", ["copy_kernel<'q'>", "new_k<\"x\">&'y'<b>bold</b>", "k<'#12'> @me &#x27;"]
)
def test_names_with_apostrophes_read_as_given(context: str, name: str) -> None:
    """``'`` became ``&#x27;`` and then a word joiner split the entity: ``&#⁠x27;`` showed."""
    _, shown = _rendered(context, name)
    assert shown.replace(WORD_JOINER, "") == name


@settings(max_examples=100)
@given(name=NAMES)
@pytest.mark.parametrize("context", CONTEXTS)
def test_every_escaped_name_renders_as_itself_without_links(context: str, name: str) -> None:
    out, shown = _rendered(context, name)
    assert shown.replace(WORD_JOINER, "") == name
    assert "<a" not in out  # no autolink, no link, no injected anchor
    if "code" not in context:  # GitHub links no mention or reference inside <code>
        unlinked = rf"[@#](?!{WORD_JOINER})|://|www\.(?!{WORD_JOINER})|\bGH-\d"
        assert not re.search(unlinked, shown, flags=re.IGNORECASE)


def test_the_comment_headers_a_finding_with_the_kernel_as_named() -> None:
    """The PR comment's ``<summary>``, as the probe saw it: ``new_k<"x">&&#x27;y&#x27;...``."""
    name = "new_k<\"x\">&'y'<b>bold</b> #12"
    kernel = make_kernel(name, status=KernelStatus.REGRESSED, pct=50.0, center=80.0)
    out = _gfm(render_verdict(make_verdict([kernel], [make_finding(kernel)])))
    summaries = [_shown(s) for s in re.findall(r"<summary>(.*?)</summary>", out, flags=re.S)]
    assert [s.replace(WORD_JOINER, "") for s in summaries] == [f"❌ roof-drop: {name}"]
    assert f"#{WORD_JOINER}12" in summaries[0]
