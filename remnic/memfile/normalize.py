"""Pure checks and frontmatter normalisation for hand-written memory files.

Nothing here touches disk or git. ``check_bytes`` turns a file's bytes into a
record or a list of problems (each naming path, line and field);
``normalize`` decides which frontmatter keys sync must write and renders the
new file text, changing only frontmatter lines: the body's bytes, unknown keys,
comments and the order of the keys already there are kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from remnic.config import StoreSettings
from remnic.errors import MemoryFormatError

from .model import HANDLER, confidence_tier, content_hash, importance_level, parse_file, serialize, split_file
from .validate import Checked, check_bytes, check_text, new_frontmatter

__all__ = ["Checked", "check_bytes", "check_text", "planned_changes", "render"]

BOM = "\ufeff"


# --- normalisation ---


def planned_changes(
    checked: Checked,
    *,
    now: str,
    store: StoreSettings,
    stamp_edits: bool = True,
    memory_id: str | None = None,
) -> dict[str, Any]:
    """The frontmatter keys sync writes into a valid file (empty when the file is fine as it is).

    A file without frontmatter (or with an empty one) gets an id and every default
    remnic writes. Otherwise: a missing id; ``contentHash`` when it is missing or
    stale, and ``updated`` when the body changed since the stored hash (or when
    there is none); tiers that disagree with their scores. ``memory_id`` forces
    the id (a rename partner's id, or a fresh id for a copy).
    """
    record = checked.record
    assert record is not None
    meta = record.frontmatter
    digest = content_hash(record.content)
    if not checked.has_frontmatter:  # every default a remnic write gives, from the same function
        defaults, _ = new_frontmatter(
            memory_id=memory_id or record.id,
            now=now,
            content=record.content,
            category=record.category,
            settings=store,
            source="manual",
        )
        return defaults
    changes: dict[str, Any] = {}
    if memory_id and memory_id != meta.get("id"):
        changes["id"] = memory_id
    elif not meta.get("id"):
        changes["id"] = record.id
    if stamp_edits:
        stored = meta.get("contentHash")
        if stored != digest:
            changes["contentHash"] = digest
            if stored is not None or not meta.get("updated"):
                changes["updated"] = now
    for score_key, tier_key, tier_of in (
        ("confidence", "confidenceTier", confidence_tier),
        ("importanceScore", "importanceLevel", importance_level),
    ):
        score = meta.get(score_key)
        if (
            isinstance(score, (int, float))
            and not isinstance(score, bool)
            and tier_key in meta
            and meta[tier_key] != tier_of(float(score))
        ):
            changes[tier_key] = tier_of(float(score))
    return changes


def _newline_of(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else "\n"


def _render_line(key: str, value: Any) -> str | None:
    rendered = HANDLER.export({key: value})
    return None if "\n" in rendered else rendered


def _patch_lines(fm_lines: list[str], changes: Mapping[str, Any], nl: str) -> list[str] | None:
    """Replace or append single-line ``key: value`` lines; None when a key is not a simple top-level line."""
    lines = list(fm_lines)
    for key, value in changes.items():
        rendered = _render_line(key, value)
        if rendered is None:
            return None
        pattern = re.compile(rf"^{re.escape(key)}\s*:(\s|$)")
        hits = [i for i, line in enumerate(lines) if pattern.match(line)]
        if len(hits) > 1:
            return None
        if hits:
            i = hits[0]
            following = lines[i + 1] if i + 1 < len(lines) else ""
            if following[:1] in (" ", "\t", "-"):
                return None  # a block value spanning several lines
            lines[i] = rendered + nl
        else:
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += nl
            lines.append(rendered + nl)
    return lines


def render(checked: Checked, changes: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(new file text, new frontmatter) with ``changes`` applied; the body stays byte-for-byte."""
    record = checked.record
    assert record is not None
    text = checked.text
    meta = dict(record.frontmatter)
    meta.update(changes)
    body = record.body
    if not checked.has_frontmatter and split_file(text)[0] is None:
        bom = BOM if body.startswith(BOM) else ""
        body = body[len(bom) :]
        nl = _newline_of(body.splitlines(keepends=True)[0]) if body else "\n"
        head = serialize(meta, "")
        return bom + (head.replace("\n", "\r\n") if nl == "\r\n" else head) + body, meta
    prefix = text[: len(text) - len(body)]
    lines = prefix.splitlines(keepends=True)
    opening, fm_lines, closing = lines[0], lines[1:-1], lines[-1]
    nl = _newline_of(opening)
    patched = _patch_lines(fm_lines, changes, nl)
    if patched is not None:
        candidate = opening + "".join(patched) + closing + body
        try:
            again = parse_file(candidate, record.path)
        except MemoryFormatError:
            again = None
        if again is not None and again.frontmatter == meta and again.body == body:
            return candidate, meta
    head = serialize(meta, "")
    bom = BOM if opening.startswith(BOM) else ""
    return bom + (head.replace("\n", "\r\n") if nl == "\r\n" else head) + body, meta
