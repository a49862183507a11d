"""The memory directory on disk: where files live, atomic writes, the write lock, scanning.

Writers hold :meth:`MemoryStore.lock` (an ``flock`` on ``.remnic/write.lock``
plus a per-process re-entrant lock) for the whole read-modify-write-commit, so
CLI processes, the watcher and the server never lose each other's changes.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from remnic.config import STATE_DIR, Settings, ensure_state_dir
from remnic.errors import FieldProblem, MemoryFormatError, NotFoundError, RepoBusyError
from remnic.fsio import NotRegularFile, read_regular, write_atomic
from remnic.memfile.model import (
    DEFAULT_NAMESPACE,
    ID_RE,
    MemoryRecord,
    category_dir,
    slugify,
)
from remnic.memfile.paths import OUTSIDE, MemoryPaths, case_twin, original_reason, relocation
from remnic.memfile.schema import DIR_CATEGORIES, NAMESPACES_DIR, nfc_id
from remnic.memfile.validate import Checked, check_bytes
from remnic.memfile.values import record_id

from .lock import process_lock
from .scan_memo import RACY_NS, Key, ScanMemo, decode, fingerprint, stat_key

_SKIP_DIRS = {".git", STATE_DIR, "node_modules", "__pycache__"}
_ID_LINE = re.compile(r"^id:\s*['\"]?([^'\"\s#]+)", re.MULTILINE)
_TOML_ID_LINE = re.compile(r"^id\s*=\s*['\"]?([^'\"\s#]+)", re.MULTILINE)
SYMLINK_REASON = "a symbolic link: remnic reads and writes regular files only"
"""Why a symlink in a memory folder is not a memory (its target may be anything, even outside the repo)."""
OUTSIDE_REASON = "leads outside the memory repository through a symlinked folder"
"""Why a memory path below a symlinked folder is neither read nor written (git records the link, not the files)."""
SYMLINKED_FOLDER = f"a symbolic link to a folder: remnic neither reads nor writes memory files through it (a file in it {OUTSIDE_REASON})"
"""A category folder that is a link: where ``store`` would write, so ``remnic doctor`` warns."""
LINKED_FOLDER = "a symbolic link to a folder: not followed, so notes reached through it are not memories (git records the link, not the files)"
"""Any other link to a folder the memory rule covers (``--adopt '**'`` over a vault's linked folder): a note."""
MEMOISE_WAIT_FROM = 200
"""Files written at once past which :meth:`MemoryStore.memoise` waits for the newest to settle: up to two
seconds at the end of a long import spare the next ``status`` or ``list`` a parse of each file."""
FILE_NOT_FOLDER = "a file where a memory folder belongs: remnic cannot store memories there until it is a folder"


@dataclass
class ScanResult:
    records: list[MemoryRecord]
    problems: list[MemoryFormatError]
    empty: list[str] = field(default_factory=list)
    """Memory files with no text yet (an empty body, no title or description): not memories until they have."""
    links: list[str] = field(default_factory=list)
    """Symbolic links where a memory file could be: not memories, never read through (see SYMLINK_REASON)."""


def _is_link(path: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def _is_category_folder(name: str) -> bool:
    """``facts``, ``namespaces/<name>/facts``: where ``store`` puts a new memory of a category."""
    parts = name.split("/")
    return (len(parts) == 1 and parts[0] in DIR_CATEGORIES) or (
        len(parts) == 3 and parts[0] == NAMESPACES_DIR and parts[2] in DIR_CATEGORIES
    )


class MemoryStore:
    """Files of one memory directory. Knows nothing about git or the index."""

    def __init__(self, settings: Settings, list_files: Callable[[], Iterable[str]] | None = None) -> None:
        """``list_files`` names the candidate files (git's view: tracked + untracked, minus ignored);
        without it the directory is walked."""
        self.settings = settings
        self._list_files = list_files
        self._text_cache: OrderedDict[tuple[str, int, int, int], str] = OrderedDict()
        self._cache_lock = threading.Lock()
        self.root = settings.memory_dir
        self.paths = MemoryPaths.from_store(settings.store)
        """Which files are memories (store.include, exclude, readmeFiles, extensions)."""
        self._lock = process_lock((self.root / STATE_DIR / "write.lock").resolve(), refuse_read_only=True)
        self._id_paths: dict[str, str] = {}
        self._rule_of_answers: MemoryPaths | None = None
        self._answers: dict[str, bool] = {}
        self._memoised: dict[str, tuple[Key, str, str, str]] = {}
        """What :meth:`memoise` parsed, for this process's next read of each file (one read each)."""

    # --- locking ---

    @contextmanager
    def lock(self) -> Iterator[None]:
        with self._lock.hold(self.settings.store.lock_timeout_s):
            yield

    # --- paths ---

    def abspath(self, rel: str) -> Path:
        return self.root / rel

    def iter_paths(self, *, existing: bool = True) -> Iterator[str]:
        """Repo-relative paths of every memory file, in a stable order (symlinks are not memory files:
        :meth:`skipped` lists them).

        ``existing=False`` skips the existence check of paths git still tracks, and the symlink check,
        for a caller that lstats each file anyway (:meth:`scan`)."""
        if not existing:
            yield from self._rule_paths()
            return
        root = os.fspath(self.root)  # plain strings: at 10k files pathlib's joins cost more than the stats
        for rel in self._rule_paths():
            try:
                mode = os.lstat(os.path.join(root, rel)).st_mode
            except OSError:
                continue  # tracked by git, gone from disk
            if not stat.S_ISLNK(mode):
                yield rel

    def _rule_paths(self) -> list[str]:
        """Every path the memory rule names (symlinks and paths git tracks that are gone included), sorted."""
        names = set(self._list_files() if self._list_files is not None else self._walk())
        known = self._answers if self._rule_of_answers is self.paths else {}
        # Only today's files are remembered, so a long-lived process holds no answer for files long gone.
        self._rule_of_answers = self.paths
        self._answers = {p: known[p] if p in known else self.paths.is_memory(p) for p in names}
        return sorted(p for p, yes in self._answers.items() if yes)

    def _is_memory(self, path: str) -> bool:
        """``paths.is_memory``, as the last listing answered it while the rule is the same: status and
        doctor ask it of every file twice (the scan, then the files that are not memories)."""
        if self._rule_of_answers is self.paths:
            answer = self._answers.get(path)
            if answer is not None:
                return answer
        return self.paths.is_memory(path)

    def skipped(self) -> list[tuple[str, str]]:
        """(path, reason) for every file that looks like a note or an attachment but is not a memory
        (outside the memory folders, README-like, excluded, not markdown): what status and doctor report."""
        names = set(self._list_files()) if self._list_files is not None else set(self._walk())
        out = self._blocked_folders(names)
        folders = {name for name, _reason in out}  # git lists a link as a file: said once, as the folder it is
        root = os.fspath(self.root)
        for path in names:
            full = os.path.join(root, path)
            if self._is_memory(path):
                if _is_link(full):
                    out.append((path, SYMLINK_REASON))
                continue
            reason = self.paths.reportable_reason(path)
            if reason is not None and path not in folders and os.path.lexists(full):
                # The original's own records are outside the memory folders too, but are no notes to adopt.
                out.append((path, (original_reason(path) or reason) if reason == OUTSIDE else reason))
        return sorted(out)

    def not_memory_reason(self, path: str) -> str | None:
        """Why a path that is not a memory gets a line in a report (None: it gets none), as :meth:`skipped`
        says it: a link to a folder (or a file where a category folder belongs) is that, never an attachment."""
        said = self._blocked_folders([path])
        return said[0][1] if said else self.paths.reportable_reason(path)

    def blocked_folders(self) -> list[tuple[str, str]]:
        """(folder, reason) for the default namespace's category folders no memory can be read from or
        written to: a few lstat calls, cheap enough for every sync pass."""
        return self._blocked_folders(sorted(DIR_CATEGORIES))

    def _blocked_folders(self, names: Iterable[str]) -> list[tuple[str, str]]:
        """Memory folders no memory can be read from or written to: a symlink to a folder (git sees a link,
        not its files; :data:`SYMLINKED_FOLDER` where ``store`` writes, else :data:`LINKED_FOLDER`) and a
        file where a category folder belongs."""
        out = []
        for name in names:
            if self.paths.is_markdown(name) or not self.paths.in_memory_folder(f"{name}/x.md"):
                continue
            try:
                st = os.lstat(self.root / name)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode) and os.path.isdir(self.root / name):
                out.append((name, SYMLINKED_FOLDER if _is_category_folder(name) else LINKED_FOLDER))
            elif stat.S_ISREG(st.st_mode) and _is_category_folder(name):
                out.append((name, FILE_NOT_FOLDER))
        return out

    def _walk(self) -> list[str]:
        """Every file below the root outside hidden and tool folders (when git cannot list them)."""
        stack = [self.root]
        out: list[str] = []
        while stack:
            directory = stack.pop()
            try:
                entries = list(os.scandir(directory))
            except FileNotFoundError:
                continue
            for entry in entries:
                name = entry.name
                if name.startswith(".") or name in _SKIP_DIRS:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False) or entry.is_symlink():
                    out.append(Path(entry.path).relative_to(self.root).as_posix())
        return out

    def allocate_path(
        self,
        category: str,
        content: str,
        namespace: str = DEFAULT_NAMESPACE,
        taken: Callable[[str], bool] | None = None,
    ) -> str:
        """A new readable path ``<category dir>/<slug>.md`` that no file uses yet (call under the lock);
        ``taken`` also rules out paths a transaction has staged. Any entry rules a path out, a dangling
        symlink too: a link is the user's, never replaced. A category folder that cannot hold a new file
        (a file, a symlink) is a RepoBusyError naming it."""
        exists = taken or (lambda rel: os.path.lexists(self.root / rel))
        base = self._existing_case(category_dir(category, namespace))
        why = self.folder_problem(f"{base}/x.md")
        if why is not None:
            raise RepoBusyError(f"cannot store a {category}: {why}; nothing was written")
        slug = slugify(content)
        for n in range(1, 10_000):
            rel = f"{base}/{slug}.md" if n == 1 else f"{base}/{slug}-{n}.md"
            if not exists(rel):
                return rel
        return f"{base}/{slug}-{secrets.token_hex(4)}.md"

    def relocated_path(
        self,
        path: str,
        category: str,
        namespace: str = DEFAULT_NAMESPACE,
        taken: Callable[[str], bool] | None = None,
        prefer: str | None = None,
    ) -> str:
        """Where a memory at ``path`` goes when its category changes (:func:`relocation`: the new category's
        folder in the same tier, the sub-path below the old one kept) under its own file name: a vault's
        ``[[Plan]]`` links and the file-name title stay. ``prefer``: a file name to take first when it is
        free (the name a clash once suffixed). ``-2``, ``-3``… before the extension only when the name is
        taken, in any case (``Plan.md`` beside ``plan.md`` is one file on macOS and Windows); ``path``
        itself when it is already there or stays."""
        folders = relocation(path, category, namespace)
        if folders is None:
            return path
        exists = taken or (lambda rel: os.path.lexists(self.root / rel))
        base = ""
        for folder in folders:  # each folder as the repository spells it already (a vault's `Decisions/`)
            base = self._existing_case(f"{base}/{folder}" if base else folder)
        why = self.folder_problem(f"{base}/x.md")
        if why is not None:
            raise RepoBusyError(f"cannot store a {category}: {why}; nothing was written")
        try:
            listing = os.listdir(self.root / base)
        except OSError:
            listing = []

        def free(name: str) -> bool:
            rel = f"{base}/{name}"
            if rel == path:
                return True
            twin = case_twin(f"{name}/x", listing)
            return not exists(rel) and (twin is None or f"{base}/{twin}" == path)

        if prefer is not None and free(prefer):
            return f"{base}/{prefer}"
        name = path.rsplit("/", 1)[-1]
        stem, dot, ext = name.rpartition(".")
        stem, ext = (stem, dot + ext) if stem else (name, "")
        for n in range(1, 10_000):
            candidate = f"{stem}{ext}" if n == 1 else f"{stem}-{n}{ext}"
            if free(candidate):
                return f"{base}/{candidate}"
        return f"{base}/{stem}-{secrets.token_hex(4)}{ext}"

    def _existing_case(self, base: str) -> str:
        """``base``, or the folder beside it that differs only in case (an adopted vault's ``Decisions/``):
        a second one would be the same folder on a case-insensitive file system, a twin on others."""
        if os.path.lexists(self.root / base):
            return base
        parent, _, leaf = base.rpartition("/")
        try:
            twin = case_twin(f"{leaf}/x", os.listdir(self.root / parent if parent else self.root))
        except OSError:
            return base
        return base if twin is None else (f"{parent}/{twin}" if parent else twin)

    # --- reading ---

    def read_bytes(self, rel: str) -> bytes:
        """A memory file's bytes; MemoryFormatError for a symlink, a non-file, or a path leaving the repo."""
        path = self.root / rel
        real_root = os.path.realpath(self.root)
        parent = os.path.realpath(path.parent)
        if parent != real_root and not parent.startswith(real_root + os.sep):
            raise MemoryFormatError(
                rel, [FieldProblem("path", "leads outside the memory repository through a symlinked folder", path=rel)]
            )
        try:
            return read_regular(path)
        except NotRegularFile as exc:
            raise MemoryFormatError(
                rel, [FieldProblem("path", exc.strerror or "is not a regular file", path=rel)]
            ) from None

    def read_text(self, rel: str) -> str:
        data = self.read_bytes(rel)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MemoryFormatError(
                rel, [FieldProblem("encoding", f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=rel)]
            ) from None

    def read_text_cached(self, rel: str) -> str:
        """``read_text`` memoised by the file's lstat (inode, size, mtime): for hot paths that re-read the
        same few files (X-ray source anchors). A changed or replaced file misses and is read afresh."""
        st = os.lstat(self.root / rel)
        key = (rel, st.st_ino, st.st_size, st.st_mtime_ns)
        with self._cache_lock:
            text = self._text_cache.get(key)
            if text is not None:
                self._text_cache.move_to_end(key)
                return text
        text = self.read_text(rel)
        with self._cache_lock:
            self._text_cache[key] = text
            while len(self._text_cache) > 256:
                self._text_cache.popitem(last=False)
        return text

    def read(self, rel: str) -> MemoryRecord:
        """A valid memory by the shared rule (see :meth:`check`); MemoryFormatError names what is wrong."""
        try:
            checked = self.check(rel)
        except (FileNotFoundError, NotADirectoryError):
            raise NotFoundError(f"no memory file at {rel}") from None
        if checked.problems or checked.record is None:
            raise MemoryFormatError(rel, checked.problems)
        return checked.record

    def check(self, rel: str) -> Checked:
        """Read and check one file by the one rule every command shares (see validate.check_text)."""
        if self._memoised:
            reused = self._reuse(rel)
            if reused is not None:
                return reused
        try:
            data = self.read_bytes(rel)
        except MemoryFormatError as exc:
            return Checked(rel, problems=list(exc.problems))
        checked = check_bytes(data, rel, self.settings.store)
        if checked.ok and checked.record is not None:
            self._id_paths[checked.record.id] = rel
        return checked

    def scan(self) -> ScanResult:
        """Every valid memory (files with no text yet are skipped) and every malformed file's problems.

        Valid files whose stat is unchanged come from the scan memo (see :mod:`remnic.scan_memo`)."""
        records: list[MemoryRecord] = []
        problems: list[MemoryFormatError] = []
        empty: list[str] = []
        links: list[str] = []
        memo = self._memo() if self.settings.store.scan_memo else None
        self._memoised = {}  # the memo has them now
        live: set[str] = set()
        root = os.fspath(self.root)
        for rel in self.iter_paths(existing=False):  # one lstat per file: the memo's key and the link check
            try:
                st = os.lstat(os.path.join(root, rel))
                if stat.S_ISLNK(st.st_mode):
                    links.append(rel)
                    continue
                checked = self._check_memoised(rel, memo, st) if memo is not None else self.check(rel)
            except (FileNotFoundError, NotADirectoryError):
                continue
            live.add(rel)
            if checked.problems:
                problems.append(MemoryFormatError(rel, checked.problems))
            elif checked.record is not None and not checked.empty:
                records.append(checked.record)
            elif checked.record is not None:
                empty.append(rel)
        if memo is not None:
            memo.close(live)
        return ScanResult(records, problems, empty, links)

    def memoise(self, paths: Iterable[str]) -> int:
        """Put the parse of each of ``paths`` (files just written) into the scan memo, so the next scan
        reads none of them again, and keep it for this process's next read of each. A file changed
        too recently for its stat to vouch for it is left out, as a scan leaves it; so for
        ``MEMOISE_WAIT_FROM`` files or more this first waits (at most ``RACY_NS``) for the newest to
        settle. Returns how many were memoised."""
        if not self.settings.store.scan_memo:
            return 0
        root = os.fspath(self.root)
        wanted = [rel for rel in paths if self._is_memory(rel)]
        if len(wanted) >= MEMOISE_WAIT_FROM:
            newest = 0
            for rel in wanted:
                try:
                    st = os.lstat(os.path.join(root, rel))
                except OSError:
                    continue
                newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
            wait_ns = newest + RACY_NS - time.time_ns()
            if 0 < wait_ns <= RACY_NS:
                time.sleep(wait_ns / 1e9 + 0.01)
        memo = self._memo()
        for rel in wanted:
            try:
                st = os.lstat(os.path.join(root, rel))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                self._check_memoised(rel, memo, st)
        self._memoised = memo.added()
        memo.close(None)
        return len(self._memoised)

    def _memo(self) -> ScanMemo:
        return ScanMemo(ensure_state_dir(self.root), fingerprint(self.settings.store))

    def _reuse(self, rel: str) -> Checked | None:
        """The parse :meth:`memoise` kept for ``rel`` while its stat is unchanged (then dropped)."""
        row = self._memoised.pop(rel, None)
        if row is None:
            return None
        try:
            if stat_key(os.lstat(self.root / rel)) != row[0]:
                return None
        except OSError:
            return None
        record = decode(rel, *row[1:])
        if record is None:
            return None
        self._id_paths[record.id] = rel
        return Checked(rel, record)

    def _check_memoised(self, rel: str, memo: ScanMemo, st: os.stat_result) -> Checked:
        # The stat is taken before the read, so a memoised parse is never newer than its key.
        key = stat_key(st)
        record = memo.get(rel, key)
        if record is not None:
            self._id_paths[record.id] = rel
            return Checked(rel, record)
        checked = self.check(rel)
        if checked.ok and checked.record is not None and not checked.empty:
            memo.put(rel, key, checked.record)
        return checked

    def find(self, memory_id: str, hint: str | None = None) -> MemoryRecord:
        """The record with this id: try the hint and the cache, then scan headers of every file.

        A file that claims the id but is malformed raises its MemoryFormatError, so the user
        learns what to fix instead of reading "not found".
        """
        if not ID_RE.match(memory_id):
            raise NotFoundError(f"no memory with id {memory_id!r}")
        memory_id = nfc_id(memory_id)
        for rel in (hint, self._id_paths.get(memory_id)):
            if rel and os.path.lexists(self.root / rel):
                try:
                    record = self.read(rel)
                except (MemoryFormatError, NotFoundError):
                    continue
                if record.id == memory_id:
                    return record
        malformed: MemoryFormatError | None = None
        for rel, header_id in self._header_ids():
            if header_id == memory_id or (header_id is None and record_id({}, rel) == memory_id):
                try:
                    record = self.read(rel)
                except MemoryFormatError as exc:
                    if header_id is not None:
                        malformed = malformed or exc
                    continue
                except NotFoundError:
                    continue
                if record.id == memory_id:
                    return record
        if malformed is not None:
            raise malformed
        raise NotFoundError(f"no memory with id {memory_id!r} in {self.root}")

    def ids(self) -> dict[str, str]:
        """id → path for every memory file, from the ``id:`` line of each header (no YAML parsing)."""
        out: dict[str, str] = {}
        for rel, header_id in self._header_ids():
            out.setdefault(header_id or record_id({}, rel), rel)
        return out

    def _header_ids(self) -> Iterator[tuple[str, str | None]]:
        """(path, the id its frontmatter's ``id:`` line names, or None) for every readable memory file."""
        for rel in self.iter_paths():
            try:
                head = self.read_text(rel)[:4096]
            except (OSError, MemoryFormatError):
                continue
            if head.startswith(("---", "\ufeff---")):
                m = _ID_LINE.search(head)
            elif head.startswith(("+++", "\ufeff+++")):
                m = _TOML_ID_LINE.search(head)
            else:
                m = None
            yield rel, (nfc_id(m.group(1)) if m else None)

    # --- writing ---

    def folder_problem(self, rel: str) -> str | None:
        """Why a file at ``rel`` cannot be written inside the repository (a folder on its way is a file or a
        symlink: the file would fail, or land outside the repository while git records the link), else None."""
        parts = rel.split("/")
        here = os.fspath(self.root)
        for i in range(len(parts) - 1):
            here = os.path.join(here, parts[i])
            try:
                mode = os.lstat(here).st_mode
            except FileNotFoundError:
                return None  # the write makes the folders from here on
            folder = "/".join(parts[: i + 1])
            if stat.S_ISLNK(mode):
                return f"{folder} is a symbolic link, so a file written in it {OUTSIDE_REASON} (make {folder} a real folder)"
            if not stat.S_ISDIR(mode):
                return f"{folder} is a file, not a folder (rename or move that file; remnic then makes the folder)"
        return None

    def check_writable_path(self, rel: str) -> None:
        """Refuse a write that would not land as a regular file at ``rel`` inside the repository: a folder
        on the way is a file or a symlink, or ``rel`` itself is a symlink (the user's: never replaced) or a folder."""
        why = self.folder_problem(rel)
        if why is None:
            try:
                mode = os.lstat(self.root / rel).st_mode
            except (FileNotFoundError, NotADirectoryError):
                return
            if stat.S_ISLNK(mode):
                why = f"{rel} is {SYMLINK_REASON}; remnic leaves it alone"
            elif not stat.S_ISREG(mode):
                why = f"{rel} is not a regular file (a folder?); remnic leaves it alone"
        if why is not None:
            raise RepoBusyError(f"cannot write {rel}: {why}; nothing was written")

    def write(self, rel: str, text: str, *, durable: bool = True) -> None:
        write_atomic(self.root / rel, text, durable=durable)

    def delete(self, rel: str) -> None:
        try:
            (self.root / rel).unlink()
        except FileNotFoundError:
            pass
