"""The original Remnic's file format, for tests: a reader and a writer written from its documented rules.

The original (TypeScript) does not use a YAML library. Its reader, as described in
the format notes (our own words, our own code):

- the file must start with ``---`` and a newline; the frontmatter ends at the next
  line that is exactly ``---``; the body is the rest, trimmed;
- a key whose value is empty, followed by more-indented ``- item`` lines, is folded
  into an inline list first;
- every line is split at its first colon; key and value are trimmed; the value is
  kept raw (quotes and all);
- list keys (``tags``, ``lineage``, ``importanceKeywords``, …) are ``[...]`` split on
  commas, each item trimmed and stripped of double quotes only;
- ``confidence`` is a float (0.8 when missing), ``status`` defaults to active,
  ``forgottenReason`` is JSON-decoded when double-quoted;
- ``links`` are found by one pattern over the block: ``- targetId: X`` then
  ``linkType: Y`` then ``strength: N`` and an optional double-quoted ``reason``.

Its writer emits ``key: value`` lines in a fixed order, lists as ``["a", "b"]``,
``forgottenReason`` and link reasons JSON-quoted, then ``---``, a blank line, the
body and one newline. :func:`write` does the same for test fixtures.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from typing import Any

_FILE = re.compile(r"^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)([\s\S]*)$")
_LINK = re.compile(r'- targetId: (\S+)\s+linkType: (\S+)\s+strength: ([\d.]+)(?:\s+reason: "((?:\\.|[^"\\])*)")?')
LIST_KEYS = ("tags", "lineage", "importanceKeywords", "intentEntityTypes")


def _fold_block_lists(lines: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        colon = line.find(":")
        if colon != -1 and not line[colon + 1 :].strip():
            indent = len(line) - len(line.lstrip())
            items = []
            j = i + 1
            while j < len(lines):
                m = re.match(r"^(\s+)- (.*)$", lines[j])
                if not m or len(m.group(1)) <= indent:
                    break
                items.append(m.group(2).strip().strip('"'))
                j += 1
            if items:
                out.append(line[: colon + 1] + " [" + ", ".join(f'"{v}"' for v in items) + "]")
                i = j
                continue
        out.append(line)
        i += 1
    return out


def _list(raw: str) -> list[str]:
    raw = raw.strip()
    if not (raw.startswith("[") and raw.endswith("]")):
        return []
    return [item.strip().strip('"') for item in raw[1:-1].split(",") if item.strip().strip('"')]


def read(text: str) -> dict[str, Any] | None:
    """The frontmatter and content as the original reads a memory file, or None when it cannot."""
    m = _FILE.match(text)
    if not m:
        return None
    block, body = m.group(1), m.group(2).strip()
    raw: dict[str, str] = {}
    for line in _fold_block_lists(block.split("\n")):
        colon = line.find(":")
        if colon != -1:
            raw[line[:colon].strip()] = line[colon + 1 :].strip()
    out: dict[str, Any] = dict(raw)
    for key in LIST_KEYS:
        if key in raw:
            out[key] = _list(raw[key])
    out["tags"] = out.get("tags", [])
    out["confidence"] = float(raw.get("confidence", "0.8"))
    out["status"] = raw.get("status") or "active"
    out["category"] = raw.get("category", "fact")
    out["id"] = raw.get("id", "")
    reason = raw.get("forgottenReason")
    if reason and reason.startswith('"') and reason.endswith('"'):
        out["forgottenReason"] = json.loads(reason)
    if "importanceScore" in raw:
        out["importanceScore"] = float(raw["importanceScore"])
    if "links:" in block:
        links = [
            {"targetId": a, "linkType": b, "strength": float(c), **({"reason": json.loads(f'"{d}"')} if d else {})}
            for a, b, c, d in _LINK.findall(block)
        ]
        if links:
            out["links"] = links
    out["content"] = body
    return out


def normalized(text: str) -> str:
    text = unicodedata.normalize("NFC", text).lower()
    text = "".join(ch if ch.isspace() or unicodedata.category(ch)[0] in "LMN" else " " for ch in text)
    return " ".join(text.split())


def content_hash(text: str) -> str:
    """The original's ``contentHash``: bare hex SHA-256 of the normalised text."""
    return hashlib.sha256(normalized(text).encode("utf-8")).hexdigest()


def _value(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if key in ("forgottenReason", "synthesis_updated_at"):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def write(frontmatter: dict[str, Any], body: str) -> str:
    """A memory file as the original writes it (``links`` as a block list of objects)."""
    lines = []
    for key, value in frontmatter.items():
        if key == "links":
            lines.append("links:")
            for link in value:
                lines.append(f"  - targetId: {link['targetId']}")
                lines.append(f"    linkType: {link['linkType']}")
                lines.append(f"    strength: {link['strength']}")
                if "reason" in link:
                    lines.append(f"    reason: {json.dumps(link['reason'], ensure_ascii=False)}")
        elif key == "sources":
            lines.append(f"sources: {json.dumps(value, ensure_ascii=False, separators=(',', ':'))}")
        else:
            lines.append(f"{key}: {_value(key, value)}")
    return "---\n" + "\n".join(lines) + "\n---\n\n" + body.strip() + "\n"
