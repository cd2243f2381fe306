"""The answer to a repo task found in a reply: a unified diff, or whole files (`repo.answer`).

A diff is read from fenced blocks tagged `diff` / `patch` (or any fenced block that looks like a diff),
several blocks joined in order; without a fence, from the first `diff --git` or `--- ` line to the end.
Whole files are fenced blocks each named by the line before it (`File: pkg/mod.py`, `### pkg/mod.py`,
`` `pkg/mod.py` ``) or by the fence's info after the language (```` ```python pkg/mod.py ````); the answer
is then the JSON object {path: new content} that `runner.repo.patch.apply_answer` takes.
"""

from __future__ import annotations

import json
import re

from runner.generation.extract import Extraction, strip_thinking

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([^`\n]*?)[ \t]*$")
_DIFF_TAGS = ("diff", "patch", "udiff")
_DIFF_START = re.compile(r"^(diff --git |--- )", re.MULTILINE)
_PATH = re.compile(r"[A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-]+)*\.[A-Za-z0-9]+")


def fenced(text: str) -> list[tuple[str, str, str]]:
    """(info, body, the non-empty line before the fence) of each fenced block; an unclosed last one runs to the end."""
    blocks, lines = [], text.splitlines()
    opened, before, body, last = None, "", [], ""
    for line in lines:
        match = _FENCE.match(line)
        if opened is None:
            if match:
                opened, before, body = match, last, []
            elif line.strip():
                last = line.strip()
        elif match and match.group(1)[0] == opened.group(1)[0] and not match.group(2):
            blocks.append((opened.group(2).strip(), "\n".join(body) + "\n", before))
            opened, last = None, ""
        else:
            body.append(line)
    if opened is not None:
        blocks.append((opened.group(2).strip(), "\n".join(body) + "\n", before))
    return blocks


def _looks_like_diff(body: str) -> bool:
    return bool(re.search(r"^--- ", body, re.MULTILINE) and re.search(r"^\+\+\+ ", body, re.MULTILINE))


def extract_diff(response: str) -> Extraction:
    """The unified diff in a reply, or Extraction(None) if there is none."""
    text = strip_thinking(response)
    blocks = [b for info, b, _ in fenced(text) if info.split(" ")[0].lower() in _DIFF_TAGS or _looks_like_diff(b)]
    if blocks:
        changes = (f"joined {len(blocks)} diff blocks",) if len(blocks) > 1 else ()
        return Extraction("".join(blocks), changes)
    start = _DIFF_START.search(text)
    if start is None:
        return Extraction(None)
    return Extraction(text[start.start() :].rstrip("\n") + "\n", ("unfenced diff",))


def _path_of(info: str, before: str) -> str | None:
    words = info.split()
    for word in words[1:] if len(words) > 1 else words:
        if "/" in word or _PATH.fullmatch(word) and "." in word:
            match = _PATH.fullmatch(word.strip("`*:"))
            if match:
                return match.group(0)
    cleaned = re.sub(r"^(#+|\*\*|[-*]\s)|(?i:file\s*:)|[`*:]", " ", before).split()
    found = [w for w in cleaned if _PATH.fullmatch(w)]
    return found[-1] if found else None


def extract_files(response: str, shown: tuple[str, ...] = ()) -> Extraction:
    """The whole files in a reply as the JSON {path: content}, or Extraction(None) if none is named.

    When no block is named and the task shows exactly one file, the longest block is taken as that file.
    """
    files, unnamed = {}, []
    for info, body, before in fenced(strip_thinking(response)):
        path = _path_of(info, before)
        if path is None:
            unnamed.append(body)
            continue
        files[path] = body
    changes = (f"dropped {len(unnamed)} unnamed blocks",) if unnamed and files else ()
    if not files and unnamed and len(shown) == 1:
        files = {shown[0]: max(unnamed, key=len)}
        changes = (f"an unnamed block taken as {shown[0]}, the only file shown",)
    if not files:
        return Extraction(None)
    return Extraction(json.dumps(files, sort_keys=True), changes)


def extract_answer(response: str, mode: str, shown: tuple[str, ...] = ()) -> Extraction:
    """The answer in `mode` (`diff` or `files`); `shown`: the task's shown files."""
    return extract_files(response, shown) if mode == "files" else extract_diff(response)
