"""``terminal_text``: names from reports cannot drive the terminal they are printed on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.render.escape import csv_cell, terminal_text

OSC8 = "\x1b]8;;https://evil.example/\x1b\\gemv_kernel\x1b]8;;\x1b\\"


@pytest.mark.parametrize(
    ("name", "printed"),
    [
        (OSC8, "gemv_kernel"),  # a hyperlink that reads as a kernel name
        ("gemv\x1b]8;;https://evil.example/\x07<half>\x1b]8;;\x07", "gemv<half>"),  # BEL end
        ("\x1b]0;pwned\x07gemm", "gemm"),  # window title
        ("\x1b[2J\x1b[1;1Hgemm\x1b[31m", "gemm"),  # clear screen, move, colour
        ("\x9b2Jgemm\x9d8;;x\x9c", "gemm"),  # the 8-bit (C1) forms
        ("\x1bPqdcs payload\x1b\\gemm", "gemm"),  # device control string
        ("gemm\x1b]8;;unterminated", "gemm8;;unterminated"),  # nothing left to interpret
        ("gemm\x1bc", "gemm"),  # full reset
        ("two\nlines\rand\ttabs", "two lines and tabs"),
        ("void k<float, 4>(float const*)", "void k<float, 4>(float const*)"),
    ],
)
def test_escape_sequences_are_removed(name, printed) -> None:
    assert terminal_text(name) == printed


@given(st.text(alphabet=st.characters(codec="utf-8")))
def test_no_control_character_survives(name) -> None:
    text = terminal_text(name)
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in text)


@pytest.mark.parametrize(
    ("cell", "safe"),
    [
        ("=1+1", "'=1+1"),
        ("+cmd", "'+cmd"),
        ("-x", "'-x"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("gemv", "gemv"),
        (-1.5, -1.5),
        (None, None),
    ],
)
def test_csv_cells_that_look_like_formulas_are_quoted(cell, safe) -> None:
    assert csv_cell(cell) == safe


def test_the_rich_tables_clean_names_of_whole_sequences() -> None:
    from service.render.text import clean

    assert clean(OSC8 + "\x1b]0;title\x07") == "gemv_kernel"
