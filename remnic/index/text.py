"""What gets indexed for a memory: pure functions from records to indexed text.

Kept apart from the index machinery so the rules are testable and the recall
side can reuse them (e.g. the same analyzer-independent tokenisation rules).
Nothing here knows about tantivy, numpy or files.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from remnic.memfile.model import MemoryRecord, parse_time

# A leading "Label: " names who/what a memory is about ("Ana: I moved to Lisbon",
# "Decision: ship on Tuesdays"). It is carried onto every sentence chunk so a
# chunk keeps its subject. Short, starts with a letter, no sentence punctuation.
_LABEL_RE = re.compile(r"^\s*([A-Za-z][^\n:.!?]{0,39}?):\s+\S")
_HEADING_RE = re.compile(r"^\s*#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=\S)|\n\s*\n+|\n(?=\s*[-*#>])")
_TURN_SPLIT_RE = re.compile(r"[:#/]")
_NUM_RE = re.compile(r"(\d+)")


@dataclass(frozen=True)
class TextRules:
    """The knobs that change what is indexed (part of the manifest fingerprint)."""

    neighbor_window: int = 2
    context_max_chars: int = 600
    max_chunks: int = 16
    chunk_min_chars: int = 12


def lead_label(content: str) -> str | None:
    m = _LABEL_RE.match(content)
    if not m:
        return None
    label = m.group(1).strip()
    return label if 0 < len(label.split()) <= 4 else None


def title_of(record: MemoryRecord) -> str:
    """Frontmatter ``title``, else the first markdown heading, else a lead label."""
    value = record.frontmatter.get("title")
    if isinstance(value, (str, int, float)) and str(value).strip():
        return str(value).strip()
    m = _HEADING_RE.search(record.content[:2000])
    if m and record.content.lstrip().startswith("#"):
        return m.group(1).strip()
    return lead_label(record.content) or ""


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.split(text) if s and s.strip()]


def chunks_for(content: str, title: str, rules: TextRules) -> list[str]:
    """Texts to embed for one memory: one per sentence, each carrying its subject.

    The subject of a sentence is the ``Label:`` that opens its line, else the
    last labelled line before it (a transcript: "Ana: …" lines), else the
    memory's title. A one-sentence memory is one chunk (the content itself).
    Long memories are merged into at most ``max_chunks`` groups of neighbouring
    sentences, so the vector store grows with the number of memories, not their
    length.
    """
    text = content.strip()
    if not text:
        return [title] if title else [""]
    labelled: list[tuple[str, str]] = []  # (subject, sentence)
    subject = title
    for line in text.splitlines():
        if not line.strip():
            continue
        own = lead_label(line)
        if own:
            subject = own
        for s in split_sentences(line):
            if labelled and len(s) < rules.chunk_min_chars and labelled[-1][0] == subject:
                labelled[-1] = (subject, f"{labelled[-1][1]} {s}")  # glue "Yes!" to its predecessor
            else:
                labelled.append((subject, s))
    if len(labelled) <= 1:
        return [text]
    if len(labelled) > rules.max_chunks:
        size = -(-len(labelled) // rules.max_chunks)
        groups = [labelled[i : i + size] for i in range(0, len(labelled), size)]
        labelled = [(g[0][0], " ".join(s for _, s in g)) for g in groups]
    out = []
    for subj, s in labelled:
        if subj and not lead_label(s):
            s = f"{subj}: {s}"
        out.append(s)
    return out


def episode_key(frontmatter: Mapping[str, Any], namespace: str) -> str | None:
    """The episode a memory belongs to: ``episodeId``, else its ``sourceTurnId`` minus the last part.

    ``sourceTurnId: D3:14`` → episode ``D3``; ``sess-7/turn-2`` → ``sess-7``. Scoped
    by namespace so two namespaces never share an episode.
    """
    ep = frontmatter.get("episodeId")
    if ep is None or str(ep).strip() == "":
        turn = frontmatter.get("sourceTurnId")
        if turn is None:
            return None
        parts = _TURN_SPLIT_RE.split(str(turn).strip())
        if len(parts) < 2 or not "".join(parts[:-1]).strip():
            return None
        ep = str(turn).strip()[: -len(parts[-1]) - 1]
    return f"{namespace}\x1f{str(ep).strip()}"


def natural_key(value: Any) -> tuple:
    """Sort key that orders ``D1:9`` before ``D1:10``."""
    if value is None:
        return ()
    return tuple(int(p) if p.isdigit() else p for p in _NUM_RE.split(str(value)) if p)


def created_ts(record: MemoryRecord) -> float | None:
    # record.created/updated read the user's own keys too (date, lastmod, ...), in common spellings
    return parse_time(record.created) or parse_time(record.updated)


def updated_ts(record: MemoryRecord) -> float | None:
    return parse_time(record.updated) or parse_time(record.created)


def date_words(ts: float | None) -> str:
    """``8 May 2023 Monday``: lets "in May" or "2023" match what happened then."""
    if ts is None:
        return ""
    try:
        dt = datetime.fromtimestamp(ts, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return ""
    return f"{dt.day} {dt.strftime('%B')} {dt.year} {dt.strftime('%A')}"


@dataclass
class Member:
    """One memory as seen by its episode: enough to order it and borrow its text."""

    path: str
    content: str
    created: float | None
    turn: str | None

    def sort_key(self) -> tuple:
        return (self.created if self.created is not None else float("inf"), natural_key(self.turn), self.path)


@dataclass(frozen=True)
class Context:
    """What a member borrows from its episode: turns ±1 (near), ±2..window (far), the whole passage."""

    near: str
    far: str
    passage: str
    position: int


def episode_contexts(members: Sequence[Member], window: int, max_chars: int) -> dict[str, Context]:
    """path → Context for each short member of one episode (long memories stand alone)."""
    ordered = sorted(members, key=Member.sort_key)
    out: dict[str, Context] = {}
    for i, m in enumerate(ordered):
        if window <= 0 or len(ordered) < 2 or len(m.content) > max_chars:
            continue
        near = [ordered[j].content for j in (i - 1, i + 1) if 0 <= j < len(ordered)]
        far = [ordered[j].content for d in range(2, window + 1) for j in (i - d, i + d) if 0 <= j < len(ordered)]
        passage = "\n".join(o.content for o in ordered[max(0, i - window) : i + window + 1])
        out[m.path] = Context("\n".join(near), "\n".join(far), passage, i)
    return out


def positions(members: Sequence[Member]) -> dict[str, int]:
    """path → position of each member in its episode's order."""
    return {m.path: i for i, m in enumerate(sorted(members, key=Member.sort_key))}
