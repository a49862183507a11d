"""LCM, the lossless transcript archive: every observed turn, kept and searchable.

- :mod:`.store`: the archive itself, one JSONL file per session in the memory repo's
  durable ``state/transcripts/`` (never rebuilt, never deleted by reindex), the compaction
  ledger, and the migration from the old place in the disposable ``.remnic/``;
- :mod:`.index`: a tantivy index over the archived turns in ``.remnic/lcm/``, caught up
  from the archive on every search and rebuilt from it when missing.

It sits on the observe layer: observation starts by archiving the turns it is given
(:func:`remnic.observe.archive.archive`).
"""

from __future__ import annotations

from .store import (
    COMPACTIONS,
    TRANSCRIPTS,
    Appended,
    append_turns,
    archive_files,
    archive_name,
    archived_sessions,
    iter_turns,
    migrate_legacy,
    record_compaction,
    session_turns,
)

# The search index (:mod:`.index`, tantivy) is imported where it is used: archiving needs none of it.
__all__ = [
    "COMPACTIONS",
    "TRANSCRIPTS",
    "Appended",
    "append_turns",
    "archive_files",
    "archive_name",
    "archived_sessions",
    "iter_turns",
    "migrate_legacy",
    "record_compaction",
    "session_turns",
]
