"""Commit messages: remnic's trailers, the versions history reads back, and text diffs."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

TRAILER_PREFIX = "Remnic-"
MAX_ID_TRAILERS = 50
MAX_SUBJECT = 120
"""A longer subject is cut at a word boundary with an ellipsis; its full text opens the body."""


@dataclass
class Version:
    """One committed version of one memory file (``number`` 1 is the oldest)."""

    number: int
    sha: str
    path: str
    date: str
    author: str
    subject: str
    change: str  # A, M, R, D (git's name-status letter)
    trailers: dict[str, list[str]] = field(default_factory=dict)
    previous_path: str | None = None

    @property
    def short(self) -> str:
        return self.sha[:8]

    @property
    def operation(self) -> str:
        ops = self.trailers.get(f"{TRAILER_PREFIX}Operation")
        return ops[0] if ops else "git-commit"

    @property
    def label(self) -> str:
        return f"v{self.number}"

    @property
    def deleted(self) -> bool:
        """This version is the commit that deleted the file: it has no text."""
        return self.change == "D"

    def to_dict(self) -> dict[str, object]:
        return {
            "version": self.number,
            "label": self.label,
            "sha": self.sha,
            "path": self.path,
            "previousPath": self.previous_path,
            "date": self.date,
            "author": self.author,
            "subject": self.subject,
            "change": self.change,
            "deleted": self.deleted,
            "operation": self.operation,
            "trailers": self.trailers,
        }


BIDI_CONTROLS = dict.fromkeys([*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x061C, 0x200E, 0x200F])
"""Embeddings, overrides, isolates and marks: in a commit message they reorder what `git log` shows
(U+202E reverses the rest of the line), so a memory's words could disguise its commit."""
_CONTROLS = dict.fromkeys([*range(0x00, 0x20), 0x7F], " ")


def plain(text: str) -> str:
    """``text`` on one line: bidi controls dropped, other control characters (newlines too) as spaces."""
    return text.translate(BIDI_CONTROLS).translate(_CONTROLS)


def format_message(subject: str, trailers: Mapping[str, str | Sequence[str]], body: str | None = None) -> str:
    full = plain(subject).strip()
    body = body.translate(BIDI_CONTROLS) if body else body
    short = short_subject(full)
    lines = [short]
    if short != full:  # the part cut off may be what matters: the body keeps every word
        body = full + ("\n\n" + body.strip() if body and body.strip() else "")
    if body:
        lines += ["", body.strip()]
    trailer_lines = []
    for key, value in trailers.items():
        values = [value] if isinstance(value, str) else list(value)
        for v in values:
            trailer_lines.append(f"{TRAILER_PREFIX}{key}: {plain(str(v))}")
    if trailer_lines:
        lines += ["", *trailer_lines]
    return "\n".join(lines) + "\n"


def subject_text(text: str, category: str) -> str:
    """What a commit subject quotes of a memory's text: an entity page by its name (its ``# heading``),
    not the start of its markdown (``# Priya Raman **Type:** person …``); any other memory as it is."""
    if category == "entity":
        first = text.lstrip().split("\n", 1)[0]
        if first.startswith("# ") and first[2:].strip():
            return f"{first[2:].strip()} (entity page)"
    return text


def short_subject(subject: str, limit: int = MAX_SUBJECT) -> str:
    """``subject`` when it fits in ``limit`` characters, else cut at the last space that leaves room for
    ``…`` (mid-word only when a single word is longer than half the limit)."""
    if len(subject) <= limit:
        return subject
    cut = subject[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:(") + "…"


def parse_trailers(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            out.setdefault(key.strip(), []).append(value.strip())
    return out


def unified_diff(old: str, new: str, old_label: str, new_label: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=old_label,
        tofile=new_label,
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def trailers_for(
    operation: str, ids: Sequence[str], namespace: str, source: str, **extra: str
) -> dict[str, str | list[str]]:
    """The standard trailer set; bulk commits list at most MAX_ID_TRAILERS ids plus a count."""
    out: dict[str, str | list[str]] = {"Operation": operation}
    out["Memory-Id"] = list(ids[:MAX_ID_TRAILERS])
    if len(ids) > MAX_ID_TRAILERS or len(ids) != 1:
        out["Memory-Count"] = str(len(ids))
    out["Namespace"] = namespace
    out["Source"] = source
    out.update(extra)
    return out
