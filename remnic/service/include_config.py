"""The ``store.include`` patterns an import adds for the adopted notes it restores (``storeInclude``).

Whether a note needs its pattern is judged by the repository's own ``remnic.config.json``, never by
the settings this command merged: a ``./remnic.config.json`` in the current folder, or the file
``REMNIC_CONFIG_PATH`` names, may hold the pattern for this command alone, and the restored notes
must be memories for every process that opens the repository. A config file above the repository's
that sets ``store.include`` replaces its list, so a note that would not be a memory with it is
refused rather than restored unseen. The pattern is written in the import's own commit, changing
only ``store.include`` (the file's indentation, line endings and other keys kept); a config file
with uncommitted changes, or a symlink, is refused: the commit would take the user's unfinished
edit with it, or write through the link.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from remnic.config import REPO_CONFIG_FILE
from remnic.config.aliases import translate
from remnic.config.load import read_config_file
from remnic.errors import FieldProblem, UsageError, json_kind
from remnic.memfile.paths import OUTSIDE, MemoryPaths, glob_match

if TYPE_CHECKING:
    from remnic.repo.transaction import Transaction

    from .memory import Memory

INCLUDE = "storeInclude"
"""The export line's key naming the ``store.include`` pattern that makes its file a memory (an adopted note)."""


@dataclass(frozen=True)
class IncludeRule:
    """Which files are memories for this command (``merged``) and for every process (``own``: the
    repository's own config file's ``store.include``), and the config file above the repository's
    whose ``store.include`` replaces its list for this command (``above``), if one does."""

    merged: MemoryPaths
    own: MemoryPaths
    above: str | None

    def needed(self, path: str, pattern: Any) -> str | FieldProblem | None:
        """The line's pattern when the repository's own config needs it for ``path`` to be a memory
        (None: ``path`` is one already), or why ``path`` cannot be restored as a memory."""
        if pattern is not None and not isinstance(pattern, str):
            return FieldProblem(
                INCLUDE, f"must be a string (a glob pattern such as 'notes/**'), got {json_kind(pattern)}"
            )
        reason, found = self.own.skip_reason(path), None
        if reason == OUTSIDE and pattern and pattern.strip():
            if not glob_match(pattern, path):
                return FieldProblem(INCLUDE, f"{pattern!r} does not match the line's path {path!r}")
            if replace(self.own, include=(*self.own.include, pattern)).is_memory(path):
                reason, found = None, pattern
        if reason is not None:
            return FieldProblem("path", _not_memory(path, reason, self.own))
        after = self.merged if found is None or self.above else replace(self.merged, include=(*self.own.include, found))
        if after.is_memory(path):
            return found
        if self.above is None:
            return FieldProblem("path", f"{path!r} is not a memory path here ({after.skip_reason(path)})")
        named = found or next((p for p in self.own.include if glob_match(p, path)), path)
        return FieldProblem(
            "path",
            f"{path!r} would not be a memory for this command: store.include is set by {self.above}, whose list "
            f"replaces this repository's; add {named!r} there too, or run the import without that file",
        )


def _not_memory(path: str, reason: str, own: MemoryPaths) -> str:
    slashed = path.replace("\\", "/")
    if os.sep == "/" and slashed != path and own.is_memory(slashed):
        return (
            f"{path!r} is not a memory path here ({reason}); on this system `\\` is part of a file name: "
            f"did you mean {slashed!r}?"
        )
    if reason != OUTSIDE:
        return f"{path!r} is not a memory path here ({reason})"
    # An export from before `storeInclude`: name the pattern that makes it a memory, and how to add it.
    folder = path.rsplit("/", 1)[0] + "/**" if "/" in path else "*.md"  # one pattern for every root note
    return (
        f"{path!r} is not a memory path here: it is in no category folder (facts/, decisions/, ...) and "
        f"matches no store.include pattern; add one first, e.g. `remnic init DIR --adopt '{folder}'` "
        "(an export by this version carries the pattern as `storeInclude`, and import adds it)"
    )


def own_include(mem: Memory) -> list[str]:
    """``store.include`` as the repository's own remnic.config.json sets it (what every process reads)."""
    path = mem.root / REPO_CONFIG_FILE
    if not path.is_file():
        return []
    store = translate(read_config_file(path), str(path)).nested.get("store")
    include = store.get("include") if isinstance(store, dict) else None
    return [p for p in include if isinstance(p, str)] if isinstance(include, list) else []


def include_above(mem: Memory) -> str | None:
    """The config file above the repository's own (the current folder's, ``REMNIC_CONFIG_PATH``'s, an
    override) whose ``store.include`` this command uses instead of the repository's, if one does."""
    origin = mem.settings.origins.get("store.include")
    if origin is None or origin.startswith(("~", "memory repo")):
        return None  # the defaults, the user's own config (which the repository's overrides), or the repository's
    own = f"({(mem.root / REPO_CONFIG_FILE).resolve()})"
    return None if own in origin else origin


def include_rule(mem: Memory) -> IncludeRule:
    merged = mem.files.paths
    return IncludeRule(merged, replace(merged, include=tuple(own_include(mem))), include_above(mem))


def config_problem(mem: Memory, patterns: Sequence[str]) -> FieldProblem | None:
    """Why the import cannot add ``patterns`` to the repository's remnic.config.json, if it cannot."""
    path = mem.root / REPO_CONFIG_FILE
    wanted = ", ".join(repr(p) for p in patterns)
    if path.is_symlink():
        why = (
            f"{path} is a symbolic link, and import will not write through it to add store.include {wanted}: "
            "add the pattern to the file it links to, or replace the link with a file, then import again"
        )
    elif mem.ledger.is_dirty(REPO_CONFIG_FILE):
        # Refused, not worked around: committing only the pattern would leave the working file and
        # git's index disagreeing on a file the user is editing; their edit is theirs to commit.
        why = (
            f"{path} has uncommitted changes, and import adds store.include {wanted} to it in its own commit, "
            f"which would take your edit with it: commit or undo the edit (`git -C {mem.root} diff "
            f"{REPO_CONFIG_FILE}`), then import again"
        )
    else:
        try:
            _with_patterns(path.read_bytes() if path.is_file() else None, patterns)
            return None
        except UsageError as exc:
            why = exc.message
    return FieldProblem("store.include", why)


def newly_adopted(mem: Memory, patterns: Sequence[str], restored: Iterable[str]) -> list[str]:
    """The files already here that ``patterns`` make memories too (none are now), besides those restored."""
    if not patterns:
        return []
    rule, skip = include_rule(mem), set(restored)
    after = replace(rule.own, include=(*rule.own.include, *patterns))
    return sorted(
        p for p in mem.ledger.worktree_files() if p not in skip and not rule.own.is_memory(p) and after.is_memory(p)
    )


def write_include(mem: Memory, tx: Transaction, patterns: Sequence[str]) -> None:
    """Stage ``patterns`` added to ``store.include`` in the repository's remnic.config.json."""
    if not patterns:
        return
    problem = config_problem(mem, patterns)  # again under the lock: the file may have changed since the check
    if problem is not None:
        raise UsageError(problem.message)
    tx.put(REPO_CONFIG_FILE, _with_patterns(tx.read_bytes(REPO_CONFIG_FILE), patterns))


def _with_patterns(raw: bytes | None, patterns: Sequence[str]) -> bytes:
    """The config file's bytes with ``patterns`` appended to ``store.include``: only that list's text
    changed when it exists, else the file written again in its own indentation, line endings and BOM."""
    bom = codecs.BOM_UTF8 if raw and raw.startswith(codecs.BOM_UTF8) else b""
    text = raw[len(bom) :].decode("utf-8") if raw else ""
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("store", {}), dict):
        raise UsageError(f"{REPO_CONFIG_FILE} must hold a JSON object with a `store` object; fix it before importing")
    store = data.setdefault("store", {})
    current = store.get("include", [])
    if not isinstance(current, list):
        raise UsageError(f"store.include in {REPO_CONFIG_FILE} must be a list of patterns; fix it before importing")
    added = [p for p in dict.fromkeys(patterns) if p not in current]
    store["include"] = [*current, *added]
    edited = _edit_list(text, added)
    if edited is None or json.loads(edited) != data:
        newline = "\r\n" if "\r\n" in text else "\n"
        edited = json.dumps(data, indent=_indent(text), ensure_ascii=False) + "\n"
        edited = edited.replace("\n", newline)
    return bom + edited.encode("utf-8")


def _indent(text: str) -> str | int | None:
    if text.strip() and "\n" not in text.strip():
        return None  # a one-line file stays one line
    found = re.search(r"\n([ \t]+)\S", text)
    return found.group(1) if found else 2


def _edit_list(text: str, added: Sequence[str]) -> str | None:
    """``text`` with ``added`` appended inside its one ``"include": [...]`` list (None: no single such list)."""
    starts = [m.end() for m in re.finditer(r'"include"\s*:\s*\[', text)]
    if len(starts) != 1 or not added:
        return None if added else text
    start = end = starts[0]
    in_string = escaped = False
    while end < len(text):  # the list's closing bracket, past any ] inside a pattern's string
        ch = text[end]
        if escaped:
            escaped = False
        elif in_string:
            escaped, in_string = ch == "\\", ch != '"'
        elif ch == '"':
            in_string = True
        elif ch == "]":
            break
        end += 1
    else:
        return None
    body = text[start:end]
    items = [json.dumps(p, ensure_ascii=False) for p in added]
    last = body.rstrip()
    if not last.strip():
        return text[:start] + ", ".join(items) + text[end:]
    # One pattern a line when the list has one a line, indented as its last one; else on its line.
    line = body[body.rfind("\n", 0, len(last)) + 1 :] if "\n" in last else None
    indent = line[: len(line) - len(line.lstrip(" \t"))] if line is not None else ""
    sep = ("," + ("\r\n" if "\r\n" in body else "\n") + indent) if line is not None else ", "
    return text[:start] + last + "".join(sep + item for item in items) + body[len(last) :] + text[end:]
