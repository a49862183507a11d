"""Edit a JSON document's text in place: only what changes is rewritten.

A host's config is the user's own file, so remnic splices its changes into the text (a handler
replaced, a group appended, a member deleted) instead of dumping the whole document again:
every other byte stays as it was — numbers keep their spelling (``1e5``), inline objects stay
inline, key order and escapes stay. What is added reuses the file's indentation, line endings
and separators, so an added member deleted again gives back the original bytes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]  # json's own string reader, not in the stubs
from json.scanner import NUMBER_RE
from typing import Any, Literal

_WS = re.compile(r"[ \t\n\r]*")
# What json.loads reads besides numbers and strings (NaN and the infinities too, as Python does).
_LITERALS: tuple[tuple[str, Any], ...] = (
    ("true", True),
    ("false", False),
    ("null", None),
    ("NaN", float("nan")),
    ("Infinity", float("inf")),
    ("-Infinity", float("-inf")),
)


@dataclass(eq=False)
class Node:
    """A value of the document and where its text is (``end`` exclusive). Objects keep every member,
    duplicates too, in order; ``value`` is what :func:`json.loads` makes of it (the last key wins)."""

    kind: Literal["object", "array", "scalar"]
    start: int
    end: int = -1
    value: Any = None
    children: list[Node] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    key_spans: list[tuple[int, int]] = field(default_factory=list)

    def index(self, key: str) -> int | None:
        """The member that counts for ``key`` (the last, as json.loads reads it)."""
        found = [i for i, k in enumerate(self.keys) if k == key]
        return found[-1] if found else None

    def get(self, key: str) -> Node | None:
        i = self.index(key) if self.kind == "object" else None
        return None if i is None else self.children[i]

    def span(self, i: int) -> tuple[int, int]:
        """The text of child ``i``: an object member from its key, an array item."""
        start = self.key_spans[i][0] if self.kind == "object" else self.children[i].start
        return start, self.children[i].end


def parse(text: str) -> Node:
    """The tree of a document :func:`json.loads` accepted (validate with it first: errors here are bare)."""
    node, _ = _value(text, _WS.match(text, 0).end())  # type: ignore[union-attr]
    return node


def _ws(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]


def _value(text: str, pos: int) -> tuple[Node, int]:
    ch = text[pos]
    if ch in "{[":
        return _container(text, pos)
    if ch == '"':
        s, end = scanstring(text, pos + 1)
        return Node("scalar", pos, end, s), end
    for word, literal in _LITERALS:
        if text.startswith(word, pos):
            return Node("scalar", pos, pos + len(word), literal), pos + len(word)
    number = NUMBER_RE.match(text, pos)
    if number is None:
        raise ValueError(f"not JSON at offset {pos}")
    return Node("scalar", pos, number.end(), json.loads(number.group(0))), number.end()


def _container(text: str, pos: int) -> tuple[Node, int]:
    is_object = text[pos] == "{"
    node = Node("object" if is_object else "array", pos, value={} if is_object else [])
    close = "}" if is_object else "]"
    pos = _ws(text, pos + 1)
    while text[pos] != close:
        if is_object:
            key, key_end = scanstring(text, pos + 1)
            node.keys.append(key)
            node.key_spans.append((pos, key_end))
            pos = _ws(text, _ws(text, key_end) + 1)  # past the colon
        child, pos = _value(text, pos)
        node.children.append(child)
        if is_object:
            node.value[node.keys[-1]] = child.value
        else:
            node.value.append(child.value)
        pos = _ws(text, pos)
        if text[pos] == ",":
            pos = _ws(text, pos + 1)
    node.end = pos + 1
    return node, pos + 1


# --- the file's style ---


@dataclass(frozen=True)
class Style:
    unit: str = "  "
    """One level of indentation."""
    newline: str = "\n"
    key_sep: str = ": "
    item_sep: str = ", "
    """Between items on one line."""
    one_line: bool = False
    """The document is written on one line: what is added stays on it."""


def detect_style(text: str, root: Node) -> Style:
    """The indentation (the top level's, else the smallest), line ending and separators ``text`` uses."""
    newline = "\r\n" if "\r\n" in text else "\n"
    indents = [m.group(1) for m in re.finditer(r"\n([ \t]+)[^ \t\r\n]", text)]
    unit = "  "
    if root.kind == "object" and root.children and _first_on_line(text, root.span(0)[0]):
        unit = line_indent(text, root.span(0)[0]) or unit
    elif indents:
        unit = "\t" if any("\t" in i for i in indents) else min(indents, key=len)
    key_sep = ": "
    first = _first_member(root)
    if first is not None:
        between = text[first.key_spans[0][1] : first.children[0].start]
        key_sep = between if "\n" not in between and "\r" not in between else key_sep
    item_sep = ", " if key_sep.endswith(" ") else ","
    one_line = bool(root.children) and "\n" not in text[root.start : root.end]
    return Style(unit, newline, key_sep, item_sep, one_line)


def _first_member(node: Node) -> Node | None:
    """The first object with a member, depth first (where the file's key separator is seen)."""
    if node.kind == "object" and node.children:
        return node
    for child in node.children:
        found = _first_member(child)
        if found is not None:
            return found
    return None


def line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    return re.match(r"[ \t]*", text[start:pos]).group(0)  # type: ignore[union-attr]


def _first_on_line(text: str, pos: int) -> bool:
    return not text[text.rfind("\n", 0, pos) + 1 : pos].strip()


# --- edits ---


@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    text: str


def apply(text: str, edits: list[Edit]) -> str:
    """``text`` with each edit's range replaced (edits must not overlap)."""
    out = text
    last = len(text) + 1
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        if edit.end > last:
            raise ValueError(f"overlapping edits at offset {edit.start}")
        out = out[: edit.start] + edit.text + out[edit.end :]
        last = edit.start
    return out


def render(value: Any, style: Style, indent: str, *, inline: bool) -> str:
    """``value`` as JSON in the file's style: on one line, or one item a line starting at ``indent``."""
    if inline or style.one_line:
        return json.dumps(value, ensure_ascii=False, separators=(style.item_sep, style.key_sep))
    text = json.dumps(value, ensure_ascii=False, indent=style.unit, separators=(",", style.key_sep))
    return text.replace("\n", style.newline + indent)


def replace(text: str, style: Style, node: Node, value: Any) -> Edit:
    """``node``'s text replaced by ``value``, laid out as the old one was (one line or several)."""
    inline = "\n" not in text[node.start : node.end]
    return Edit(node.start, node.end, render(value, style, line_indent(text, node.start), inline=inline))


def append(text: str, style: Style, container: Node, entries: list[Any]) -> Edit:
    """``entries`` added at the end of ``container`` (an object takes ``(key, value)`` pairs): one a
    line under the last child when the children are one a line, else on the same line."""

    def piece(entry: Any, indent: str, inline: bool) -> str:
        if container.kind == "object":
            key, value = entry
            return json.dumps(key, ensure_ascii=False) + style.key_sep + render(value, style, indent, inline=inline)
        return render(entry, style, indent, inline=inline)

    if container.children:
        first_start, _ = container.span(0)
        last_start, last_end = container.span(len(container.children) - 1)
        if not style.one_line and "\n" in text[container.start : first_start]:
            indent = line_indent(text, last_start)  # line up with the siblings
            added = "".join("," + style.newline + indent + piece(e, indent, False) for e in entries)
        else:
            sep = _item_sep(text, style, container)
            added = "".join(sep + piece(e, "", True) for e in entries)
        return Edit(last_end, last_end, added)
    if style.one_line:
        return Edit(container.start + 1, container.end - 1, style.item_sep.join(piece(e, "", True) for e in entries))
    outer = line_indent(text, container.start)
    indent = outer + style.unit
    inner = ",".join(style.newline + indent + piece(e, indent, False) for e in entries)
    return Edit(container.start + 1, container.end - 1, inner + style.newline + outer)


def _item_sep(text: str, style: Style, container: Node) -> str:
    if len(container.children) > 1:
        between = text[container.children[0].end : container.span(1)[0]]
        if "\n" not in between:
            return between
    return style.item_sep


def delete(container: Node, doomed: set[int]) -> list[Edit]:
    """The children ``doomed`` taken out of ``container`` with their commas; all of them leaves ``{}``/``[]``.

    A run ending at the last child goes from the end of the child before it (the inverse of
    :func:`append`); any other run from its first child to the next kept one."""
    count = len(container.children)
    if doomed >= set(range(count)):
        return [Edit(container.start + 1, container.end - 1, "")]
    edits = []
    for first, last in _runs(sorted(doomed)):
        if last == count - 1:
            edits.append(Edit(container.children[first - 1].end, container.children[last].end, ""))
        else:
            edits.append(Edit(container.span(first)[0], container.span(last + 1)[0], ""))
    return edits


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for i in indices:
        if runs and runs[-1][1] == i - 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs
