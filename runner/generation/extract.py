"""Code extraction: find the Python code in a model's free-text response.

One pass over the text: thinking sections are cut out, fenced blocks (``` or ~~~, tagged or not) are
found by a single regex scan, and only if no block qualifies is the response read as unfenced code.
`ast.parse` is called a small, bounded number of times, so the cost stays linear in the response size.

The fence styles models really write are read as formatting, not code: ```py / ```python3 / ```Python,
an untagged fence with the language name alone on the next line (```\npython\n...), a fence opened
twice, an unclosed last fence, prose between blocks. Of several blocks the one defining the entry point
is taken, with the helper functions, classes and imports it uses from the other blocks. Whatever
extraction changed or dropped in the chosen block is said in `Extraction.changes`.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass

from runner.syntax_tree import parse_tree

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
_LANGUAGE_LINE = re.compile(r"[ \t]*(?:python3?|py3?)[ \t]*:?[ \t]*", re.IGNORECASE)
_BUILTIN_NAMES = frozenset(dir(builtins))


@dataclass(frozen=True)
class Extraction:
    """The code found in a response (None: no code) and what extraction changed or dropped to get it."""

    code: str | None
    changes: tuple[str, ...] = ()


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
    """(info tag, body) of each fenced block; an unterminated last fence runs to the end.

    A fence right after an opener (nothing between them) opens the block again: a model continuing a
    pre-filled ```python often writes its own opening fence. A tagged fence later inside an open block
    opens a new block (a fence line is never Python): the model forgot to close the one before.
    """
    blocks: list[tuple[str, str]] = []
    opener = None
    for match in _FENCE.finditer(text):
        fence, info = match.group("fence"), match.group("info")
        if opener is None:
            opener = match
            continue
        body = text[opener.end() + 1 : match.start()]
        same_kind = fence[0] == opener.group("fence")[0]
        if same_kind and not body.strip():
            opener = match  # opened again (a model continuing a pre-filled ```python often opens its own)
        elif same_kind and len(fence) >= len(opener.group("fence")) and not info:
            blocks.append((opener.group("info").lower(), body))
            opener = None
        elif same_kind and info:
            blocks.append((opener.group("info").lower(), body))
            opener = match
    if opener is not None:
        blocks.append((opener.group("info").lower(), text[opener.end() + 1 :]))
    return blocks


def _language(tag: str) -> str:
    return re.split(r"[\s:{,]", tag, maxsplit=1)[0] if tag else ""


def _drop_language_line(tag: str, body: str) -> tuple[str, str, str | None]:
    """A first body line that is only a language name (```\npython\n...) is formatting: drop it."""
    first, newline, rest = body.lstrip("\n").partition("\n")
    if _LANGUAGE_LINE.fullmatch(first) and (not tag or _language(tag) in _PYTHON_TAGS):
        note = f"dropped the line {first.strip()!r} after the opening fence: a language name, not code"
        return tag or first.strip().lower(), rest if newline else "", note
    return tag, body, None


def _defines(code: str, entry_point: str) -> bool:
    pattern = rf"^[ \t]*(?:async[ \t]+)?def[ \t]+{re.escape(entry_point)}[ \t]*\("
    return re.search(pattern, code, re.MULTILINE) is not None


def _python_looking(tag: str, body: str) -> bool:
    language = _language(tag)
    if language not in _PYTHON_TAGS:
        return False
    return bool(language) or _CODE_START.search(body) is not None


def _unfenced(text: str) -> Extraction:
    """Code in a response without fences: the text itself, or the code after leading prose."""
    first = _CODE_START.search(text)
    if first is None:
        return Extraction(None)
    lines = text[first.start() :].split("\n")
    end = len(lines)
    for index, line in enumerate(lines):
        if index and line.strip() and not line[0].isspace() and not _CODE_LINE.match(line):
            end = index
            break
    code = "\n".join(lines[:end]).rstrip()
    whole = code
    for _ in range(_MAX_PARSE_TRIES):
        try:
            parse_tree(code)
            break
        except SyntaxError as err:
            line = err.lineno or 0
            if line <= 1:
                break
            code = "\n".join(code.split("\n")[: line - 1]).rstrip()
        except ValueError:
            break
    if not code:
        return Extraction(None)
    dropped = whole.count("\n") - code.count("\n")
    changes = (f"dropped the last {dropped} line(s) of unfenced code: they do not parse",) if dropped else ()
    return Extraction(code + "\n", changes)


def _tree(code: str) -> ast.Module | None:
    try:
        return parse_tree(code)
    except (SyntaxError, ValueError):
        return None


def _top_level_names(node: ast.stmt) -> set[str]:
    """The names a top-level def, class, import or assignment binds (empty for other statements)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _free_names(tree: ast.AST) -> set[str]:
    """Names read in `tree` that it never binds anywhere (a rough, conservative scope analysis)."""
    read, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.stmt):
            bound |= _top_level_names(node)
    return read - bound - _BUILTIN_NAMES


def _with_helpers(chosen: str, others: list[str]) -> tuple[str, tuple[str, ...]]:
    """`chosen` plus the top-level definitions of other blocks that it (transitively) needs."""
    tree = _tree(chosen)
    if tree is None:
        return chosen, ()
    latest: dict[str, tuple[int, ast.stmt, str]] = {}  # name -> its last definition in the other blocks
    order = 0
    for body in others:
        other = _tree(body)
        for node in other.body if other is not None else ():
            order += 1
            for name in _top_level_names(node):
                latest[name] = (order, node, ast.get_source_segment(body, node) or ast.unparse(node))
    have = set().union(*(_top_level_names(node) for node in tree.body))
    taken: dict[int, tuple[ast.stmt, str]] = {}
    wanted = _free_names(tree)
    while wanted:
        found = {latest[name] for name in wanted if name in latest and latest[name][0] not in taken}
        taken.update((order, (node, source)) for order, node, source in found)
        have |= wanted
        wanted = set().union(*(_free_names(node) for _, node, _ in found)) - have
    if not taken:
        return chosen, ()
    parts = [taken[order] for order in sorted(taken)]
    imports = [src for node, src in parts if isinstance(node, ast.Import | ast.ImportFrom)]
    rest = [src for node, src in parts if not isinstance(node, ast.Import | ast.ImportFrom)]
    added = sorted(set().union(*(_top_level_names(node) for node, _ in parts)))
    note = "added from other code blocks what the chosen block uses: " + ", ".join(added)
    head = "\n".join(imports) + ("\n\n" if imports and rest else "") + "\n\n\n".join(rest)
    return head.rstrip() + "\n\n\n" + chosen, (note,)


def _choose(blocks: list[str], entry_point: str) -> int:
    """Index of the block to take: the longest defining the entry point (the later on a tie), else the first."""
    defining = [i for i, body in enumerate(blocks) if _defines(body, entry_point)]
    if not defining:
        return 0
    return max(defining, key=lambda i: (sum(1 for line in blocks[i].split("\n") if line.strip()), i))


def extract(response: str, entry_point: str) -> Extraction:
    """The Python code in `response` (None when there is none: outcome `no_code`) and what was changed.

    Fenced blocks win: of the Python-looking blocks (tag python/py/python3/none, any case), the longest
    that defines `entry_point`, else the first; the definitions it uses from the other blocks are put
    before it. Without a usable block, unfenced code is taken from the first line starting with
    def/import/from/class/@ to the end, minus trailing prose.
    """
    text = strip_thinking(response)
    blocks, notes = [], {}
    for tag, body in _fenced_blocks(text):
        tag, body, note = _drop_language_line(tag, body)
        if _python_looking(tag, body) and body.strip():
            if note:
                notes[len(blocks)] = note
            blocks.append(body)
    if not blocks:
        return _unfenced(_FENCE.sub("", text))
    index = _choose(blocks, entry_point)
    code, added = _with_helpers(blocks[index].rstrip() + "\n", blocks[:index] + blocks[index + 1 :])
    return Extraction(code, tuple(n for n in (notes.get(index),) if n) + added)


def extract_code(response: str, entry_point: str) -> str | None:
    """The Python code in `response`, or None when there is none (see `extract`)."""
    return extract(response, entry_point).code
