"""What a recall does about memory files edited since the last commit, before it searches.

The index follows git (HEAD); a hand edit nobody has synced is in neither. Each recall asks
which memory files differ from HEAD and indexes those whose text the index does not hold yet,
without committing them (that stays the job of ``remnic sync run`` or the watcher). A
long-running process that has recalled before learns of edits from file events instead of
asking git each time (:class:`EditFeed`), so a recall with nothing edited pays next to nothing.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from remnic.config import DURABLE_DIR

if TYPE_CHECKING:
    from remnic.index.state import WorktreeReport

    from .memory import Memory

log = logging.getLogger("remnic.freshness")


def edited_memory_paths(mem: Memory) -> list[str]:
    """Memory files git reports changed since HEAD: modified, new, deleted or renamed (both names)."""
    from remnic.index.build import changed_memory_paths

    return changed_memory_paths(mem.ledger, mem.files)


def follow_edits(mem: Memory) -> WorktreeReport | None:
    """Index what was edited since HEAD (see the module docstring); None when ``recall.followEdits`` is off."""
    if not mem.settings.recall.follow_edits:
        return None
    feed = mem.edit_feed_for_recall()
    if feed is not None and feed.quiet():
        from remnic.index.state import WorktreeReport

        return WorktreeReport(dirty=feed.dirty_count)
    started = time.perf_counter()
    if feed is not None:
        feed.begin()  # events from here on count for the next recall
    dirty = edited_memory_paths(mem)
    report = mem.index.follow_worktree(mem.files, dirty, mem.settings.recall.follow_edits_max)
    if feed is not None:
        feed.settled(len(dirty), clean=not report.deferred)
    report.seconds = time.perf_counter() - started
    return report


_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE, _IN_MOVED_FROM, _IN_MOVED_TO = 0x2, 0x4, 0x8, 0x40, 0x80
_IN_CREATE, _IN_DELETE, _IN_DELETE_SELF, _IN_MOVE_SELF = 0x100, 0x200, 0x400, 0x800
_IN_Q_OVERFLOW, _IN_ISDIR, _IN_NONBLOCK, _IN_CLOEXEC = 0x4000, 0x40000000, 0o4000, 0o2000000
_MASK = (
    _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO
    | _IN_CREATE | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF
)  # fmt: skip
_MAX_FEEDS = 16
"""Open feeds per process (each holds an inotify instance; the user's limit is often 128)."""
_open_feeds: list[EditFeed] = []
_feeds_lock = threading.Lock()


class EditFeed:
    """inotify on a repository's folders, read synchronously, so a recall can tell "nothing edited
    since the last look" without asking git.

    The kernel queues an event as the change happens, so reading the queue at recall time sees
    every edit made before the recall (no watcher thread to lag behind). Any event — or a full
    queue — makes the next recall ask git. Hidden folders (``.git``, ``.remnic``) are not watched:
    a commit or checkout moves HEAD, which the index check sees anyway. Linux only; elsewhere, or
    past the watch limits, every recall asks git.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._fd = -1
        self._dirs: dict[int, str] = {}
        self._pending = True
        self._clean = False
        self.dirty_count = 0
        try:
            import ctypes
            import ctypes.util

            self._libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
            fd = self._libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
            if fd < 0:
                raise OSError(ctypes.get_errno(), "inotify_init1 failed")
            self._fd = fd
            self._watch_tree(str(root))
        except Exception as exc:  # noqa: BLE001 - no feed: every recall asks git
            log.debug("edit feed unavailable (%s); recalls ask git", exc)
            self.close()

    @classmethod
    def open(cls, root: Path) -> EditFeed | None:
        with _feeds_lock:
            _open_feeds[:] = [f for f in _open_feeds if f.running]
            if len(_open_feeds) >= _MAX_FEEDS:
                return None
            feed = cls(root)
            if not feed.running:
                return None
            _open_feeds.append(feed)
            return feed

    @property
    def running(self) -> bool:
        return self._fd >= 0

    def _watch(self, directory: str) -> None:
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(directory), _MASK)
        if wd < 0:
            raise OSError(f"inotify_add_watch failed for {directory}")
        self._dirs[wd] = directory

    def _watch_tree(self, top: str) -> None:
        # state/ holds remnic's ledgers (every recall appends to one): never memories, never watched.
        skip = os.path.join(str(self.root), DURABLE_DIR)
        for directory, subdirs, _files in os.walk(top):
            if directory == skip:
                subdirs[:] = []
                continue
            subdirs[:] = [d for d in subdirs if not d.startswith(".") and d != "node_modules"]
            self._watch(directory)

    def _drain(self) -> bool:
        """Read every queued event; True when there was any (new folders are watched as they appear)."""
        import struct

        seen = False
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return seen
            except OSError:
                self.close()
                return True
            seen = True
            offset = 0
            while offset + 16 <= len(data):
                wd, mask, _cookie, size = struct.unpack_from("iIII", data, offset)
                name = data[offset + 16 : offset + 16 + size].split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
                offset += 16 + size
                new_dir = mask & _IN_ISDIR and mask & (_IN_CREATE | _IN_MOVED_TO)
                if new_dir and wd in self._dirs and not name.startswith("."):
                    try:
                        self._watch_tree(os.path.join(self._dirs[wd], name))
                    except OSError:
                        self.close()
                        return True

    def quiet(self) -> bool:
        """True when the last check left nothing unindexed and no file has changed since."""
        with self._lock:
            if not self.running:
                return False
            if self._drain():
                self._pending = True
            return self.running and self._clean and not self._pending

    def begin(self) -> None:
        """A check starts: events from here on count for the next recall."""
        with self._lock:
            if self.running:
                self._drain()
            self._pending = False

    def settled(self, dirty: int, *, clean: bool) -> None:
        with self._lock:
            self._clean = clean
            self.dirty_count = dirty

    def close(self) -> None:
        if self._fd >= 0:
            try:
                os.close(self._fd)
            except OSError:
                pass
        self._fd = -1
