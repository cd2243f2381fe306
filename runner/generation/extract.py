"""Code extraction: find the Python code in a model's free-text response.

One pass over the text: thinking sections are cut out, fenced blocks (``` or ~~~, tagged or not) are
found by a single regex scan, and only if no block qualifies is the response read as unfenced code.
`ast.parse` is called a small, bounded number of times, so the cost stays linear in the response size.
"""

from __future__ import annotations

import ast
import re

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*?)[ \t]*$", re.MULTILINE)
_PYTHON_TAGS = frozenset({"", "python", "py", "python3", "py3", "pycon", "ipython"})
_CODE_START = re.compile(
    r"^(?:(?:async[ \t]+)?def[ \t]+\w+[ \t]*\(|class[ \t]+\w+|import[ \t]+\w|from[ \t]+[\w.]+[ \t]+import\b|@\w)",
    re.MULTILINE,
)
_CODE_LINE = re.compile(
    r"(?:async\s|def\s|class\s|import\s|from\s|@|if\s|elif\s|else\b|for\s|while\s|try\b|except\b|finally\b"
    r"|with\s|return\b|raise\b|assert\s|pass\b|#|\"\"\"|'''|[)\]}]"
    r"|[A-Za-z_][\w.]*(?:\[[^\n]*\])?\s*(?:[-+*/%&|^]|//|\*\*|<<|>>)?=(?!=)|[A-Za-z_][\w.]*\()"
)
_MAX_PARSE_TRIES = 4


def strip_thinking(response: str) -> str:
    """Remove <think>...</think> sections, an unterminated <think> to the end, and a leading
    reasoning part that ends with a lone </think> (templates that open the tag in the prompt)."""
    text = _THINK_BLOCK.sub("", response)
    opened = _THINK_OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    last_close = text.lower().rfind("</think>")
    if last_close >= 0:
        text = text[last_close + len("</think>") :]
    return text


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(info tag, body) of each fenced block; an unterminated last fence runs to the end."""
    blocks: list[tuple[str, str]] = []
    opener = None
    for match in _FENCE.finditer(text):
        fence, info = match.group("fence"), match.group("info")
        if opener is None:
            opener = match
        elif fence[0] == opener.group("fence")[0] and len(fence) >= len(opener.group("fence")) and not info:
            blocks.append((opener.group("info").lower(), text[opener.end() + 1 : match.start()]))
            opener = None
    if opener is not None:
        blocks.append((opener.group("info").lower(), text[opener.end() + 1 :]))
    return blocks


def _defines(code: str, entry_point: str) -> bool:
    pattern = rf"^[ \t]*(?:async[ \t]+)?def[ \t]+{re.escape(entry_point)}[ \t]*\("
    return re.search(pattern, code, re.MULTILINE) is not None


def _python_looking(tag: str, body: str) -> bool:
    language = tag.split()[0] if tag else ""
    if language not in _PYTHON_TAGS:
        return False
    return bool(language) or _CODE_START.search(body) is not None


def _unfenced(text: str) -> str | None:
    """Code in a response without fences: the text itself, or the code after leading prose."""
    first = _CODE_START.search(text)
    if first is None:
        return None
    lines = text[first.start() :].split("\n")
    end = len(lines)
    for index, line in enumerate(lines):
        if index and line.strip() and not line[0].isspace() and not _CODE_LINE.match(line):
            end = index
            break
    code = "\n".join(lines[:end]).rstrip()
    for _ in range(_MAX_PARSE_TRIES):
        try:
            ast.parse(code)
            return code + "\n"
        except SyntaxError as err:
            line = err.lineno or 0
            if line <= 1:
                break
            code = "\n".join(code.split("\n")[: line - 1]).rstrip()
        except ValueError:
            break
    return code + "\n" if code else None


def extract_code(response: str, entry_point: str) -> str | None:
    """The Python code in `response`, or None when there is none (outcome `no_code`).

    Fenced blocks win: the first Python-looking block that defines `entry_point`, else the first
    Python-looking block (tag python/py/none). Without a usable block, unfenced code is taken from
    the first line starting with def/import/from/class/@ to the end, minus trailing prose.
    """
    text = strip_thinking(response)
    blocks = [body for tag, body in _fenced_blocks(text) if _python_looking(tag, body)]
    blocks = [body for body in blocks if body.strip()]
    for body in blocks:
        if _defines(body, entry_point):
            return body.rstrip() + "\n"
    if blocks:
        return blocks[0].rstrip() + "\n"
    return _unfenced(_FENCE.sub("", text))
