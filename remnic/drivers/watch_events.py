"""The watcher's view of file events (what a changed path means) and the lines it prints for its events."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler

from remnic.config import STATE_DIR
from remnic.memfile.paths import is_editor_temp, may_be_memory
from remnic.service import sync_event_line

if TYPE_CHECKING:
    from .watch import Watcher

_IGNORED_EVENTS = {"opened", "closed_no_write"}
_GIT_REFS = (".git/HEAD", ".git/packed-refs")
_MOVE_PAIRING_S = 0.6  # watchdog holds an IN_MOVED_FROM without its pair 0.5 s, then reports a deletion


def classify(rel: str) -> str | None:
    """What a changed repo-relative path means to the watcher: ``memory``, ``git``, ``config`` or None (ignore)."""
    if not rel or rel == ".":
        return None
    if rel.startswith(".git/") or rel == ".git":
        if rel.endswith(".lock"):
            return None
        if rel in _GIT_REFS or rel.startswith(".git/refs/heads/"):
            return "git"
        return None
    parts = rel.split("/")
    name = parts[-1]
    if parts[0] == STATE_DIR or is_editor_temp(name):
        return None
    if name.startswith((".#", "#")) or (name.startswith(".") and name != ".gitignore"):
        return None
    if name == ".gitignore":
        return "config"
    if may_be_memory(rel):  # sync applies the repository's own rule
        return "memory"
    return None


def is_directory_move(event: FileSystemEvent) -> bool:
    return bool(event.is_directory and event.event_type in ("moved", "deleted"))


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in _IGNORED_EVENTS:
            return
        paths = [event.src_path, getattr(event, "dest_path", "") or ""]
        kinds = set()
        gone: list[str] = []
        arriving = False
        for n, raw in enumerate(paths):
            if not raw:
                continue
            rel = self.watcher.rel(raw)
            if rel is None:
                continue
            if event.is_directory:
                top = rel.split("/")[0]
                if "/" not in rel and not rel.startswith(".") and rel != STATE_DIR and event.event_type != "modified":
                    self.watcher.folders_changed()  # made, deleted or moved: its watch is redone by the loop
                    kinds.add("memory")  # files saved before the new watch started are found by the sync
                    arriving = arriving or event.event_type == "created"  # a file moved into it is not seen
                if is_directory_move(event) and not top.startswith(".") and top != STATE_DIR:
                    kinds.add("memory")
                continue
            kind = classify(rel)
            if kind == "memory" and event.event_type == "deleted" and os.path.lexists(raw):
                # Whatever stands there now arrived with an event of its own. Sync's stamp swaps its copy in
                # from the unwatched .remnic/tmp (RENAME_EXCHANGE): the old file's move out, unpaired, comes
                # as this "deleted" 0.5 s later and would start a needless pass (cutting short idle vectors).
                continue
            if kind:
                kinds.add(kind)
            if kind == "memory" and n == 0 and event.event_type in ("deleted", "moved") and not self._to_memory(event):
                gone.append(rel)  # deleted, or renamed to a name no memory has (`file~`): maybe a save under way
            if kind == "memory" and event.event_type == "created" and not self.watcher.memory_paths().is_memory(rel):
                arriving = True  # maybe moved here from a memory folder: its deletion comes later
        if kinds:
            self.watcher.notify(kinds, gone, arriving=arriving)

    def _to_memory(self, event: FileSystemEvent) -> bool:
        """Whether a move lands on a memory path (a rename: both sides are synced as one, at once). The
        repository's own rule decides, not :func:`classify`'s superset: a move to ``notes/x.md`` (outside
        the memory folders) is a disappearance like ``x.md~``, and moved back within the hold it is no change."""
        dest = getattr(event, "dest_path", "") or ""
        rel = self.watcher.rel(dest) if dest else None
        return rel is not None and classify(rel) == "memory" and self.watcher.memory_paths().is_memory(rel)


def watch_line(event: dict[str, Any]) -> str | None:
    """The one line of text the watcher prints for an event (None: nothing to print)."""
    kind = event.get("event")  # a warning or a note: the line sync prints for it (the last case)
    if kind == "error":
        return f"error: {event['message']} (retrying in {event['retryInS']}s)"
    if kind == "ready":
        return f"watching {event['memoryDir']} (debounce {event['debounceMs']} ms); Ctrl-C to stop"
    if kind == "synced":
        return None
    if kind == "paused":
        return f"{event['message']}"  # "a rebase is in progress; sync is paused until …"
    if kind == "resumed":
        return "sync resumed: the merge or rebase is over"
    if kind == "stopped":  # says what the last sync left uncommitted, never a flush that did not happen
        changes, passes, left = event.get("changes", 0), event["syncs"], event.get("left") or []
        head = f"stopped: {changes} change{'' if changes == 1 else 's'} synced"
        head += f" in {passes} sync pass{'' if passes == 1 else 'es'}"
        if left:
            what = "; ".join(f"{item['path']}: {item['reason']}" for item in left)
            fixed = "fixed, " if any(str(item["reason"]).startswith("malformed") for item in left) else ""
            return f"{head}; {len(left)} left uncommitted ({what}); run `remnic sync run` once {fixed}saved and closed"
        if event.get("notFlushed"):
            return f"{head}; pending changes not flushed ({event['notFlushed']}); run `remnic sync run`"
        return f"{head}; pending changes flushed"
    if kind == "vectors":
        left = f"; {event['remaining']} notes still wait for theirs" if event["remaining"] else ""
        return f"computed the vectors of {event['filled']} notes{left}"
    if kind == "consolidated":
        return str(event["summary"])
    if kind == "observations":
        flushed = f"flushed idle session(s) {', '.join(event['flushed'])}" if event["flushed"] else ""
        merging = "consolidating the new observations" if event["consolidating"] else ""
        return "; ".join(x for x in (flushed, merging) if x)
    return sync_event_line(event)
