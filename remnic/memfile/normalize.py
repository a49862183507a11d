"""Pure checks and frontmatter normalisation for hand-written memory files.

Nothing here touches disk or git. ``check_bytes`` turns a file's bytes into a
record or a list of problems (each naming path, line and field);
``planned_changes`` decides which frontmatter keys sync writes and ``render``
writes them, changing only frontmatter lines: the body's bytes, unknown keys,
comments and the order of the keys already there are kept.

What sync writes, and what it never does:

- a file without an ``id`` (a body-only note, hand-written partial frontmatter, a
  note from another tool) gets an id and every default key it lacks, values taken
  from what the file already says (its folder, its ``date``, git history);
- a file with an ``id`` (written by remnic, the original Remnic or the user) is
  left byte-for-byte unless its body changed: then ``updated`` is stamped in the
  spelling the file uses and a ``contentHash`` it carries is refreshed in its own
  spelling; a folder move may rewrite a ``category`` that named the old folder;
- the original Remnic's entity files and TOML (``+++``) front matter are read as
  they are and never written by sync;
- ``normalize_all`` (``sync run --normalize``) is the one way to have every file
  given the missing defaults and tiers brought in step with scores.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from remnic.config import StoreSettings
from remnic.errors import MemoryFormatError, ValidationError

from .model import (
    MemoryRecord,
    confidence_tier,
    format_time,
    front_kind,
    importance_level,
    order_keys,
    parse_file,
    serialize,
    split_file,
)
from .patch import Refused, drop_toml, drop_yaml, patch_toml, patch_yaml, rewrite_yaml
from .times import format_like, parse_time
from .validate import Checked, check_bytes, check_text
from .values import CREATED_KEYS, UPDATED_KEYS, confidence_of, hash_like, hash_matches, importance_of

__all__ = [
    "Checked",
    "FileTimes",
    "check_bytes",
    "check_text",
    "defaults_for",
    "in_line_ending",
    "line_ending",
    "planned_changes",
    "render",
    "serialize_like",
]

BOM = "\ufeff"


@dataclass(frozen=True)
class FileTimes:
    """When a file was created and last changed, from git history or the file system (epoch seconds)."""

    created: float | None = None
    updated: float | None = None


# --- what sync writes ---


def defaults_for(
    record: MemoryRecord, *, now: str, store: StoreSettings, times: FileTimes | None = None
) -> dict[str, Any]:
    """Every key remnic gives a memory, with the values the file already implies: its category from
    the folder, tiers from its own scores, times from ``times`` (else ``now``)."""
    meta = record.frontmatter
    # A tier follows the score the file states (or the default score added with it); a stated score
    # remnic cannot read (`confidence: [0.5]`) gets no tier, which would change the value it is read as.
    confidence = _stated_score(meta, ("confidence",), confidence_of, store.default_confidence)
    importance = _stated_score(
        meta, ("importanceScore", "importance", "priority"), importance_of, store.default_importance
    )
    created = times.created if times and times.created is not None else None
    updated = times.updated if times and times.updated is not None else created
    out: dict[str, Any] = {
        "id": record.id,
        "category": record.category,
        "created": format_time(created) if created is not None else now,
        "updated": format_time(updated) if updated is not None else now,
        "source": "manual",
        "confidence": store.default_confidence,
        "tags": [],
        "status": "active",
        "importanceScore": store.default_importance,
        "contentHash": hash_like(None, record.content),
    }
    if confidence is not None:
        out["confidenceTier"] = confidence_tier(confidence)
    if importance is not None:
        out["importanceLevel"] = importance_level(importance)
    return order_keys(out)


_SAID_BY = {
    "created": CREATED_KEYS,
    "updated": UPDATED_KEYS,
    "tags": ("tags", "tag"),
    "confidence": ("confidence", "confidenceTier"),
    "importanceScore": ("importanceScore", "importance", "priority", "importanceLevel"),
}
"""A default is not added when the file already says it under another common name (a default score
next to a tier word or a legacy ``importance`` would be read instead of them)."""


def _missing(meta: Mapping[str, Any], key: str) -> bool:
    return not any(k in meta for k in _SAID_BY.get(key, (key,)))


def _stated_score(
    meta: Mapping[str, Any], keys: tuple[str, ...], read: Callable[[Mapping[str, Any], float], float], default: float
) -> float | None:
    """The score the file states under ``keys`` (``default`` when it states none; None when what it
    states cannot be read as a score)."""
    said = {k: meta[k] for k in keys if k in meta}
    if not said:
        return default
    value = read(said, -1.0)
    return value if value >= 0 else None


def stamp(meta: Mapping[str, Any], content: str, now: str) -> dict[str, Any]:
    """What a body edit changes: ``updated`` in the file's own spelling (left alone when remnic cannot
    write that spelling), and a ``contentHash`` the file carries, in its spelling."""
    out: dict[str, Any] = {}
    if "contentHash" in meta:
        fresh = hash_like(meta["contentHash"], content)
        if fresh is not None and fresh != meta["contentHash"]:
            out["contentHash"] = fresh
    if "updated" in meta:
        epoch = parse_time(now)
        rendered = format_like(meta["updated"], epoch) if epoch is not None else None
        if rendered is not None and rendered != meta["updated"]:
            out["updated"] = rendered
    else:
        out["updated"] = now
    return out


def _in_step(meta: Mapping[str, Any], record: MemoryRecord) -> dict[str, Any]:
    """``--normalize``: tiers follow their scores and ``contentHash`` the text (the user asked)."""
    out: dict[str, Any] = {}
    for score_key, tier_key, tier_of, score in (
        ("confidence", "confidenceTier", confidence_tier, record.confidence),
        ("importanceScore", "importanceLevel", importance_level, record.importance),
    ):
        if score_key in meta and tier_key in meta and meta[tier_key] != tier_of(score):
            out[tier_key] = tier_of(score)
    if hash_matches(meta.get("contentHash"), record.content) is not True:
        fresh = hash_like(meta.get("contentHash"), record.content) or hash_like(None, record.content)
        if fresh != meta.get("contentHash"):
            out["contentHash"] = fresh
    return out


def planned_changes(
    checked: Checked,
    *,
    now: str,
    store: StoreSettings,
    stamp_edits: bool = True,
    memory_id: str | None = None,
    body_changed: bool | None = None,
    times: FileTimes | None = None,
    category: str | None = None,
    normalize_all: bool = False,
) -> dict[str, Any]:
    """The frontmatter keys sync writes into a valid file (empty when the file is fine as it is).

    ``memory_id`` forces the id (a rename partner's id, or a fresh id for a copy);
    ``body_changed`` says whether the body differs from the version sync last saw
    (None: judged by a ``contentHash`` remnic can verify); ``times`` are the file's
    git or file-system times for the defaults; ``category`` is the category a folder
    move gives a file whose ``category`` named the old folder. See the module docstring.
    """
    record = checked.record
    assert record is not None
    meta = record.frontmatter
    if front_kind(checked.text) == "toml" or record.is_entity_file:
        return {}
    changes: dict[str, Any] = {}
    if memory_id and memory_id != meta.get("id"):
        changes["id"] = memory_id
    adopting = "id" not in meta
    if adopting or normalize_all:
        for key, value in defaults_for(record, now=now, store=store, times=times).items():
            if key not in changes and _missing(meta, key):
                changes[key] = value
    if stamp_edits and not adopting:
        if body_changed is None:
            body_changed = hash_matches(meta.get("contentHash"), record.content) is False
        if body_changed:
            changes.update(stamp(meta, record.content, now))
    if category and "category" in meta and category != meta["category"]:
        changes["category"] = category
    if normalize_all:
        changes.update({k: v for k, v in _in_step(meta, record).items() if k not in changes})
    return changes


# --- writing the keys ---


def _newline_of(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else "\n"


def line_ending(text: str) -> str:
    """The newline of a file's first line: what text written into the file uses (CRLF files stay CRLF)."""
    first, sep, _ = text.partition("\n")
    return "\r\n" if sep and first.endswith("\r") else "\n"


def in_line_ending(text: str, nl: str) -> str:
    """``text`` with every line ending ``nl`` (a CRLF file's new body must not add LF lines)."""
    return re.sub(r"\r?\n", nl, text) if nl == "\r\n" else text


def serialize_like(old_text: str, meta: Mapping[str, Any], body: str, *, path: str = "") -> str:
    """``serialize(meta, body)`` in the BOM and line endings of the file text it replaces; YAML and TOML
    frontmatter there is patched instead (keys taken out, changed or added; comments and key order kept).
    TOML stays TOML: ValidationError (naming ``path``, the key and its line) when it cannot be patched."""
    bom = BOM if old_text.startswith(BOM) or body.startswith(BOM) else ""
    body = body[len(BOM) :] if body.startswith(BOM) else body
    head = _head_like(old_text, meta, path) if meta else None
    if head is not None:
        return ("" if head.startswith(BOM) else bom) + head + body
    return bom + in_line_ending(serialize(meta, ""), line_ending(old_text)) + body


def _head_like(old_text: str, meta: Mapping[str, Any], path: str) -> str | None:
    """The frontmatter of ``old_text`` (fences included) made to hold ``meta``; None if it has none."""
    kind = front_kind(old_text)
    if kind is None:
        return None
    try:
        old = parse_file(old_text, path)
    except MemoryFormatError:
        if kind == "toml":
            raise
        return None
    lines = old_text[: len(old_text) - len(old.body)].splitlines(keepends=True)
    opening, fm_lines, closing = lines[0], lines[1:-1], lines[-1]
    nl = _newline_of(opening)
    closing += "" if closing.endswith("\n") else nl
    changes = {k: v for k, v in meta.items() if k not in old.frontmatter or old.frontmatter[k] != v}
    gone = [k for k in old.frontmatter if k not in meta]
    if kind == "toml":
        return _toml_head(opening, fm_lines, closing, gone, changes, meta, path)
    kept = drop_yaml(fm_lines, gone)
    patched = patch_yaml(kept, changes, nl) if kept is not None else None
    if patched is not None:
        head = opening + "".join(patched) + closing
        try:
            if parse_file(head, path).frontmatter == dict(meta):
                return head
        except MemoryFormatError:
            pass
    return opening + rewrite_yaml(fm_lines, meta, nl) + closing


def _toml_head(
    opening: str,
    fm_lines: list[str],
    closing: str,
    gone: list[str],
    changes: Mapping[str, Any],
    meta: Mapping[str, Any],
    path: str,
) -> str:
    """TOML frontmatter with ``gone`` taken out and ``changes`` written line by line, or ValidationError."""
    where = f"{path}'s" if path else "the file's"
    try:
        head = opening + "".join(patch_toml(drop_toml(fm_lines, gone), changes, _newline_of(opening))) + closing
    except Refused as exc:
        line = exc.index + 2 if exc.index is not None else None  # frontmatter lines start below the fence
        raise ValidationError.single(
            exc.key, f"{exc.reason}; edit {where} TOML front matter by hand", path=path or None, line=line
        ) from None
    try:
        ok = parse_file(head, path).frontmatter == dict(meta)
    except MemoryFormatError:
        ok = False
    if not ok:
        raise ValidationError.single(
            ", ".join([*gone, *changes]),
            f"cannot be written into {where} TOML front matter line by line; edit it by hand",
        )
    return head


def _keep_time_spelling(old: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """A new ``updated`` written in the spelling the file already uses for it."""
    out = dict(changes)
    new = out.get("updated")
    if isinstance(new, str) and old.get("updated") is not None:
        epoch = parse_time(new)
        rendered = format_like(old["updated"], epoch) if epoch is not None else None
        if rendered is not None:
            out["updated"] = rendered
    return out


def render(checked: Checked, changes: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(new file text, new frontmatter) with ``changes`` applied; the body stays byte-for-byte.

    TOML front matter stays TOML (a key that cannot be written as one TOML line is refused)."""
    record = checked.record
    assert record is not None
    text = checked.text
    changes = _keep_time_spelling(record.frontmatter, changes)
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
    if front_kind(text) == "toml":
        return _toml_head(opening, fm_lines, closing, [], changes, meta, record.path) + body, meta
    patched = patch_yaml(fm_lines, changes, nl)
    if patched is not None:
        candidate = opening + "".join(patched) + closing + body
        try:
            again = parse_file(candidate, record.path)
        except MemoryFormatError:
            again = None
        if again is not None and again.frontmatter == meta and again.body == body:
            return candidate, meta
    return opening + rewrite_yaml(fm_lines, meta, nl) + closing + body, meta
