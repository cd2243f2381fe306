import pytest
from inline_snapshot import snapshot

from tablefmt import STYLE_NAMES, render

ROWS = [["apple", 3, 1.5], ["東京", 12, None], ["kiwi"]]
HEADERS = ["name", "qty", "price"]


def test_plain():
    assert render(ROWS, HEADERS) == snapshot("""\
name   qty  price
apple    3    1.5
東京    12
kiwi\
""")


def test_simple():
    assert render(ROWS, HEADERS, style="simple") == snapshot("""\
name   qty  price
-----  ---  -----
apple    3    1.5
東京    12
kiwi\
""")


def test_grid():
    assert render(ROWS, HEADERS, style="grid") == snapshot("""\
+-------+-----+-------+
| name  | qty | price |
+=======+=====+=======+
| apple |   3 |   1.5 |
+-------+-----+-------+
| 東京  |  12 |       |
+-------+-----+-------+
| kiwi  |     |       |
+-------+-----+-------+\
""")


def test_markdown():
    table = render(ROWS, HEADERS, style="markdown", align=["center", "right", "left"])
    assert table == snapshot("""\
| name  | qty | price |
|:-----:|----:|:------|
| apple |   3 | 1.5   |
| 東京  |  12 |       |
| kiwi  |     |       |\
""")


def test_rst():
    assert render(ROWS, HEADERS, style="rst") == snapshot("""\
=====  ===  =====
name   qty  price
=====  ===  =====
apple    3    1.5
東京    12
kiwi
=====  ===  =====\
""")


@pytest.mark.parametrize("style", STYLE_NAMES)
def test_without_headers(style):
    assert (
        render([["a", "bb"], ["ccc", None]], style=style, missing="-")
        == snapshot(
            {
                "plain": """\
a    bb
ccc  -\
""",
                "simple": """\
a    bb
ccc  -\
""",
                "grid": """\
+-----+----+
| a   | bb |
+-----+----+
| ccc | -  |
+-----+----+\
""",
                "markdown": """\
| a   | bb |
| ccc | -  |\
""",
                "rst": """\
===  ==
a    bb
ccc  -
===  ==\
""",
            }
        )[style]
    )


@pytest.mark.parametrize("style", STYLE_NAMES)
def test_headers_only_and_empty(style):
    assert (
        render([], ["x", "long header"], style=style)
        == snapshot(
            {
                "plain": "x  long header",
                "simple": """\
x  long header
-  -----------\
""",
                "grid": """\
+---+-------------+
| x | long header |
+===+=============+
+---+-------------+\
""",
                "markdown": """\
| x | long header |
|:--|:------------|\
""",
                "rst": """\
=  ===========
x  long header
=  ===========
=  ===========\
""",
            }
        )[style]
    )
    assert render([], style=style) == ""


def test_default_alignment_of_numbers_and_missing_cells():
    rows = [[1, "x", "1e3"], [None, "yy", "-2.5"], [30, "", "n/a"]]
    assert render(rows, ["n", "s", "mixed"], style="grid", missing="?") == snapshot("""\
+----+----+-------+
|  n | s  | mixed |
+====+====+=======+
|  1 | x  | 1e3   |
+----+----+-------+
|  ? | yy | -2.5  |
+----+----+-------+
| 30 |    | n/a   |
+----+----+-------+\
""")


def test_single_column_and_wide_cells():
    assert render([["東京タワー"], ["e\u0301"]], ["city"], style="markdown") == snapshot("""\
| city       |
|:-----------|
| 東京タワー |
| é          |\
""")


def test_errors():
    with pytest.raises(
        ValueError, match=r"unknown style 'fancy'; choose one of grid, markdown, plain, rst, simple"
    ):
        render(ROWS, style="fancy")
    with pytest.raises(ValueError, match="align has 2 entries for 3 columns"):
        render(ROWS, align=["left", "left"])
    with pytest.raises(ValueError, match="align must be one of"):
        render(ROWS, align="middle")
