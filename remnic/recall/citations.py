"""Citation blocks: a recall's results as ``<oai-mem-citation>`` entries pointing at the memories' files.

The layout is the one Codex reads (and Remnic emits)::

    <oai-mem-citation>
    <citation_entries>
    facts/the-staging-db-port-is-now-5433.md:22-22|note=[fact: The staging DB port is now 5433.]
    </citation_entries>
    <rollout_ids>
    standup-0509
    </rollout_ids>
    </oai-mem-citation>

One entry per memory: its path, the 1-based lines its text occupies in the file, and a note;
``rollout_ids`` are the sessions the cited memories were observed in (their ``sessionKey``, and
the ``sessionKeys`` a memory that near-duplicates were merged into carries).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

NOTE_CHARS = 80


@dataclass(frozen=True)
class Cited:
    path: str
    file_text: str
    content: str
    category: str
    session_key: str | None = None
    sessions: tuple[str, ...] = ()
    """Every session it was observed in (:func:`sessions_of`); ``session_key`` alone when empty."""


def sessions_of(frontmatter: Mapping[str, Any]) -> list[str]:
    """Every session a memory was observed in, once each: its ``sessionKey`` (the one it was written
    in; single-valued), then the ``sessionKeys`` a consolidation gave it when it merged near-duplicates
    said in other sessions."""
    held = frontmatter.get("sessionKeys")
    keys = [frontmatter.get("sessionKey"), *(held if isinstance(held, list) else [])]
    return list(
        dict.fromkeys(str(k) for k in keys if isinstance(k, str | int) and not isinstance(k, bool) and str(k).strip())
    )


def body_lines(file_text: str, content: str) -> tuple[int, int]:
    """First and last line (1-based, inclusive) of ``content`` in the file; the last line when not found."""
    at = file_text.find(content) if content else -1
    if at < 0:
        last = max(1, file_text.count("\n"))
        return last, last
    start = file_text.count("\n", 0, at) + 1
    return start, start + content.count("\n")


def _note(category: str, content: str) -> str:
    text = " ".join(content.split())
    text = text if len(text) <= NOTE_CHARS else text[: NOTE_CHARS - 1] + "…"
    return f"{category}: {text}".replace("[", "(").replace("]", ")")


def citation_block(cited: Sequence[Cited]) -> str:
    """The block for these memories (empty entries still give the tags)."""
    entries = []
    for c in cited:
        start, end = body_lines(c.file_text, c.content)
        entries.append(f"{c.path}:{start}-{end}|note=[{_note(c.category, c.content)}]")
    rollouts: Iterable[str] = dict.fromkeys(
        s for c in cited for s in (c.sessions or ((c.session_key,) if c.session_key else ()))
    )
    return "\n".join(
        ["<oai-mem-citation>", "<citation_entries>", *entries, "</citation_entries>", "<rollout_ids>", *rollouts,
         "</rollout_ids>", "</oai-mem-citation>"]
    )  # fmt: skip
