"""The transcript archive through the service: search, status, compaction flush and record.

The archive itself (``state/transcripts/``) and its rebuildable tantivy index
(``.remnic/lcm/``) are :mod:`remnic.observe.lcm`; these are the operations every
surface calls, answering with the original Remnic's fields plus remnic's own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.errors import NotFoundError, ValidationError
from remnic.memfile.model import now_iso
from remnic.memfile.validate import check_namespace
from remnic.observe.lcm import TRANSCRIPTS, archive_files, archived_sessions, record_compaction, session_turns

from .state import commit_state

if TYPE_CHECKING:
    from remnic.observe.lcm.index import LcmHit, LcmIndex

    from .memory import Memory


def _index(mem: Memory) -> LcmIndex:
    from remnic.observe.lcm.index import LcmIndex  # tantivy loads only for a search or status

    return LcmIndex(mem.root)


def hit_dict(hit: LcmHit) -> dict[str, Any]:
    """The original's ``{sessionId, content, turnIndex}`` plus remnic's namespace, role, time and score,
    and the turn's ``speaker``, ``turnId`` and ``timestamp`` when it was archived with them."""
    out: dict[str, Any] = {
        "sessionId": hit.session_key,
        "content": hit.content,
        "turnIndex": hit.turn_index,
        "sessionKey": hit.session_key,
        "namespace": hit.namespace,
        "role": hit.role,
        "ts": hit.ts,
        "score": round(hit.score, 6),
    }
    for key, value in (("speaker", hit.speaker), ("turnId", hit.turn_id), ("timestamp", hit.timestamp)):
        if value:
            out[key] = value
    return out


def _check_namespace(namespace: str) -> None:
    """A namespace that is no valid name is the caller's mistake (a usage error naming the valid form),
    not a session that happens to have no turns."""
    problems = check_namespace(namespace)
    if problems:
        raise ValidationError(problems[0].describe(), problems=problems)


def search(
    mem: Memory,
    query: str,
    *,
    session_key: str | None = None,
    session_prefix: str | None = None,
    namespaces: Sequence[str] | None = None,
    limit: int = 10,
    warnings: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Archived turns matching ``query``, best first (BM25 over the turns, the whole phrase boosted);
    a query of stopwords only is searched as a phrase, and ``warnings`` (when given) says so."""
    if not isinstance(query, str) or not query.strip():
        raise ValidationError.single("query", "must be a non-empty string")
    if not 1 <= limit <= 100:
        raise ValidationError.single("limit", f"must be from 1 to 100, got {limit}")
    for ns in namespaces or ():
        _check_namespace(ns)
    hits = _index(mem).search(
        query,
        limit=limit,
        session_key=session_key,
        session_prefix=session_prefix,
        namespaces=namespaces,
        excerpt_chars=mem.settings.state.lcm_excerpt_chars,
        warnings=warnings,
    )
    return [hit_dict(h) for h in hits]


def scope_warning(
    mem: Memory,
    *,
    session_key: str | None = None,
    session_prefix: str | None = None,
    namespaces: Sequence[str] | None = None,
) -> str | None:
    """Why a search found nothing when its ``--session``, ``--session-prefix`` or ``--namespace`` matches
    no archived session at all (a mistyped key would read like "nobody said that"), naming the sessions or
    namespaces that are archived; None when each filter matches some session. It names the whole archive,
    so only for a surface whose user may list it (the CLI), never a principal held to one namespace."""
    every = archived_sessions(mem.root)
    sessions = every
    where = ""
    if namespaces is not None:
        known = list(dict.fromkeys(ns for ns, _ in every))
        if not any(ns in known for ns in namespaces):
            listed = ", ".join(sorted(known)) or "none yet"
            named = ", ".join(repr(ns) for ns in namespaces) or "(none)"
            return (
                f"--namespace {named}: no turn is archived in that namespace (namespaces with archived turns: {listed})"
            )
        sessions = [(ns, key) for ns, key in every if ns in namespaces]
        where = f" in namespace {', '.join(namespaces)}"
    keys = list(dict.fromkeys(key for _, key in sessions))
    if session_key is not None and session_key not in keys:
        elsewhere = sorted({ns for ns, key in every if key == session_key})
        if elsewhere:
            return (
                f"--session {session_key!r}: no turn of it is archived{where}; it is archived in namespace "
                f"{', '.join(elsewhere)} (give that --namespace, or none for every namespace)"
            )
        return f"--session {session_key!r}: no session with that key is archived{where} (is the key right? {_listed(keys)})"
    if session_prefix is not None and not any(key.startswith(session_prefix) for key in keys):
        return f"--session-prefix {session_prefix!r}: no archived session key{where} starts with it ({_listed(keys)})"
    return None


def _listed(keys: Sequence[str], shown: int = 5) -> str:
    if not keys:
        return "no session is archived yet"
    more = f" and {len(keys) - shown} more" if len(keys) > shown else ""
    return "sessions archived, newest first: " + ", ".join(keys[:shown]) + more


def status(mem: Memory, readable: Callable[[str], bool] | None = None) -> dict[str, Any]:
    """``{enabled, archiveAvailable, stats: {totalTurns}}`` plus sessions and what the index caught up.
    With ``readable``, the stats count only the namespaces it admits (a caller learns nothing of the rest)."""
    index = _index(mem)
    caught = index.catch_up()
    turns, sessions = caught.total, caught.files
    if readable is not None:
        # Each namespace's sessions are the files of its own folder (store.session_file).
        folders = [p.parent.name for p in archive_files(mem.root)]
        admitted = sorted({ns for ns in folders if readable(ns)})
        turns, sessions = index.count(admitted), sum(1 for ns in folders if ns in admitted)
    unreadable = index.unreadable()
    if readable is not None:
        unreadable = {rel: n for rel, n in unreadable.items() if readable(rel.split("/")[-2])}
    durable = mem.settings.durable_dir
    available = durable.is_dir() and os.access(durable, os.W_OK)
    return {
        "enabled": True,
        "archiveAvailable": available,
        "stats": {"totalTurns": turns, "sessions": sessions},
        "archiveDir": f"{durable.name}/{TRANSCRIPTS}/",
        "index": {
            "rebuilt": caught.rebuilt,
            "added": caught.added,
            **({"reason": caught.reason} if caught.reason else {}),
        },
        # Lines that are no turn (a torn append, a hand edit): never searchable, so never silent.
        **({"unreadable": {"lines": sum(unreadable.values()), "files": unreadable}} if unreadable else {}),
    }


def unreadable_line(files: dict[str, int]) -> str:
    """``N unreadable line(s) in FILE[, FILE…]``: what status and doctor say of lines that are no turn."""
    shown = ", ".join(f"{rel} ({n})" for rel, n in sorted(files.items())[:5])
    more = f" and {len(files) - 5} more file(s)" if len(files) > 5 else ""
    return f"{sum(files.values())} unreadable line(s) in {shown}{more}"


def archive_check(root: Path) -> dict[str, Any]:
    """doctor's line on the transcript archive: lines in it that are no turn (a torn append after a crash
    or a full disk, a hand edit) are never searchable; they are reported here, not skipped in silence."""
    from remnic.observe.lcm.index import LcmIndex

    try:
        files = LcmIndex(root).unreadable()
    except OSError as exc:
        return {"name": "archive", "status": "warn", "detail": f"transcript archive not readable: {exc}"}
    if not files:
        return {"name": "archive", "status": "ok", "detail": "every line of the transcript archive is readable"}
    return {
        "name": "archive",
        "status": "warn",
        "detail": unreadable_line(files) + ": each is a torn or hand-edited line, not searchable "
        "(the turns around it are); delete the line by hand to clear this (the search index is rebuilt)",
        "problems": [f"{rel}: {n} unreadable line(s)" for rel, n in sorted(files.items())],
    }


def flush(mem: Memory, session_key: str, namespace: str, *, source: str = "api") -> dict[str, Any]:
    """Before a host compacts its context: every turn observed so far is archived (observe writes
    synchronously) and searchable (the index catches up now); with ``state.commit`` the archive is
    committed too. NotFoundError when the session has archived no turn in ``namespace``: a wrong key
    or namespace would otherwise look like a flush that worked."""
    _check_namespace(namespace)
    archived = session_turns(mem.root, namespace, session_key)
    if not archived:
        raise NotFoundError(
            f"no session {session_key!r} in namespace {namespace!r}: no turn of it is archived (is the key right?)"
        )
    caught = _index(mem).catch_up()
    sha = commit_state(mem, f"lcm flush {session_key}", source=source)
    out: dict[str, Any] = {
        "enabled": True,
        "flushed": True,
        "sessionKey": session_key,
        "namespace": namespace,
        "archivedTurns": archived,
        "indexedTurns": caught.total,
    }
    if sha is not None:
        out["stateCommit"] = sha
    return out


def record(mem: Memory, session_key: str, namespace: str, tokens_before: int, tokens_after: int) -> dict[str, Any]:
    """Record a host compaction (token counts before and after) in ``state/lcm-compactions.jsonl``."""
    for name, value in (("tokensBefore", tokens_before), ("tokensAfter", tokens_after)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValidationError.single(name, f"must be a non-negative integer, got {value!r}")
    _check_namespace(namespace)
    turns = session_turns(mem.root, namespace, session_key)
    record_compaction(
        mem.root,
        {
            "ts": now_iso(),
            "sessionKey": session_key,
            "namespace": namespace,
            "tokensBefore": tokens_before,
            "tokensAfter": tokens_after,
            "turnsArchived": turns,
        },
    )
    return {
        "enabled": True,
        "recorded": True,
        "sessionKey": session_key,
        "namespace": namespace,
        "turnsArchived": turns,
    }
