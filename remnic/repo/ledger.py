"""Git as the version and lifecycle ledger (GitPython).

Every mutation is one commit whose message ends in machine-readable trailers::

    remnic store: Cut releases every Tuesday

    Remnic-Operation: store
    Remnic-Memory-Id: mem_018f9a3b2c1d4e5f6a7b
    Remnic-Namespace: default
    Remnic-Source: cli

History, diffs and reverts are read back from ``git log --follow`` (:mod:`.gitlog`).
"""

from __future__ import annotations

import logging
import os
import secrets
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import git
from git.refs.symbolic import SymbolicReference

from remnic.config import STATE_DIR
from remnic.errors import LedgerError, LockTimeoutError, NotFoundError

from . import gitindex, gitlog, lineage, pullmark
from .creating import LiteralRepo, init_git
from .messages import TRAILER_PREFIX, Version, format_message
from .remote import QUIET_GIT
from .trees import Entry, TreeEditor

log = logging.getLogger("remnic.ledger")
SPLIT_INDEX_BYTES = 1_600_000  # about 20,000 entries
_KNOWN_TREE_ENTRIES = 50_000  # tree entries remembered from this process's commits (~10 MB)
_QUIET = QUIET_GIT  # update-ref would run reference-transaction, status and diff the fsmonitor command
_LOCK_MARKERS = ("index.lock", "Unable to create", "cannot lock ref", ".lock': File exists")
_UNMERGED = {"DD", "AU", "UD", "UA", "DU", "AA", "UU"}
_FALLBACK_IDENTITY = {
    "GIT_AUTHOR_NAME": "remnic",
    "GIT_AUTHOR_EMAIL": "remnic@localhost",
    "GIT_COMMITTER_NAME": "remnic",
    "GIT_COMMITTER_EMAIL": "remnic@localhost",
}


class Ledger:
    """The git repository at the memory directory's root."""

    def __init__(
        self, root: Path, retry_s: float = 10.0, *, run_hooks: bool = False, split_index: str = "auto"
    ) -> None:
        self.root = root
        self.retry_s = retry_s
        self.run_hooks = run_hooks
        self.split_index = split_index
        self._split_checked = split_index == "false"
        try:
            self.repo: git.Repo = LiteralRepo(root, expand_vars=False)  # "$NAME" in a folder's name is part of it
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise NotFoundError(f"{root} is not a git repository (run `remnic init {root}`)") from None
        self._env: dict[str, str] | None = None
        self._format: str | None = None
        self._known_commits: tuple[str | None, set[str]] = (None, set())
        self.index_lag: dict[str, str] = {}
        """Commit id → the warning for a commit git's own index could not take (read once by the writer)."""
        # The last commit made here, its root tree and the directories the commits before it in this
        # process rewrote (as it has them): the next commit on top of it edits those without reading
        # them back from git.
        self._last_trees: tuple[str, str, dict[str, Mapping[bytes, Entry]]] | None = None
        # The last commit this ledger made and its parents: asked right after every commit (the sync
        # base follows it), and a commit's parents never change, so no git process is needed.
        self._made: tuple[str, list[str]] | None = None

    @staticmethod
    def init_repo(root: Path) -> Ledger:
        """The repository at ``root``, made when there is none (:func:`.creating.init_git`)."""
        root.mkdir(parents=True, exist_ok=True)
        return Ledger(root) if (root / ".git").exists() else init_git(root, Ledger)

    # --- plumbing ---

    def _identity_env(self) -> dict[str, str]:
        """git refuses to commit without an identity; fall back to 'remnic' where none is set."""
        if self._env is None:
            env: dict[str, str] = {}
            reader = self.repo.config_reader()
            if not reader.has_option("user", "name") and "GIT_AUTHOR_NAME" not in os.environ:
                env.update({k: v for k, v in _FALLBACK_IDENTITY.items() if "NAME" in k})
            if not reader.has_option("user", "email") and "GIT_AUTHOR_EMAIL" not in os.environ:
                env.update({k: v for k, v in _FALLBACK_IDENTITY.items() if "EMAIL" in k})
            self._env = env
        return self._env

    def git(
        self, *args: str, strip: bool = True, env: Mapping[str, str] | None = None, stdin: Path | None = None
    ) -> str:
        """Run a git command, retrying while another process holds one of git's lock files."""
        deadline = time.monotonic() + self.retry_s
        delay = 0.01
        full_env = {**self._identity_env(), **(env or {})}
        argv = ["git", *(() if args[0] in ("config", "rev-parse") else _QUIET), *args]  # where hooks are looked up
        while True:
            try:
                if stdin is None:
                    return self.repo.git.execute(argv, env=full_env, strip_newline_in_stdout=strip)
                with open(stdin, "rb") as fh:
                    return self.repo.git.execute(argv, env=full_env, istream=fh, strip_newline_in_stdout=strip)
            except git.GitCommandError as exc:
                stderr = str(exc.stderr or "")
                if any(m in stderr for m in _LOCK_MARKERS) and time.monotonic() < deadline:
                    time.sleep(delay)
                    delay = min(delay * 2, 0.25)
                    continue
                raise LedgerError(f"git {args[0]} failed: {stderr.strip() or exc}") from None

    def _scratch(self, stem: str) -> Path:
        state = self.root / STATE_DIR
        state.mkdir(exist_ok=True)
        return state / f"{stem}-{os.getpid()}-{threading.get_ident()}-{secrets.token_hex(3)}"

    # --- reading ---

    # GitPython's object database talks to one long-lived `git cat-file` process that is not
    # thread-safe; everything here reads ref files or runs its own git process instead.

    def head(self) -> str | None:
        """HEAD's sha from the ref files (None before the first commit)."""
        try:
            sha = SymbolicReference.dereference_recursive(self.repo, "HEAD")
        except (ValueError, OSError):
            return None
        return sha if isinstance(sha, str) and len(sha) == 40 else None

    def is_detached(self) -> bool:
        try:
            return not (Path(self.repo.git_dir) / "HEAD").read_text(encoding="utf-8").startswith("ref:")
        except OSError:
            return False

    def in_progress(self) -> str | None:
        """``a merge is in progress`` (a rebase, cherry-pick, revert, bisect), or None."""
        git_dir = Path(self.repo.git_dir)
        for name, what in (
            ("MERGE_HEAD", "a merge"),
            ("rebase-merge", "a rebase"),
            ("rebase-apply", "a rebase"),
            ("CHERRY_PICK_HEAD", "a cherry-pick"),
            ("REVERT_HEAD", "a revert"),
            ("BISECT_LOG", "a bisect"),
        ):
            if (git_dir / name).exists():
                return f"{what} is in progress"
        cut = pullmark.cut_merge(git_dir, self.head, self.root, self.parents)  # a killed pull: not hand edits
        if cut is not None:
            return pullmark.describe(cut["state"])
        return None

    def busy_reason(self, status: Sequence[tuple[str, str, str | None]] | None = None) -> str | None:
        """Why committing now would be wrong (a merge/rebase in progress, conflicts, detached HEAD), or None."""
        underway = self.in_progress()
        if underway is not None:
            return underway + pullmark.busy_hint(Path(self.repo.git_dir), underway)
        if status is not None and any(xy in _UNMERGED for xy, _, _ in status):
            return "there are unresolved merge conflicts"
        if self.is_detached():
            return "HEAD is detached (not on a branch)"
        return None

    def parents(self, sha: str) -> list[str]:
        if self._made is not None and self._made[0] == sha:
            return list(self._made[1])
        try:
            return self.git("rev-list", "--parents", "-n", "1", sha).split()[1:]
        except LedgerError:
            return []

    def commit_with_trailer(self, key: str, value: str, *, since: float | None = None) -> str | None:
        """The newest commit carrying the trailer ``Remnic-<key>: <value>`` (None if none does).

        ``since`` (epoch seconds): look only at commits made after it. git stops walking the history
        at the first older commit, so the search costs what is recent, not the whole history (88 ms
        at 20,000 commits without the bound, 3 ms with it)."""
        if self.head() is None:
            return None
        bound = [f"--since=@{int(since)}"] if since is not None else []
        out = self.git("log", "-n", "1", "--format=%H", *bound, "-F", f"--grep={TRAILER_PREFIX}{key}: {value}")
        return out.strip() or None

    def committed_bytes(self, path: str) -> bytes | None:
        """The bytes HEAD records for ``path`` (None when HEAD has no such file)."""
        head = self.head()
        if head is None:
            return None
        proc = subprocess.run(
            ["git", "cat-file", "blob", f"{head}:{path}"], cwd=self.root, capture_output=True, check=False
        )
        return proc.stdout if proc.returncode == 0 else None

    def show(self, sha: str, path: str) -> str:
        return self.git("show", f"{sha}:{path}", strip=False)

    def blob_texts(self, specs: Sequence[tuple[str, str]]) -> list[str | None]:
        """The text of each (commit, path) by one git process (None: no such file, or not UTF-8)."""
        return gitlog.blob_texts(self._run_bytes, specs)

    def history(self, path: str, *, memory_id: str | None = None) -> list[Version]:
        """Every committed version of the memory at ``path`` (of ``memory_id`` when given), oldest
        first, following renames; a path's versions that held another memory are left out."""
        return lineage.lineage(self, path, memory_id).versions

    def worktree_files(self) -> list[str]:
        """Tracked and untracked files, minus what .gitignore excludes: git's view of the work tree."""
        out = self.git("ls-files", "-z", "--cached", "--others", "--exclude-standard", strip=False)
        return [p for p in out.split("\0") if p]

    def paths_of_id(self, memory_id: str) -> list[str]:
        """The paths a memory id last lived at in history (for memories whose file is gone)."""
        return [] if self.head() is None else gitlog.paths_of_id(self.git, memory_id)

    def is_ignored(self, path: str) -> bool:
        try:
            self.git("check-ignore", "-q", "--no-index", f"./{path}")  # takes no :(literal); ./ keeps a ':' plain
            return True
        except LedgerError:
            return False

    def is_dirty(self, path: str) -> bool:
        return bool(self.git("status", "--porcelain", "--untracked-files=all", "--", *gitlog.literal(path)))

    def status_porcelain(self) -> list[tuple[str, str, str | None]]:
        """(XY status, path, original path for renames) for every changed or untracked file."""
        out = self.git("status", "--porcelain=v1", "-z", "--untracked-files=all", strip=False)
        items = out.split("\0")
        rows: list[tuple[str, str, str | None]] = []
        i = 0
        while i < len(items):
            entry = items[i]
            i += 1
            if len(entry) < 4:
                continue
            xy, path = entry[:2], entry[3:]
            orig = None
            if "R" in xy or "C" in xy:
                orig = items[i] if i < len(items) else None
                i += 1
            rows.append((xy, path, orig))
        return rows

    def diff_names(self, old: str, new: str = "HEAD") -> list[tuple[str, str, str | None]]:
        """(status letter, path, old path) between two commits, with rename detection."""
        out = self.git("diff", "--name-status", "-z", "-M", old, new, strip=False)
        items = out.split("\0")
        rows: list[tuple[str, str, str | None]] = []
        i = 0
        while i < len(items) and items[i]:
            status = items[i]
            if status[:1] in ("R", "C"):
                rows.append((status[:1], items[i + 2], items[i + 1]))
                i += 3
            else:
                rows.append((status[:1], items[i + 1], None))
                i += 2
        return rows

    def commit_exists(self, sha: str) -> bool:
        # Remembered while HEAD stays put: history a user rewrites (reset, then gc) moves HEAD first.
        head = self.head()
        if self._known_commits[0] != head:
            self._known_commits = (head, set())
        if sha in self._known_commits[1]:
            return True
        try:
            self.git("cat-file", "-e", f"{sha}^{{commit}}")
        except LedgerError:
            return False
        self._known_commits[1].add(sha)
        return True

    # --- writing ---

    def commit(
        self,
        paths: Sequence[str],
        subject: str,
        trailers: Mapping[str, str | Sequence[str]],
        body: str | None = None,
        contents: Mapping[str, bytes | None] | None = None,
        on_object: Callable[[str], None] | None = None,
    ) -> str | None:
        """Commit exactly ``paths`` as one commit; None if that changes nothing.

        Each path is committed with the bytes in ``contents`` when given (what the caller
        validated; None means deleted), else as it is on disk now; a path missing from
        disk is a deletion. Only the trees along these paths are rewritten and HEAD moves by
        compare-and-swap, so a save landing meanwhile can't slip into the commit and the
        user's own staged work is left alone. ``on_object`` hears the new commit's id before
        HEAD moves to it (the write journal records it).

        The real index moves with HEAD under git's ``index.lock`` (:mod:`.gitindex`). If that lock
        stays held past ``retry_s`` the commit still stands and the index's lag is recorded and
        repaired later (:meth:`repair_index`), never undone by deleting a file.
        """
        if not paths:
            return None
        paths = list(dict.fromkeys(paths))
        entries = self._blob_entries(paths, contents or {})
        message = format_message(subject, trailers, body).encode("utf-8")
        if not self._split_checked:
            self._ensure_split_index()  # runs git on the real index: before this commit takes its lock
        self._clear_stale_index_lock()
        deadline = time.monotonic() + 3 * max(self.retry_s, 1.0)  # hand commits in a loop: no endless chase
        for _attempt in range(20):
            if _attempt and time.monotonic() > deadline:
                break
            head = self.head()
            last = self._last_trees
            known = (last[1], last[2]) if last is not None and last[0] == head else None
            editor = TreeEditor(self._run_bytes, self.object_format, known)
            tree = editor.build(head, entries)
            if tree == editor.base_tree:
                return None
            if self.run_hooks:
                self._run_commit_hooks(tree, message)
            parents = ["-p", head] if head is not None else []
            new = self._run_bytes(["commit-tree", tree, *parents], message).decode().strip()
            if on_object is not None:
                on_object(new)
            moved, lag = self._move_head(head, new, subject, entries)
            if not moved:
                time.sleep(0.01)  # HEAD moved under us (a plain `git commit`): rebuild on the new HEAD
                continue
            self._made = (new, [head] if head is not None else [])
            dirs = dict(known[1]) if known is not None else {}
            if sum(map(len, dirs.values())) > _KNOWN_TREE_ENTRIES:
                dirs = {}
            self._last_trees = (new, tree, {**dirs, **editor.trees})
            known_at, known_commits = self._known_commits
            if known_at == head:  # HEAD moved on by this commit: what existed under its parent still does
                self._known_commits = (new, known_commits | {new})
            if lag is not None:
                self.index_lag[new] = lag
            return new
        raise LockTimeoutError(
            "HEAD kept moving while committing (commits by hand meanwhile?); nothing committed: try again"
        )

    def _run_commit_hooks(self, tree: str, message: bytes) -> None:
        """pre-commit and commit-msg, run as for a plain commit of exactly ``tree`` (git.runHooks)."""
        index, msg = self._scratch("hook-index"), self._scratch("hook-msg")
        try:
            env = {"GIT_INDEX_FILE": str(index)}
            self.git("read-tree", f"--index-output={index}", tree)
            msg.write_bytes(message)
            for hook, extra in (("pre-commit", []), ("commit-msg", ["--", str(msg)])):
                proc = subprocess.run(
                    ["git", "hook", "run", "--ignore-missing", hook, *extra],
                    cwd=self.root,
                    env={**os.environ, **self._identity_env(), **env},
                    capture_output=True,
                    check=False,
                )
                if proc.returncode != 0:
                    said = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()
                    raise LedgerError(f"the repository's {hook} hook refused the commit (git.runHooks): {said}")
        finally:
            index.unlink(missing_ok=True)
            msg.unlink(missing_ok=True)

    @property
    def object_format(self) -> str:
        """``sha1`` or ``sha256``: how this repository names its objects."""
        if self._format is None:
            try:
                self._format = self.git("rev-parse", "--show-object-format") or "sha1"
            except LedgerError:
                self._format = "sha1"
        return self._format

    def _run_bytes(self, args: Sequence[str], stdin: bytes) -> bytes:
        """Run git with binary stdin/stdout (trees, commit messages), retrying on git's lock files."""
        return self._run(args, stdin)

    def _run(
        self,
        args: Sequence[str],
        stdin: bytes,
        env: Mapping[str, str] | None = None,
        give_up: Callable[[], bool] | None = None,
    ) -> bytes:
        """:meth:`_run_bytes` with more of git's environment, retrying unless ``give_up`` says waiting cannot help."""
        deadline = time.monotonic() + self.retry_s
        delay = 0.01
        env = {**os.environ, **self._identity_env(), **(env or {})}
        while True:
            proc = subprocess.run(
                ["git", *_QUIET, *args], cwd=self.root, input=stdin, capture_output=True, env=env, check=False
            )
            if proc.returncode == 0:
                return proc.stdout
            stderr = proc.stderr.decode("utf-8", "replace")
            retry = any(m in stderr for m in _LOCK_MARKERS) and (give_up is None or not give_up())
            if retry and time.monotonic() < deadline:
                time.sleep(delay)
                delay = min(delay * 2, 0.25)
                continue
            raise LedgerError(f"git {args[0]} failed: {stderr.strip()}")

    def _blob_entries(self, paths: list[str], contents: Mapping[str, bytes | None]) -> dict[str, Entry | None]:
        """The new tree entry of each path (None: removed). Blobs go through git, so its filters apply.

        Files on disk are hashed in one batch; a path whose given bytes are not what the disk
        holds (a save landed meanwhile, or the caller commits other bytes than it left on disk)
        is hashed from those bytes instead.
        """
        entries: dict[str, Entry | None] = {}
        on_disk: list[str] = []
        for path in paths:
            full = self.root / path
            if path in contents and contents[path] is None:
                entries[path] = None
            elif os.path.isfile(full) and not os.path.islink(full) and "\n" not in path:
                on_disk.append(path)
            elif os.path.isfile(full) and not os.path.islink(full):  # one path per line below: not this one
                entries[path] = Entry(self._mode(path), self._hash_bytes(path, full.read_bytes()))
            elif path in contents:
                entries[path] = Entry("100644", self._hash_bytes(path, contents[path] or b""))
            else:
                entries[path] = None
        for i in range(0, len(on_disk), 2000):
            chunk = on_disk[i : i + 2000]
            listing = "".join(p + "\n" for p in chunk).encode("utf-8")
            oids = self._run_bytes(["hash-object", "-w", "--stdin-paths"], listing).decode().split()
            entries.update((p, Entry(self._mode(p), oid)) for p, oid in zip(chunk, oids, strict=True))
        for path in on_disk:
            if path in contents and not _same_bytes(self.root / path, contents[path]):
                entries[path] = Entry(self._mode(path), self._hash_bytes(path, contents[path] or b""))
        return {p: entries[p] for p in paths}

    def _hash_bytes(self, path: str, data: bytes) -> str:
        return self._run_bytes(["hash-object", "-w", f"--path={path}", "--stdin"], data).decode().strip()

    def _mode(self, path: str) -> str:
        return "100755" if os.access(self.root / path, os.X_OK) else "100644"

    def _ensure_split_index(self) -> None:
        """Switch git's index to split mode once it is large (git.splitIndex): a commit then writes a
        small delta file instead of the whole index. Checked once per process."""
        self._split_checked = True
        try:
            size = (Path(self.repo.git_dir) / "index").stat().st_size
        except OSError:
            return
        if self.split_index != "true" and size < SPLIT_INDEX_BYTES:
            return
        try:
            if self.git("config", "--get", "core.splitIndex") in ("true", "false"):
                return  # the user (or an earlier run) decided
        except LedgerError:
            pass  # not set
        try:
            self.git("config", "core.splitIndex", "true")
            self.git("update-index", "--split-index")
        except LedgerError as exc:
            log.info("git's split index not turned on: %s", exc)

    def _move_head(
        self, head: str | None, new: str, subject: str, entries: Mapping[str, Entry | None]
    ) -> tuple[bool, str | None]:
        """HEAD from ``head`` to ``new`` by compare-and-swap, git's index with it (:func:`.gitindex.move_head`)."""
        zero = "0" * (64 if self.object_format == "sha256" else 40)
        # NUL-terminated: a file name may hold a newline (git accepts one; line input would split it)
        lines = "".join(f"{e.mode} {e.oid}\t{p}\0" if e is not None else f"0 {zero}\t{p}\0" for p, e in entries.items())

        def stage(temp: Path) -> None:
            args = ["update-index", "-z", "--index-info"]
            self._run(args, lines.encode("utf-8", "surrogateescape"), env={"GIT_INDEX_FILE": str(temp)})

        def move() -> bool:
            try:  # a HEAD that moved on is final: rebuild on it rather than wait out retry_s
                args = ["update-ref", "-m", f"commit: {subject[:80]}", "HEAD", new, head or "0" * len(new)]
                self._run(args, b"", give_up=lambda: self.head() != head)
            except LedgerError:
                if self.head() != head:
                    return False
                raise
            return True

        hold = gitindex.IndexLock(gitindex.index_path(Path(self.repo.git_dir), self.root), self._lock_marker())
        moved, lag = gitindex.move_head(
            hold, self.retry_s, new, list(entries), stage, move, lambda: self.head() == head
        )
        return moved, None if lag is None else self.record_index_repair(list(entries), lag)

    # --- the real index, when git's own lock kept it from following a commit ---

    def _repair_file(self) -> Path:
        return self.root / STATE_DIR / "git-index-repair.json"

    def _lock_marker(self) -> Path:
        return self.root / STATE_DIR / gitindex.MARKER

    def _clear_stale_index_lock(self) -> None:
        """Remove git's index.lock when a killed remnic writer left it (under the write lock)."""
        marker = self._lock_marker()
        if marker.exists():  # the usual case is one stat
            head = self.head()
            gitindex.clear_stale(
                marker,
                lambda sha: head is not None and self.is_ancestor(sha, head),
                lambda paths: self.record_index_repair(
                    paths, "a remnic writer was killed holding index.lock", warn=False
                ),
            )

    def record_index_repair(self, paths: list[str], reason: str, *, warn: bool = True) -> str:
        import json

        from remnic.fsio import write_atomic

        path = self._repair_file()
        try:
            known = json.loads(path.read_text(encoding="utf-8")).get("paths", [])
        except (OSError, ValueError):
            known = []
        write_atomic(path, json.dumps({"paths": sorted(set(known) | set(paths)), "reason": reason}))
        warning = index_lag_warning(len(paths), reason, self.retry_s)
        if warn:
            log.warning("%s", warning)
        return warning

    def index_repair_pending(self) -> list[str]:
        """Paths whose real-index entries still lag behind HEAD (git's index.lock was held)."""
        import json

        try:
            paths = list(json.loads(self._repair_file().read_text(encoding="utf-8")).get("paths", []))
        except (OSError, ValueError):
            paths = []
        return sorted(set(paths) | set(gitindex.stale_paths(self._lock_marker())))

    def repair_index(self) -> list[str]:
        """Set the real index's entries for recorded paths to HEAD's (a no-op when nothing lags)."""
        self._clear_stale_index_lock()
        paths = self.index_repair_pending()
        if not paths:
            return []
        try:
            self.reset_index_paths(paths)
        except LedgerError as exc:  # git's index.lock is still held: the next write tries again
            log.info("git index still lags for %d path(s): %s", len(paths), exc)
            return []
        self._repair_file().unlink(missing_ok=True)
        return paths

    def reset_index_paths(self, paths: Sequence[str]) -> None:
        """The real index's entries for ``paths`` set to HEAD's (files on disk are not touched)."""
        if not paths or self.head() is None:
            return
        self._clear_stale_index_lock()
        listing = "".join(p + "\0" for p in paths).encode("utf-8")
        self._run_bytes(["reset", "-q", "--pathspec-from-file=-", "--pathspec-file-nul", "HEAD"], listing)

    def is_ancestor(self, older: str, newer: str) -> bool:
        """Whether ``older`` is ``newer`` or in its history."""
        if older == newer:
            return True
        proc = subprocess.run(
            ["git", "merge-base", "--is-ancestor", older, newer], cwd=self.root, capture_output=True, check=False
        )
        return proc.returncode == 0


def index_lag_warning(count: int, reason: str, waited_s: float) -> str:
    """One line for a commit whose paths git's own index could not take yet."""
    if "index.lock" in reason:
        cause = f"git's .git/index.lock was held by another git process (a `git commit -a` with its editor open, or a killed git?) for more than {waited_s:g} s"
    else:
        cause = f"`git update-index` failed: {reason.strip().splitlines()[0] if reason.strip() else 'no message'}"
    return (
        f"the write is committed, but {cause}, so `git status` shows {count} path(s) out of step with HEAD "
        "until the next remnic write or `remnic sync run` brings git's index in step"
    )


def _same_bytes(path: Path, data: bytes | None) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read() == data
    except OSError:
        return data is None
