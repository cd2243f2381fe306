import pytest
from inline_snapshot import snapshot

import tablefmt
from tablefmt import render

ROWS = [["apple", 3], ["東京", 12], ["kiwi", None]]


@pytest.fixture(autouse=True)
def restore_registry():
    saved = dict(tablefmt.STYLES)
    yield
    tablefmt.STYLES.clear()
    tablefmt.STYLES.update(saved)


def dotted():
    rule = tablefmt.Line("~", "#", "#")
    return tablefmt.Style(edge="#", gap="#", padding=1, top=rule, bottom=rule)


def test_builtin_styles_are_registered():
    assert sorted(tablefmt.STYLES) == ["grid", "markdown", "plain", "rst", "simple"]
    assert all(isinstance(s, tablefmt.Style) for s in tablefmt.STYLES.values())
    assert tablefmt.get_style("grid") is tablefmt.STYLES["grid"]


def test_builtin_styles_as_data():
    assert tablefmt.STYLES["plain"] == tablefmt.Style()
    assert tablefmt.STYLES["simple"] == tablefmt.Style(below_header=tablefmt.Line("-", joint="  "))
    markdown = tablefmt.STYLES["markdown"]
    assert (markdown.edge, markdown.gap, markdown.padding, markdown.align_markers) == (
        "|",
        "|",
        1,
        True,
    )
    assert tablefmt.STYLES["grid"].between_rows == tablefmt.Line("-", "+", "+")


def test_render_with_a_style_instance():
    assert render(ROWS, ["fruit", "n"], style=dotted()) == snapshot("""\
#~~~~~~~#~~~~#
# fruit #  n #
# apple #  3 #
# 東京  # 12 #
# kiwi  #    #
#~~~~~~~#~~~~#\
""")


def test_registered_style_renders_by_name():
    tablefmt.register_style("dotted", dotted())
    assert render(ROWS, ["fruit", "n"], style="dotted") == render(
        ROWS, ["fruit", "n"], style=dotted()
    )


def test_rules_between_rows_and_markers():
    style = tablefmt.Style(
        gap=" : ",
        below_header=tablefmt.Line("-", joint=" : "),
        between_rows=tablefmt.Line(".", joint=" : "),
        align_markers=True,
    )
    assert render(ROWS, ["fruit", "n"], style=style, align=["center", "right"]) == snapshot("""\
fruit :  n
:---: : -:
apple :  3
..... : ..
東京  : 12
..... : ..
kiwi  :\
""")


def test_same_name_cannot_be_registered_twice():
    tablefmt.register_style("dotted", dotted())
    with pytest.raises(ValueError, match="already registered"):
        tablefmt.register_style("dotted", tablefmt.Style())
    with pytest.raises(ValueError, match="already registered"):
        tablefmt.register_style("grid", tablefmt.Style())
    assert tablefmt.STYLES["dotted"] == dotted()


def test_unknown_style_lists_registered_names():
    tablefmt.register_style("dotted", dotted())
    with pytest.raises(
        ValueError, match=r"unknown style 'fancy'; choose one of dotted, grid, markdown"
    ):
        tablefmt.get_style("fancy")
    with pytest.raises(ValueError, match=r"unknown style 'fancy'"):
        render(ROWS, style="fancy")
