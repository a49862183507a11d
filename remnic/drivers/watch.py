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
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.config import STATE_DIR
from remnic.config.settings import DELETE_SETTLE_S
from remnic.errors import RemnicError
from remnic.memfile.paths import MemoryPaths
from remnic.service import SyncReport

from .watch_events import _MOVE_PAIRING_S, _Handler, classify, is_directory_move, watch_line

__all__ = ["Watcher", "classify", "is_directory_move", "watch_line"]

if TYPE_CHECKING:
    from remnic.service.memory import Memory

_JUMP_S = 5.0
_FOLDER_CHECK_S = 1.0
"""How often the top-level folders are compared with their watches (a missed event costs at most this)."""
_HELD_RETRY_S = 1.0
"""First retry of a file held open for writing (closing it is an event too; this catches a reader-only
close, or a polling observer); doubled up to the rescan interval while it stays open."""
_GIT_LOCK_STALE_S = 30.0
"""A younger ``.git/index.lock`` is another git command at work: the sync waits for it (up to this long)."""
_IDLE_BATCH = 128
"""Texts per batch when the watcher computes vectors between saves: a save waits at most for one."""
Emit = Callable[[dict[str, Any]], None]


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
        self._said: dict[str, tuple[str, object]] = {}
        """Skipped path → (why, its version) said by the last pass: not said again while both stay."""
        self._lock_said = False
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

        # A folder moved out and back is watched again by its recursive emitter, which finds the old
        # callback still registered: watchdog warns with a dump of its internals, replaces it, and works on.
        warnings.filterwarnings("ignore", message="Callback with id .* already exists", category=RuntimeWarning)
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
        """Whether a fresh ``.git/index.lock`` (another git command) defers the sync; said once while it does."""
        try:
            age = time.time() - (self.memory.git_dir / "index.lock").stat().st_mtime
        except FileNotFoundError:
            age = _GIT_LOCK_STALE_S
        busy = age < _GIT_LOCK_STALE_S
        if busy and not self._lock_said:
            wait = max(_GIT_LOCK_STALE_S - age, 0)
            message = (
                f"waiting for git: .git/index.lock is held (for {max(age, 0):.0f} s; a git command is running, or one"
                f" was killed); saves sync once it is gone, or in {wait:.0f} s anyway"
            )
            self.emit({"event": "note", "message": message})
        self._lock_said = busy
        return busy

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
        said, self._said = self._said, {}
        # The first pass says every problem and skip: "once per version" is per watcher, and the person
        # starting it has not been told in this terminal that a note waits to be fixed.
        for event in report.events(only_new_problems=self.syncs > 1):
            if event.get("event") == "skipped":
                path = str(event.get("path"))
                if path in held & was_held:
                    continue  # still held open: said when it was first seen
                version = (str(event.get("reason")), _version(self.root / path))
                self._said[path] = version
                if said.get(path) == version:
                    continue  # a symlink, say, listed again by every pass: said once per version
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
        for problem in report.problems:  # malformed: left untouched and uncommitted (unless git has it as it is)
            if problem.path and problem.path not in {*report.in_git_problem_paths, *(i["path"] for i in left)}:
                at = f"line {problem.line}: " if problem.line else ""
                left.append({"path": problem.path, "reason": f"malformed ({at}{problem.field}: {problem.message})"})
        return {"flushed": not left, "left": left, "notFlushed": None}


def _version(path: Path) -> object:
    """What tells one version of a skipped file from the next: a symlink's target, else its inode, size, mtime."""
    try:
        st = os.lstat(path)
        return os.readlink(path) if os.path.islink(path) else (st.st_ino, st.st_size, st.st_mtime_ns)
    except OSError:
        return None
