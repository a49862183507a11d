"""``remnic sync watch``: a watchdog observer that turns bursts of saves into one sync each.

Events only decide *when* to sync; *what* to sync always comes from the
diff-aware ``Memory.sync`` (git's view of the files plus
the commit last reconciled). So a missed, duplicated or reordered event, an
editor's temp-file dance, a checkout or a rebase underneath the watcher can
never make the index or the history wrong: the next sync sees what is there.

Timing: a sync runs ``debounce_ms`` after the last relevant event, or at most
``max_delay_ms`` after the first one of a burst that never pauses; every
``rescan_interval_s`` without events, and at once after the wall clock jumps
against the monotonic clock (the machine slept), a sync runs anyway. A memory file
that disappeared holds the burst until it has been gone for ``DELETE_SETTLE_S``
(or is back): an editor's save that renames the original to ``file~`` and writes
the new text after it is one edit, never a delete commit followed by an add. A move
between two top-level folders is two halves to watchdog (one watch each), and it
reports the leaving half, a deletion, only ``_MOVE_PAIRING_S`` later: a file arriving
at a markdown path that is not a memory (``notes/x.md``), or a new top-level folder,
holds the burst that long, so a move there and back is held like any disappearance.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler

from remnic.config import STATE_DIR
from remnic.config.settings import DELETE_SETTLE_S
from remnic.errors import RemnicError
from remnic.memfile.paths import MemoryPaths, is_editor_temp, may_be_memory
from remnic.service import SyncReport, sync_event_line

if TYPE_CHECKING:
    from remnic.service.memory import Memory

_IGNORED_EVENTS = {"opened", "closed_no_write"}
_GIT_REFS = (".git/HEAD", ".git/packed-refs")
_JUMP_S = 5.0
_FOLDER_CHECK_S = 1.0
"""How often the top-level folders are compared with their watches (a missed event costs at most this)."""
_HELD_RETRY_S = 1.0
"""First retry of a file held open for writing (closing it is an event too; this catches a reader-only
close, or a polling observer); doubled up to the rescan interval while it stays open."""
_MOVE_PAIRING_S = 0.6  # watchdog holds an IN_MOVED_FROM without its pair 0.5 s, then reports a deletion
_IDLE_BATCH = 128
"""Texts per batch when the watcher computes vectors between saves: a save waits at most for one."""
Emit = Callable[[dict[str, Any]], None]


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


class Watcher:
    """Watch one memory repository until :meth:`request_stop`; see the module docstring."""

    def __init__(
        self,
        memory: Memory,
        *,
        emit: Emit,
        debounce_ms: int | None = None,
        max_delay_ms: int | None = None,
        rescan_interval_s: float | None = None,
        commit: bool | None = None,
        source: str = "watch",
    ) -> None:
        sync = memory.settings.sync
        self.memory = memory
        self.root = Path(os.path.realpath(memory.root))
        self.emit = emit
        self.debounce_s = (sync.debounce_ms if debounce_ms is None else debounce_ms) / 1000
        self.max_delay_s = max((sync.max_delay_ms if max_delay_ms is None else max_delay_ms) / 1000, self.debounce_s)
        self.rescan_s = sync.rescan_interval_s if rescan_interval_s is None else rescan_interval_s
        self.commit = commit
        self.source = source
        self.syncs = 0
        self.changes = 0
        """Files synced over all passes (a pass often finds nothing: the start, a burst's echo)."""
        self.busy = False
        """True while a sync runs (tests and tools use it to tell "idle")."""
        self._stop = False
        self._wake = threading.Event()
        self._guard = threading.Lock()
        self._kinds: set[str] = set()
        self._first: float | None = None
        self._last: float = 0.0
        self._gone: dict[str, float] = {}
        """Memory paths seen disappearing in the pending burst → when: held for ``delete_settle_s``."""
        self.delete_settle_s = DELETE_SETTLE_S
        self._arrival_until = 0.0
        """Until when the burst waits for the deletion half of a move (see ``_MOVE_PAIRING_S``)."""
        self._last_head: str | None = None
        self._failures = 0
        self._retry_at = 0.0
        self._vectors_pending = False
        """A sync left notes without vectors: computed while no save is waiting (see embed_between_saves)."""
        self._paused = False
        """The last sync found a merge or rebase under way: said once when it starts and once when it ends."""
        self._held: set[str] = set()
        """Files the last sync found held open for writing: reported once, retried with backoff."""
        self._held_retry_at: float | None = None
        self._held_delay = _HELD_RETRY_S
        self._observer: Any = None
        self._watched: dict[str, tuple[Any, tuple[int, int]]] = {}
        """Top-level folder → (its watch, (device, inode) of the folder it was made for)."""
        self._folders_dirty = False
        self._next_folder_check = 0.0
        self.tend_s = memory.settings.observe.tend_interval_s
        memory.background_work = True  # a long-running process: consolidation after flushes
        self._consolidated: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        memory.on_consolidated = self._heard_consolidation

    # --- called from other threads / signal handlers ---

    def memory_paths(self) -> MemoryPaths:
        """The repository's rule for which files are memories (read now: the settings may be reloaded)."""
        return MemoryPaths.from_store(self.memory.settings.store)

    def rel(self, raw: str | bytes) -> str | None:
        path = os.fsdecode(raw)
        root = str(self.root)
        if path == root:
            return "."
        if not path.startswith(root + os.sep):
            try:
                path = os.path.realpath(path)
            except OSError:
                return None
            if not path.startswith(root + os.sep):
                return None
        return path[len(root) + 1 :].replace(os.sep, "/")

    def _heard_consolidation(self, result: Any) -> None:
        # The pass runs on its own thread: its event is printed by the watch loop, between its own lines.
        self._consolidated.put({"event": "consolidated", **result.to_dict(), "summary": result.summary()})
        self._wake.set()

    def _say_consolidations(self) -> None:
        while True:
            try:
                self.emit(self._consolidated.get_nowait())
            except queue.Empty:
                return

    def notify(self, kinds: set[str], gone: list[str] | None = None, *, arriving: bool = False) -> None:
        now = time.monotonic()
        with self._guard:
            self._kinds |= kinds
            for rel in gone or ():
                self._gone[rel] = now  # the latest disappearance counts
            if arriving:
                self._arrival_until = now + _MOVE_PAIRING_S
            if self._first is None:
                self._first = now
            self._last = now
        self._wake.set()

    def folders_changed(self) -> None:
        """A top-level folder was made, deleted or moved: the loop checks the folder watches at once."""
        self._folders_dirty = True
        self._wake.set()

    def request_stop(self) -> None:
        """Ask the loop to flush and stop; safe to call from a signal handler (sets a flag only)."""
        self._stop = True

    # --- the loop ---

    def _start_observer(self) -> None:
        from watchdog.observers import Observer

        observer = Observer()
        try:
            self._schedule(observer)
            observer.start()
        except OSError as exc:  # e.g. the inotify watch limit: poll instead of failing
            from watchdog.observers.polling import PollingObserver

            self.emit({"event": "warning", "message": f"file events unavailable ({exc}); polling instead"})
            observer = PollingObserver(timeout=1.0)
            self._schedule(observer)
            observer.start()
        self._observer = observer

    def _schedule(self, observer: Any) -> None:
        """Watch what matters and nothing else: never .git/objects or .remnic/, which churn on every write.

        The root and .git are watched flat (new folders, HEAD, packed-refs), branch refs and every
        visible top-level folder recursively; folders made, deleted or moved later: :meth:`check_folders`.
        """
        self._handler = _Handler(self)
        self._watched = {}
        observer.schedule(self._handler, str(self.root), recursive=False)
        git_dir = self.root / ".git"
        if git_dir.is_dir():
            observer.schedule(self._handler, str(git_dir), recursive=False)
            if (git_dir / "refs" / "heads").is_dir():
                observer.schedule(self._handler, str(git_dir / "refs" / "heads"), recursive=True)
        self.check_folders(observer)

    def check_folders(self, observer: Any = None) -> bool:
        """Bring the recursive watches in step with the visible top-level folders; whether one was added.

        Runs on the loop's thread only (after a folder event, and every second): a folder deleted or
        moved away loses its watch (watchdog keeps an emitter for a path until it is unscheduled, and
        one that followed a moved folder would report its new place as the old path), and one made
        again, by hand or by a git checkout, gets a new one.
        """
        observer = observer or self._observer
        self._folders_dirty = False
        self._next_folder_check = time.monotonic() + _FOLDER_CHECK_S
        if observer is None:
            return False
        present: dict[str, tuple[int, int]] = {}
        try:
            for entry in os.scandir(self.root):
                if entry.name.startswith(".") or entry.name == STATE_DIR or not entry.is_dir(follow_symlinks=False):
                    continue
                st = entry.stat(follow_symlinks=False)
                present[entry.name] = (st.st_dev, st.st_ino)
        except OSError:
            return False
        for name in [
            n
            for n, (watch, ident) in self._watched.items()
            if present.get(n) != ident or not self._emitting(observer, watch)
        ]:
            self._unwatch(observer, name)
        added = False
        for name in sorted(set(present) - set(self._watched)):
            try:
                watch = observer.schedule(self._handler, str(self.root / name), recursive=True)
            except OSError as exc:  # gone again, or out of inotify watches: the rescan still syncs it
                self.emit({"event": "warning", "message": f"cannot watch {name}/ ({exc})"})
                continue
            self._watched[name] = (watch, present[name])
            added = True
        return added

    @staticmethod
    def _emitting(observer: Any, watch: Any) -> bool:
        """Whether the watch's emitter still runs (inotify's stops itself when its folder is deleted)."""
        return any(e.watch == watch and not e.stopped_event.is_set() for e in list(observer.emitters))

    def _unwatch(self, observer: Any, name: str) -> None:
        watch, _ident = self._watched.pop(name)
        try:
            observer.unschedule(watch)
        except Exception:  # noqa: BLE001 - watchdog's bookkeeping for a vanished folder; the watch is gone anyway
            pass

    def _stop_observer(self) -> None:
        """Stop the observer; its own errors (watchdog's inotify bookkeeping can raise for a folder moved
        away and made again) are reported and the remaining threads stopped one by one."""
        observer, self._observer = self._observer, None
        if observer is None:
            return
        try:
            observer.stop()
        except Exception as exc:  # noqa: BLE001 - stopping must go on to the final sync
            self.emit(
                {"event": "warning", "message": f"file observer failed to stop cleanly ({type(exc).__name__}: {exc})"}
            )
            from watchdog.observers.api import EventDispatcher

            for emitter in list(observer.emitters):
                with contextlib.suppress(Exception):
                    emitter.stop()
            with contextlib.suppress(Exception):
                observer.event_queue.put_nowait(EventDispatcher.stop_event)  # wakes its dispatcher thread
        with contextlib.suppress(RuntimeError):
            observer.join(timeout=5)

    def _git_busy(self) -> bool:
        git_dir = self.memory.git_dir
        lock = git_dir / "index.lock"
        try:
            return time.time() - lock.stat().st_mtime < 30
        except FileNotFoundError:
            return False

    def _take(self) -> set[str]:
        with self._guard:
            kinds, self._kinds, self._first = self._kinds, set(), None
            self._gone, self._arrival_until = {}, 0.0
        return kinds

    def _due(self, now: float) -> float | None:
        """Seconds until the pending burst should sync (<= 0: now), or None when nothing is pending."""
        with self._guard:
            if self._first is None:
                return None
            due = min(self._last + self.debounce_s, self._first + self.max_delay_s) - now
            latest = self._first + self.max_delay_s + self.delete_settle_s - now  # deletions never stop a burst
            gone = list(self._gone.items())
            arrival = self._arrival_until - now
        if due > 0 or (not gone and arrival <= 0):
            return due
        return max(due, min(max(self._deletion_hold(gone, now), arrival), latest))

    def _deletion_hold(self, gone: list[tuple[str, float]], now: float) -> float:
        """Seconds a disappeared memory file still holds the burst: until it is back (a save that renamed
        the original away and wrote the new text) or has been gone for ``delete_settle_s`` (a deletion)."""
        hold, back = float("-inf"), []
        for rel, since in gone:
            if os.path.lexists(self.root / rel):
                back.append((rel, since))
            else:
                hold = max(hold, since + self.delete_settle_s - now)
        with self._guard:
            for rel, since in back:
                if self._gone.get(rel) == since:  # not deleted again meanwhile
                    del self._gone[rel]
        return hold

    def sync_once(self, reason: str) -> SyncReport | None:
        """One sync; reports its changes through ``emit``. Errors are reported and retried later."""
        self.busy = True
        try:
            report = self.memory.sync(commit=self.commit, source=self.source)
        except Exception as exc:  # noqa: BLE001 - the watcher reports and retries; it does not die
            self._failures += 1
            delay = min(0.5 * 2**self._failures, 30.0)
            self._retry_at = time.monotonic() + delay
            message = exc.describe() if isinstance(exc, RemnicError) else f"{type(exc).__name__}: {exc}"
            self.emit({"event": "error", "message": message, "retryInS": round(delay, 1)})
            return None
        finally:
            self.busy = False
        self._failures = 0
        if report.index == "behind":  # committed, but the index step failed (its lock held by a rebuild?)
            self._failures = 1  # retried like an error: the next sync catches the index up
            self._retry_at = time.monotonic() + 1.0
        self.syncs += 1
        self.changes += len(report.changes)
        self._last_head = report.head
        self._vectors_pending = self._probe_vectors()
        self._note_pause(report)
        held, was_held = set(report.held), self._held
        self._held = held
        self._schedule_held_retry(bool(held))
        for event in report.events(only_new_problems=True):
            if event.get("event") == "skipped" and event.get("path") in held & was_held:
                continue  # still held open: said when it was first seen
            self.emit(event)
        if report.changes or report.commit:
            self.emit(
                {
                    "event": "synced",
                    "reason": reason,
                    "commit": report.commit,
                    "changes": len(report.changes),
                    "ms": round(report.elapsed_ms, 1),
                }
            )
        return report

    def _note_pause(self, report: SyncReport) -> None:
        """One ``paused`` event when a merge or rebase starts holding sync, one ``resumed`` when it ends."""
        paused = report.mode == "paused"
        if paused and not self._paused:
            self.emit({"event": "paused", "message": report.not_committed, "head": report.head})
        elif self._paused and not paused:
            self.emit({"event": "resumed", "head": report.head})
        self._paused = paused

    def _schedule_held_retry(self, held: bool) -> None:
        if not held:
            self._held_retry_at, self._held_delay = None, _HELD_RETRY_S
            return
        self._held_retry_at = time.monotonic() + self._held_delay
        self._held_delay = min(self._held_delay * 2, max(self.rescan_s, _HELD_RETRY_S))

    def _probe_vectors(self) -> bool:
        try:
            return self.memory.vectors_pending()[0] > 0
        except Exception:  # noqa: BLE001 - a probe: the next sync asks again
            return False

    def embed_between_saves(self) -> None:
        """Compute pending vectors (a large batch of new notes) in small batches while no save is waiting."""
        try:
            done = self.memory.embed_pending(
                stop=lambda: self._stop or self._due(time.monotonic()) is not None, batch_texts=_IDLE_BATCH
            )
        except Exception as exc:  # noqa: BLE001 - reported; the next sync or `sync run` continues
            self.emit({"event": "warning", "message": f"computing vectors failed ({exc}); `remnic sync run` continues"})
            self._vectors_pending = False
            return
        self._vectors_pending = done.remaining > 0 and done.interrupted
        if done.filled:
            self.emit({"event": "vectors", "filled": done.filled, "remaining": done.remaining})

    def tend(self) -> None:
        """Flush idle sessions' buffers and consolidate after flushes (`Memory.tend_observations`)."""
        try:
            done = self.memory.tend_observations(source=self.source)
        except Exception as exc:  # noqa: BLE001 - reported; the next pass tries again
            self.emit({"event": "warning", "message": f"flushing idle sessions failed ({exc}); retried later"})
            return
        if done["flushed"] or done["consolidating"]:
            self.emit({"event": "observations", **done})

    def run(self) -> int:
        """Watch until stopped; returns an exit code (0 after a clean, flushed stop)."""
        self._start_observer()
        try:
            self.sync_once("start")
            self.emit(
                {
                    "event": "ready",
                    "memoryDir": str(self.memory.root),
                    "debounceMs": round(self.debounce_s * 1000),
                    "head": self._last_head,
                }
            )
            offset = time.time() - time.monotonic()
            next_rescan = time.monotonic() + self.rescan_s
            next_tend = time.monotonic()  # sessions that went idle while nothing watched: at once
            forced: str | None = None
            while not self._stop:
                self._say_consolidations()
                now = time.monotonic()
                new_offset = time.time() - now
                if abs(new_offset - offset) > _JUMP_S:
                    forced = "the clock jumped (the machine slept?): full diff"
                offset = new_offset
                if self._observer is not None and not self._observer.is_alive():
                    self.emit({"event": "warning", "message": "file observer stopped; restarting it"})
                    self._stop_observer()
                    self._start_observer()
                    forced = "observer restarted: full diff"
                if (self._folders_dirty or now >= self._next_folder_check) and self.check_folders():
                    self.notify({"memory"})  # files saved in a folder before its watch started
                if self._failures and forced is None:
                    forced = "retry after an error"
                due = self._due(now)
                reason = forced
                if reason is None and due is not None and due <= 0:
                    reason = "changes"
                elif reason is None and now >= next_rescan and due is None:  # a pending burst syncs soon anyway
                    reason = "periodic rescan"
                elif reason is None and self._held_retry_at is not None and now >= self._held_retry_at:
                    reason = "retry files held open"
                if reason and now >= self._retry_at and not self._git_busy():
                    self.busy = True
                    kinds = self._take()
                    if kinds == {"git"} and not forced and self.memory.head() == self._last_head:
                        self.busy = False  # our own commit moved the branch: nothing new
                    elif self.sync_once(reason) is None and kinds:
                        self.notify(kinds)  # keep the burst pending for the retry
                    forced = None
                    next_rescan = time.monotonic() + self.rescan_s
                    continue
                if due is None and self.tend_s > 0 and now >= next_tend:
                    next_tend = now + self.tend_s
                    self.tend()
                    continue
                if due is None and self._vectors_pending:
                    self.embed_between_saves()
                    continue
                wait = 0.2 if due is None else min(max(due, 0.005), 0.2)
                if reason:  # waiting on git's lock or a retry delay
                    wait = 0.05
                self._wake.wait(wait)
                self._wake.clear()
        finally:
            self._stop_observer()
            self._take()  # events may still be queued in the observer: always end with one full diff
            flush = self._flush_at_stop()
            self._say_consolidations()
            self.emit({"event": "stopped", "syncs": self.syncs, "changes": self.changes, **flush})
        return 0 if not self._failures else 1

    def _flush_at_stop(self) -> dict[str, Any]:
        """The last sync (once more when a file changed under the first), and what it left uncommitted:
        the ``stopped`` event must not claim a flush that did not happen."""
        report = self.sync_once("stop: flushing pending changes")
        if report is not None and set(report.left_behind()) - set(report.held):
            report = self.sync_once("stop: a file was still changing") or report  # reads wait for it to settle
        why = "the last sync failed" if report is None else "a merge or rebase is in progress"
        if report is None or report.mode == "paused":
            return {"flushed": False, "left": [], "notFlushed": why}
        left = [{"path": path, "reason": reason.split(";")[0]} for path, reason in report.left_behind().items()]
        return {"flushed": not left, "left": left, "notFlushed": None}


def watch_line(event: dict[str, Any]) -> str | None:
    """The one line of text the watcher prints for an event (None: nothing to print)."""
    kind = event.get("event")
    if kind == "warning":
        return f"warning: {event['message']}"
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
            return f"{head}; {len(left)} left uncommitted ({what}); run `remnic sync run` once saved and closed"
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
