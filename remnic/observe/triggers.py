"""When a session's buffer flushes: pure decisions over the pending turns.

In order: a host event (an explicit flush, the session's end, a compaction or reset: everything
pending goes), the turn count, the time the pending turns span, and a topic shift (the mean
embedding of the newest ``topicWindow`` turns against the ``topicWindow`` before them). Time and
topic flush only the turns *before* the boundary, so the new topic (or the turn that arrived after
the pause) starts the next flush. The service calls :func:`decide_flush` after every append, and
again after each flush until it says no.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from remnic.config import ObserveSettings
from remnic.errors import ValidationError

from .buffer import BufferedTurn

if TYPE_CHECKING:  # numpy loads with the first topic check: a buffered turn alone never needs it
    import numpy as np

FLUSH_EVENTS = ("explicit", "session-end", "compaction", "reset")
TOPIC_TEXT_CHARS = 512  # the start of a turn says what it is about; long pastes add only noise

Embed = Callable[[Sequence[str]], Any]


@dataclass(frozen=True)
class FlushDecision:
    """Whether to flush, why, and up to which turn (``upto_seq`` None: every pending turn)."""

    flush: bool
    reason: str | None = None
    upto_seq: int | None = None
    detail: str = ""
    similarity: float | None = None


KEEP_BUFFERING = FlushDecision(False)


def decide_flush(
    pending: Sequence[BufferedTurn],
    settings: ObserveSettings,
    *,
    event: str | None = None,
    embed: Embed | None = None,
    new_from_seq: int | None = None,
) -> FlushDecision:
    """The flush decision for a session's pending turns (oldest first).

    ``event`` is one of :data:`FLUSH_EVENTS` or None. ``embed(texts) -> vectors`` (unit rows)
    enables the topic-shift trigger; ``new_from_seq`` limits it to boundaries next to the turns
    just appended (older boundaries were judged when their turns arrived).
    """
    if not pending:
        return KEEP_BUFFERING
    if event is not None:
        if event not in FLUSH_EVENTS:
            raise ValidationError.single("event", f"unknown flush event {event!r}", options=FLUSH_EVENTS)
        return FlushDecision(True, event, detail=f"{event}: {len(pending)} pending turns")
    if len(pending) >= settings.buffer_max_turns:
        return FlushDecision(True, "turn-count", detail=f"{len(pending)} ≥ bufferMaxTurns {settings.buffer_max_turns}")
    decision = time_boundary(pending, settings.buffer_max_minutes)
    if decision.flush:
        return decision
    if embed is not None and settings.topic_shift:
        return topic_boundary(pending, embed, settings.topic_window, settings.topic_similarity_floor, new_from_seq)
    return KEEP_BUFFERING


def time_boundary(pending: Sequence[BufferedTurn], max_minutes: float) -> FlushDecision:
    """Flush the turns before the first one said ``max_minutes`` or more after the oldest pending one.

    Once a pending turn has a timestamp of its own, the turns without one take no part: their receive
    time (now) against a transcript's times would cut the session at each of them (a one-turn flush);
    they go with the timed turns around them."""
    if max_minutes <= 0:
        return KEEP_BUFFERING
    own = any(b.turn.timestamp for b in pending)
    timed = [(i, t) for i, b in enumerate(pending) if (t := b.said_at if own else b.time) is not None]
    if not timed:
        return KEEP_BUFFERING
    first, start = timed[0]
    for i, when in timed[1:]:
        if when - start >= max_minutes * 60:
            minutes = (when - start) / 60
            return FlushDecision(
                True,
                "time-elapsed",
                upto_seq=pending[i - 1].seq,
                detail=f"turn {pending[i].seq} came {minutes:.0f} min after turn {pending[first].seq} (bufferMaxMinutes {max_minutes:g})",
            )
    return KEEP_BUFFERING


def topic_boundary(
    pending: Sequence[BufferedTurn],
    embed: Embed,
    window: int,
    floor: float,
    new_from_seq: int | None = None,
) -> FlushDecision:
    """The first boundary where the windows either side are less similar than ``floor``."""
    if len(pending) < 2 * window:
        return KEEP_BUFFERING
    # Boundaries b split pending[:b] / pending[b:]; a window is complete on both sides.
    first_new = 0
    if new_from_seq is not None:
        first_new = next((i for i, b in enumerate(pending) if b.seq >= new_from_seq), len(pending))
    lowest = max(window, first_new - window + 1)
    highest = len(pending) - window
    if lowest > highest:
        return KEEP_BUFFERING
    start = lowest - window
    texts = [b.turn.text[:TOPIC_TEXT_CHARS] for b in pending[start:]]
    import numpy as np

    vectors = np.asarray(embed(texts), dtype=np.float32)
    for boundary in range(lowest, highest + 1):
        left = vectors[boundary - window - start : boundary - start].mean(axis=0)
        right = vectors[boundary - start : boundary + window - start].mean(axis=0)
        similarity = cosine(left, right)
        if similarity < floor:
            return FlushDecision(
                True,
                "topic-shift",
                upto_seq=pending[boundary - 1].seq,
                detail=f"similarity {similarity:.2f} < topicSimilarityFloor {floor:g} before turn {pending[boundary].seq}",
                similarity=round(similarity, 4),
            )
    return KEEP_BUFFERING


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    import numpy as np

    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b) / norm) if norm > 0 else 0.0
