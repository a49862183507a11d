"""The records of the observation pipeline: turns in, observations out.

Plain frozen dataclasses; ``to_dict`` gives the JSON shape (Remnic's camelCase names)
that ``remnic observe --json``, the HTTP route and the golden files use.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from remnic.recall.citations import sessions_of

ROLES = ("user", "assistant")
MAX_SOURCE_TURNS = 32
"""A memory said again and again keeps its first turn and the latest ones as its provenance."""
VERDICT_KINDS = ("accept", "reject", "defer")


@dataclass(frozen=True)
class Turn:
    """One conversational turn: words a person or the assistant said, host text already removed.

    ``index`` is the turn's position in its source (line or message number of a transcript, or the
    buffer's sequence number for a session): it never changes as the transcript grows and does not
    depend on which lines were dropped. ``turn_id`` is the host's id for the turn when it has one.
    ``interim`` marks assistant commentary between tool calls (kept in the trace, never extracted).
    ``positional``: ``turn_id`` was made from the turn's place in its file (``L12``, ``m3``), so it
    names the turn only together with its text: line 1 of two transcripts are two turns.
    ``host_id``: ``turn_id`` is a host's own id for the turn (a Claude Code ``uuid``, a Codex
    ``payload.id``), one turn whatever session reads it; a caller's ``turnId`` (POST observe, an
    openai/anthropic message's ``id``) is numbered per conversation (``1``, ``turn-1``) and is not.
    """

    role: str
    text: str
    index: int
    turn_id: str | None = None
    speaker: str | None = None
    timestamp: str | None = None
    interim: bool = False
    positional: bool = False
    kept: str = ""
    """The message's other fields the archive keeps (``name``, ``sourceFormat``, ``parts``), as JSON
    (a string, so the frozen turn stays hashable); empty when it had none."""
    host_id: bool = False

    @property
    def source_id(self) -> str:
        """The id observations cite: the host's turn id, else the stable index."""
        return self.turn_id if self.turn_id else str(self.index)

    def to_dict(self, *, journal: bool = False) -> dict[str, Any]:
        """The turn's JSON shape; ``journal`` adds what only the session buffer keeps (``hostId``), which
        the shape ``observe --json`` and the golden files show leaves out."""
        out: dict[str, Any] = {"role": self.role, "text": self.text, "index": self.index}
        for key, value in (("turnId", self.turn_id), ("speaker", self.speaker), ("timestamp", self.timestamp)):
            if value is not None:
                out[key] = value
        if self.interim:
            out["interim"] = True
        if self.positional:
            out["positionalId"] = True
        if self.host_id and journal:
            out["hostId"] = True
        if self.kept:
            out["kept"] = json.loads(self.kept)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Turn:
        return cls(
            role=str(data["role"]),
            text=str(data["text"]),
            index=int(data["index"]),
            turn_id=data.get("turnId"),
            speaker=data.get("speaker"),
            timestamp=data.get("timestamp"),
            interim=bool(data.get("interim", False)),
            positional=bool(data.get("positionalId", False)),
            kept=json.dumps(data["kept"], sort_keys=True, ensure_ascii=False) if data.get("kept") else "",
            host_id=bool(data.get("hostId", False)),
        )


@dataclass(frozen=True)
class ExtractedFact:
    """One standalone fact candidate (Remnic's ``ExtractedFact``).

    ``entity_ref`` and ``structured_attributes`` drive temporal supersession: a newer fact with
    the same ``<entityRef>::<attribute>`` key and a different value supersedes the older one.
    ``quote`` is the speaker's own sentence the fact was made from (provenance).
    """

    category: str
    content: str
    confidence: float
    tags: tuple[str, ...] = ()
    entity_ref: str | None = None
    structured_attributes: Mapping[str, str] = field(default_factory=dict)
    quote: str = ""

    def supersession_keys(self) -> list[str]:
        """``<entityRef>::<attribute>`` for each structured attribute (empty without an entityRef)."""
        if not self.entity_ref:
            return []
        return [f"{self.entity_ref}::{key_part(attr)}" for attr in sorted(self.structured_attributes)]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "category": self.category,
            "content": self.content,
            "confidence": self.confidence,
            "tags": list(self.tags),
        }
        if self.entity_ref:
            out["entityRef"] = self.entity_ref
        if self.structured_attributes:
            out["structuredAttributes"] = dict(sorted(self.structured_attributes.items()))
        if self.quote:
            out["quote"] = self.quote
        return out


@dataclass(frozen=True)
class Importance:
    """``importanceScore`` in [0, 1], its level, and why (kept for the X-ray)."""

    score: float
    level: str
    reasons: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()


@dataclass(frozen=True)
class JudgeVerdict:
    """The rules judge's word on one candidate: accept, reject or defer, and why."""

    kind: str
    reason: str
    source: str = "rules"

    @property
    def durable(self) -> bool:
        return self.kind == "accept"


@dataclass(frozen=True)
class MemoryObservation:
    """The post-extraction, pre-storage candidate (Remnic's public ``MemoryObservation``).

    ``resulting_primitive_id`` stays ``None`` until the service persists it (and is re-pointed at
    the survivor by consolidation). ``proposed_status`` is the status the primitive should be
    written with: ``active``, ``pending_review`` (deferred, or accepted with a confidence below
    ``observe.reviewBelowConfidence``), or ``None`` when the judge rejected it (not persisted;
    kept for the verdict ledger). ``valid_at`` is when it was said (the turn's timestamp).
    """

    id: str
    session_id: str
    observed_at: str
    fact: ExtractedFact
    importance: Importance
    verdict: JudgeVerdict
    source_turn_ids: tuple[str, ...]
    proposed_status: str | None = None
    valid_at: str | None = None
    resulting_primitive_id: str | None = None

    @property
    def judge_accepted(self) -> bool:
        return self.verdict.durable

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "sessionId": self.session_id,
            "observedAt": self.observed_at,
            "fact": self.fact.to_dict(),
            "importance": self.importance.score,
            "importanceLevel": self.importance.level,
            "importanceReasons": list(self.importance.reasons),
            "judgeAccepted": self.judge_accepted,
            "judgeVerdict": self.verdict.kind,
            "judgeReason": self.verdict.reason,
            "proposedStatus": self.proposed_status,
            "sourceTurnIds": list(self.source_turn_ids),
            "resultingPrimitiveId": self.resulting_primitive_id,
        }
        if self.verdict.kind == "reject":
            out["judgeRejectionReason"] = self.verdict.reason
        if self.valid_at:
            out["validAt"] = self.valid_at
        if self.importance.keywords:
            out["importanceKeywords"] = list(self.importance.keywords)
        return out


def key_part(text: str) -> str:
    """Supersession key normalisation: trim, lowercase, runs of whitespace/hyphens → one ``-``."""
    return re.sub(r"[\s-]+", "-", text.strip().lower()).strip("-")


def reinforcement(
    frontmatter: Mapping[str, Any], said_again: Sequence[str], now: str, session: str | None = None
) -> dict[str, Any]:
    """The frontmatter changes of a memory observed once more: the count, when, the turns that said it
    again joining its ``sourceTurnIds`` (the first stays first, at most ``MAX_SOURCE_TURNS``), and the
    ``session`` they were in joining its ``sessionKeys`` when it is not one it was observed in (its
    ``sessionKey`` first, as consolidation lists a merged memory's sessions), so citations name it."""
    count = frontmatter.get("reinforcement_count")
    count = count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0
    changes: dict[str, Any] = {"reinforcement_count": count + 1, "last_reinforced_at": now}
    held = frontmatter.get("sourceTurnIds")
    if isinstance(held, list):
        ids = list(dict.fromkeys([*map(str, held), *said_again]))
        if len(ids) > len(held):
            changes["sourceTurnIds"] = ids[:1] + ids[1:][-(MAX_SOURCE_TURNS - 1) :]
    sessions = sessions_of(frontmatter)
    if session and session.strip() and session not in sessions:
        ids = [*sessions, session]
        changes["sessionKeys"] = ids[:1] + ids[1:][-(MAX_SOURCE_TURNS - 1) :]
    return changes


def host_turn_ids(turns: Sequence[Turn]) -> frozenset[str]:
    """The ids of ``turns`` that name them beyond their session: a host's (a Claude Code ``uuid``, a Codex
    ``payload.id``; :attr:`Turn.host_id`). Not an id made from a place (``L3``, ``m2``), nor a caller's
    ``turnId``: clients number turns per conversation, so "1" of today's chat is not "1" of last week's
    (the same session sending its turn again is a retry, which the session buffer drops by that id)."""
    return frozenset(t.turn_id for t in turns if t.turn_id and t.host_id)


def said_before(frontmatter: Mapping[str, Any], turn_ids: Sequence[str], host_ids: frozenset[str]) -> bool:
    """Whether the memory was made from these very turns: each of ``turn_ids`` is one of ``host_ids`` and in
    its ``sourceTurnIds`` (or ``sourceTurnId``). Then it is the same utterance read again — a forked session's
    copy of its parent's lines, a transcript observed again under another key — not a reconfirmation."""
    held = frontmatter.get("sourceTurnIds")
    known = {str(t) for t in held} if isinstance(held, list) else set()
    if isinstance(frontmatter.get("sourceTurnId"), str):
        known.add(frontmatter["sourceTurnId"])
    return bool(turn_ids) and all(t in host_ids and t in known for t in turn_ids)
