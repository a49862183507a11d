"""The memory repository's durable ``state/`` folder: set up, migrated, and (``state.commit``) committed.

``.remnic/`` is a cache anyone may delete; ``state/`` holds what cannot be rebuilt from
the memory files: the transcript archive (``state/transcripts/``), the recall audit ledger
(``state/audit/``), the feedback and compaction ledgers and the agent hooks' cursors.
Reindex never touches it. By default it is git-ignored (the template's ``.gitignore``,
and a ``state/.gitignore`` of ``*`` for repositories made before); with ``state.commit``
remnic commits the state files changed since its last state commit, never a lock file
(``*.lock``: an empty flock target, no state), and its own ``state/.gitignore`` keeps them out
of a plain ``git add`` too.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.config import DURABLE_DIR, STATE_DIR
from remnic.fsio import write_atomic
from remnic.observe.lcm import migrate_legacy as migrate_transcripts
from remnic.repo.messages import trailers_for

if TYPE_CHECKING:
    from .memory import Memory

log = logging.getLogger("remnic.state")

IGNORE_MARKER = "# remnic's durable state"
IGNORE_TEXT = (
    f"{IGNORE_MARKER} (transcripts, recall audit, feedback): it cannot be rebuilt, so never delete it\n"
    "# to clean up. It stays on this machine, not in git; set state.commit to true to commit it.\n*\n"
)
COMMIT_IGNORE_TEXT = (
    f"{IGNORE_MARKER}: committed (state.commit), but not its lock files, which hold no state.\n*.lock\n"
)
LOCK_SUFFIX = ".lock"
"""The flock targets beside session buffers: empty, per process, never state worth committing."""
COMMITTED_MARK = "state-committed.json"
"""In the cache: the size and mtime of each state file as remnic last committed it."""
HOOK_CURSORS = "agent-hooks.json"


@contextmanager
def _migration_lock(cache: Path) -> Iterator[None]:
    cache.mkdir(parents=True, exist_ok=True)
    fd = os.open(cache / "migrate.lock", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def open_state(root: Path, commit: bool) -> dict[str, int]:
    """Make ``state/`` ready and move anything durable still in the cache into it (once).

    Cheap when there is nothing to do: a few ``stat`` calls. Returns what was migrated.
    """
    durable, cache = root / DURABLE_DIR, root / STATE_DIR
    moved: dict[str, int] = {}
    try:
        _ignore_file(durable, commit)
        legacy = [cache / "observe", cache / "audit", cache / HOOK_CURSORS]
        if any(p.exists() for p in legacy):
            from remnic.recall.audit import migrate_legacy as migrate_audit  # the recall layer loads on demand

            with _migration_lock(cache):
                moved["turns"] = migrate_transcripts(root)
                moved["auditEntries"] = migrate_audit(cache, durable)
                old, new = cache / HOOK_CURSORS, durable / HOOK_CURSORS
                if old.exists() and not new.exists():
                    durable.mkdir(parents=True, exist_ok=True)
                    os.replace(old, new)
                    moved["hookCursors"] = 1
                old.unlink(missing_ok=True)
            if any(moved.values()):
                log.info("moved durable state out of %s into %s: %s", cache, durable, moved)
    except OSError as exc:  # a read-only checkout: nothing will be written there either
        log.debug("state/ not prepared: %s", exc)
    return moved


def _ignore_file(durable: Path, commit: bool) -> None:
    """Our ``state/.gitignore`` as the setting wants it: ``*`` off, ``*.lock`` with state.commit.
    A ``.gitignore`` the user wrote (no marker line) is left alone."""
    marker = durable / ".gitignore"
    wanted = COMMIT_IGNORE_TEXT if commit else IGNORE_TEXT
    try:
        current: str | None = marker.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = None
    except OSError:
        return
    if current == wanted or (current is not None and not current.startswith(IGNORE_MARKER)):
        return
    durable.mkdir(parents=True, exist_ok=True)
    write_atomic(marker, wanted)


def _signature(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


def _committable(path: Path) -> bool:
    name = path.name
    return (
        path.is_file()
        and not path.is_symlink()
        and name != ".gitignore"
        and not name.endswith(LOCK_SUFFIX)
        and "\n" not in name
    )


def _tracked_locks(mem: Memory) -> list[str]:
    """Lock files under ``state/`` that an earlier state commit put in git: taken out of the next one."""
    if mem.ledger.head() is None:
        return []
    listed = mem.ledger.git("ls-tree", "-r", "-z", "--name-only", "HEAD", "--", DURABLE_DIR, strip=False)
    return [p for p in listed.split("\0") if p.endswith(LOCK_SUFFIX)]


def changed_state_files(root: Path) -> list[str]:
    """Files under ``state/`` whose size or mtime differs from when remnic last committed them (every
    file when the record is gone: committing unchanged bytes makes no commit)."""
    durable = root / DURABLE_DIR
    try:
        done = json.loads((root / STATE_DIR / COMMITTED_MARK).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        done = {}
    out = []
    for path in sorted(durable.rglob("*")) if durable.is_dir() else ():
        if _committable(path):
            rel = path.relative_to(root).as_posix()
            if done.get(rel) != _signature(path):
                out.append(rel)
    return out


def commit_state(mem: Memory, reason: str, *, source: str = "api") -> str | None:
    """With ``state.commit``: one commit of the state files changed since the last one (None when
    the setting is off or nothing changed). Each file is committed with the bytes read here; a turn
    appended meanwhile goes in the next state commit."""
    if not mem.settings.state.commit:
        return None
    mark = mem.root / STATE_DIR / COMMITTED_MARK
    with mem.committer.exclusive() as tx:
        try:
            done = json.loads(mark.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            done = {}
        for rel in changed_state_files(mem.root):
            full = mem.root / rel
            before = _signature(full)
            data = full.read_bytes()
            tx.put(rel, data, on_disk=True)
            # Recorded only when nothing was appended while reading: else it is still "changed".
            done[rel] = before if _signature(full) == before and len(data) == before[0] else None
        for rel in _tracked_locks(mem):
            tx.remove(rel, on_disk=True)  # out of git; the file itself stays for the lock's holders
            done.pop(rel, None)
        outcome = tx.commit(
            f"remnic state: {reason}"[:120], trailers_for("state", [], mem.settings.namespaces.default, source)
        )
        write_atomic(mark, json.dumps({k: v for k, v in done.items() if v is not None}, sort_keys=True))
    return outcome.sha


def state_status(root: Path) -> dict[str, Any]:
    durable = root / DURABLE_DIR
    files = [p for p in durable.rglob("*") if p.is_file()] if durable.is_dir() else []
    return {
        "dir": DURABLE_DIR + "/",
        "exists": durable.is_dir(),
        "files": len(files),
        "bytes": sum(p.stat().st_size for p in files),
    }
