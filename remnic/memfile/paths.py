"""Which files are memories, and what a path says about a memory (namespace, category, archive).

A memory is a markdown file (``.md`` or ``.markdown``, any case) in a memory folder:

- a category folder (``facts/``, ``decisions/``, ``reasoning-traces/``, …) at any depth below
  it, e.g. the original Remnic's dated ``facts/2026-05-14/fact-….md``; its name in any case
  (a vault's ``Decisions/`` is ``decisions/``: on macOS and Windows they are one folder);
- the same inside a namespace (``namespaces/<name>/<category folder>/``), and anything in the
  original's ``archive/`` and ``cold/`` tiers (``archive/2026-01-01/…``, ``cold/facts/…``);
- any file matching a ``store.include`` pattern (``["**"]`` adopts a whole notes vault).

README, CHANGELOG, LICENSE and CONTRIBUTING files are memories only with
``store.readmeFiles``; ``store.exclude`` patterns, hidden folders and ``state/`` (the
records remnic and the original keep) never are. Every other file is reported with
its reason (:meth:`MemoryPaths.skip_reason`) and never touched.
Pure: nothing here reads the disk.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from os import PathLike, fspath
from typing import Any

from remnic.errors import ValidationError

from .schema import CATEGORY_DIRS, DEFAULT_NAMESPACE, DIR_CATEGORIES, NAMESPACES_DIR

TIER_DIRS = ("archive", "cold")
"""The original Remnic's tiers that mirror the category layout: archived memories and the cold store."""
README_NAMES = frozenset({"readme", "changelog", "license", "licence", "contributing"})
SKIP_DIRS = frozenset({".git", ".remnic", "node_modules", "__pycache__"})
DEFAULT_EXTENSIONS = (".md", ".markdown")
REPO_FILES = frozenset({"remnic.config.json", "engram.config.json"})
STATE_RECORDS_DIR = "state"
"""Ledgers and indexes remnic and the original Remnic keep (``state/observation-ledger/…``): never memories."""

OUTSIDE = "outside the memory folders (add a pattern to store.include, or `remnic init --adopt PATTERN`)"

README_LIKE = "README-like file (set store.readmeFiles to true to make it a memory)"
EXCLUDED = "excluded by store.exclude"
ATTACHMENT = "attachment, not a markdown note"
EDITOR_TEMP = "editor swap/backup/temp file"
EDITOR_TEMP_SUFFIXES = (
    *(".swp", ".swo", ".swx", ".swn", "~", ".tmp", ".temp", ".bak", ".orig", ".crswap", ".kate-swp", ".part"),
    *("___jb_tmp___", "___jb_old___"),
)
EDITOR_TEMP_NAMES = frozenset({"4913", ".DS_Store"})  # vim's write probe; Finder's folder settings


def is_editor_temp(name: str) -> bool:
    """An editor's swap, backup or temp file name (vim's ``x.md~`` and ``.x.md.swp``, emacs' ``#x.md#``
    and ``.#x.md``, JetBrains' ``___jb_tmp___``): ignored, never reported as an attachment."""
    return (
        name in EDITOR_TEMP_NAMES
        or name.endswith(EDITOR_TEMP_SUFFIXES)
        or name.startswith(".#")
        or (len(name) > 1 and name[0] == name[-1] == "#")
    )


_ORIGINAL_DIRS = ("transcripts", "identity", "questions", "config")
ORIGINAL_NOT_MEMORIES = {
    **{f"{name}/": f"the original Remnic's {name}/: not memories, never touched" for name in _ORIGINAL_DIRS},
    "profile.md": "the original Remnic's profile.md: not a memory, never touched",
}
"""What the original Remnic keeps beside its memories (docs/remnic-compat.md), at the root or of a namespace:
reported as what it is, not as a note to adopt."""


def original_reason(path: str) -> str | None:
    """Why ``path`` is not a memory when it is one of the original Remnic's own records (at the root or
    of a namespace), else None."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == NAMESPACES_DIR:
        parts = parts[2:]
    return ORIGINAL_NOT_MEMORIES.get(parts[0] if len(parts) == 1 else parts[0] + "/")


def _parts(path: str) -> list[str]:
    """The path's folders below its namespace and tier (``namespaces/x/archive/facts/a.md`` → facts, a.md)."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == NAMESPACES_DIR:
        parts = parts[2:]
    if len(parts) >= 2 and parts[0] in TIER_DIRS:
        parts = parts[1:]
    return parts


def _in_state(parts: list[str]) -> bool:
    """Under ``state/`` at the root or of a namespace: records remnic (and the original Remnic) keep there."""
    if len(parts) >= 3 and parts[0] == NAMESPACES_DIR:
        parts = parts[2:]
    return len(parts) >= 2 and parts[0] == STATE_RECORDS_DIR


def _in_tier(path: str) -> bool:
    """Below the original's ``archive/`` or ``cold/`` folder (dated, or mirroring the category layout)."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == NAMESPACES_DIR:
        parts = parts[2:]
    return len(parts) >= 2 and parts[0] in TIER_DIRS


def namespace_for_path(path: str) -> str:
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == NAMESPACES_DIR:
        return parts[1]
    return DEFAULT_NAMESPACE


def _dir_category(name: str) -> str | None:
    """The category a folder name names, in any case (``Decisions`` → decision)."""
    return DIR_CATEGORIES.get(name) or DIR_CATEGORIES.get(name.lower())


def category_for_path(path: str) -> str:
    """The category its top folder names (``decisions/2026-05-01/x.md`` → decision), else fact."""
    return folder_category(path) or "fact"


def folder_category(path: str) -> str | None:
    """The category named by the path's top folder, or None when it is in no category folder."""
    parts = _parts(path)
    return _dir_category(parts[0]) if len(parts) > 1 else None


def case_twin(rel: str, names: Iterable[str]) -> str | None:
    """The folder among ``names`` (a folder's entries) that differs from ``rel``'s first folder only in
    case (``Decisions`` for ``decisions/.gitkeep``), else None: a second folder beside it would be
    the same folder on a case-insensitive file system, and a twin on any other."""
    top = rel.split("/", 1)[0]
    if "/" not in rel:
        return None
    return next((n for n in sorted(names) if n != top and n.lower() == top.lower()), None)


def is_archived_path(path: str) -> bool:
    """Under the original's ``archive/`` folder (a memory there counts as archived)."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == NAMESPACES_DIR:
        parts = parts[2:]
    return len(parts) >= 2 and parts[0] == "archive"


def category_dir(category: str, namespace: str = DEFAULT_NAMESPACE) -> str:
    base = CATEGORY_DIRS[category]
    return base if namespace == DEFAULT_NAMESPACE else f"{NAMESPACES_DIR}/{namespace}/{base}"


def relocation(path: str, category: str, namespace: str = DEFAULT_NAMESPACE) -> list[str] | None:
    """The folders a memory at ``path`` moves to when its category changes, or None when it stays. The
    category's folder keeps the sub-path below the old one (``Facts/sub/Plan.md`` → ``decisions/sub``) and
    the tier the file is in: ``cold/facts/x.md`` → ``cold/decisions``, ``archive/facts/x.md`` →
    ``archive/decisions`` (leaving ``archive/`` would make an archived memory active). A file in a tier but
    in no category folder (the original's dated ``archive/2026-01-02/…``) stays: its category is the
    frontmatter's there, and any folder outside the tier would change its status."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == NAMESPACES_DIR:
        parts = parts[2:]
    tier = parts[0] if len(parts) >= 2 and parts[0] in TIER_DIRS else None
    if tier is not None:
        parts = parts[1:]
    in_category = len(parts) >= 2 and _dir_category(parts[0]) is not None
    if tier is not None and not in_category:
        return None
    folders = category_dir(category, namespace).split("/")
    if tier is not None:
        folders.insert(len(folders) - 1, tier)
    return folders + (parts[1:-1] if in_category else [])


def to_posix(path: str, sep: str = os.sep) -> str:
    """``path`` with the system's separator as ``/``: on Windows ``facts\\x.md`` is ``facts/x.md``; on
    POSIX a backslash is an ordinary file-name character (``facts/a\\b.md`` is a file that ``list``
    shows as it is), so it stays."""
    return path.replace("\\", "/") if sep == "\\" else path


def repo_relative(path: str, root: str | PathLike[str] | None = None) -> str:
    """``path`` as typed, made repo-relative where that is plain: ``./facts/x.md`` → ``facts/x.md``, and
    with ``root`` an absolute path inside it; anything else as it was (for check_relpath to judge)."""
    norm = to_posix(path)
    if root is not None and norm.startswith("/"):
        base = posixpath.normpath(to_posix(fspath(root)))
        inside = posixpath.normpath(norm)
        if inside.startswith(base.rstrip("/") + "/"):
            norm = inside[len(base.rstrip("/")) + 1 :]
    while norm.startswith("./"):
        norm = norm[2:]
    return norm


def check_relpath(path: str, *, field: str = "path", root: str | PathLike[str] | None = None) -> str:
    """A repo-relative posix path that stays inside the repo, or a ValidationError. A leading ``./``
    is dropped, and with ``root`` (the repository's absolute path) an absolute path inside it is taken."""
    norm = repo_relative(path, root)
    parts = norm.split("/")
    if (
        not norm
        or norm.startswith("/")
        or re.match(r"^[A-Za-z]:", norm)
        or any(p in ("", ".", "..") for p in parts)
        or parts[0] in (".git", ".remnic")
        or "\x00" in norm
    ):
        raise ValidationError.single(field, f"{path!r} is not a path inside the memory repository")
    return norm


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob where ``**`` spans folders, ``*`` and ``?`` stay within one; a plain folder name means
    everything below it."""
    pattern = pattern.strip().strip("/") or "**"
    if not any(ch in pattern for ch in "*?["):
        return re.compile(re.escape(pattern) + r"(?:/.*)?\Z", re.DOTALL)
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + r"(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + r".*", i + 2
        elif pattern[i] == "*":
            out, i = out + r"[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + r"[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z", re.DOTALL)  # a line break is a character of a name like any other


def glob_match(pattern: str, path: str) -> bool:
    return bool(_glob_regex(pattern).match(path))


@dataclass(frozen=True)
class MemoryPaths:
    """The rule for which files are memories (built from ``store.include``/``exclude``/``readmeFiles``/
    ``extensions``)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    readme_files: bool = False
    extensions: tuple[str, ...] = DEFAULT_EXTENSIONS

    @classmethod
    def from_store(cls, store: Any) -> MemoryPaths:
        return cls(
            tuple(getattr(store, "include", ()) or ()),
            tuple(getattr(store, "exclude", ()) or ()),
            bool(getattr(store, "readme_files", False)),
            tuple(e.lower() for e in getattr(store, "extensions", DEFAULT_EXTENSIONS) or DEFAULT_EXTENSIONS),
        )

    def is_markdown(self, path: str) -> bool:
        return path.lower().endswith(self.extensions)

    def in_memory_folder(self, path: str) -> bool:
        return folder_category(path) is not None or _in_tier(path) or any(glob_match(p, path) for p in self.include)

    def skip_reason(self, path: str) -> str | None:
        """None when ``path`` is a memory file; else why not (hidden and tool folders get ``hidden``)."""
        parts = path.split("/")
        if any(p.startswith(".") or p in SKIP_DIRS for p in parts) or _in_state(parts):
            return "hidden"
        if not self.is_markdown(path):
            if is_editor_temp(parts[-1]):
                return EDITOR_TEMP
            return ATTACHMENT if self.in_memory_folder(path) else "not markdown"
        if any(glob_match(p, path) for p in self.exclude):
            return EXCLUDED
        if not self.readme_files and parts[-1].rsplit(".", 1)[0].lower() in README_NAMES:
            return README_LIKE
        return None if self.in_memory_folder(path) else OUTSIDE

    def is_memory(self, path: str) -> bool:
        return self.skip_reason(path) is None

    def skipped(self, paths: Iterable[str]) -> list[tuple[str, str]]:
        """(path, reason) for each file worth telling the user about: markdown notes that are not
        memories and attachments in memory folders (not hidden files, not other non-markdown files,
        not the repository's own top-level README, LICENSE, CHANGELOG or CONTRIBUTING)."""
        return [(path, reason) for path in paths if (reason := self.reportable_reason(path))]

    def reportable_reason(self, path: str) -> str | None:
        """Why ``path`` is not a memory, when that is worth a line in a report (else None)."""
        reason = self.skip_reason(path)
        if reason == OUTSIDE:
            reason = original_reason(path) or reason
        if reason in (None, "hidden", "not markdown", EDITOR_TEMP):
            return None
        if "/" not in path and (path.rsplit(".", 1)[0].lower() in README_NAMES or path in REPO_FILES):
            return None  # the repository's own README and config (remnic init lays them down)
        return reason


DEFAULT_PATHS = MemoryPaths()


def is_memory_path(rel: str, paths: MemoryPaths = DEFAULT_PATHS) -> bool:
    """Whether a repo-relative path names a memory file under ``paths`` (the default rule when omitted)."""
    return paths.is_memory(rel)


def may_be_memory(rel: str) -> bool:
    """A cheap superset of every rule's memory files (any markdown file outside hidden folders): for
    event filters that hand paths to sync, which applies the repository's own rule."""
    parts = rel.split("/")
    return rel.lower().endswith(DEFAULT_EXTENSIONS) and not any(p.startswith(".") or p in SKIP_DIRS for p in parts)
