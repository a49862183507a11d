"""Guards for the space commands that can lose a user's files.

``space delete --purge`` removes a whole folder, ``.git`` included, so anything only that
folder holds is gone for good: files never committed, uncommitted changes, stashes and commits
no remote has. :func:`purge_risk` finds them (with plain git, no network: "pushed" means what
the remote-tracking refs knew at the last fetch or push) and :func:`refuse_purge` turns them into
the refusal. ``space create --path DIR`` adopts a folder that already holds files, which is
supported but easy to do by mistake: :func:`files_in` lists what was there first.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remnic.errors import FieldProblem, UsageError
from remnic.repo import remote as _remote
from remnic.repo.messages import TRAILER_PREFIX, parse_trailers

LISTED = 10
"""How many files (or commits) a refusal or a warning names; the rest are counted."""
SCAN_CAP = 10_000
"""``files_in`` stops counting here: a mistyped ``--path ~`` must not walk a whole home folder."""
_SEP, _END = "\x1f", "\x1e"
_TEMPLATE_OPERATIONS = ("init", "merge-driver")


@dataclass
class PurgeRisk:
    """What only this folder holds; empty when git has all of it somewhere else."""

    untracked: list[str] = field(default_factory=list)
    uncommitted: list[str] = field(default_factory=list)
    stashes: list[str] = field(default_factory=list)
    unpushed: list[str] = field(default_factory=list)
    remotes: list[str] = field(default_factory=list)
    failure: str | None = None

    def __bool__(self) -> bool:
        return bool(self.untracked or self.uncommitted or self.stashes or self.unpushed or self.failure)

    def counts(self) -> dict[str, int]:
        return {
            "untracked": len(self.untracked),
            "uncommitted": len(self.uncommitted),
            "stashes": len(self.stashes),
            "unpushed": len(self.unpushed),
        }


class UnsavedWorkError(UsageError):
    """``space delete --purge`` refused: the folder holds work that exists nowhere else (exit 2)."""

    code = "unsaved_work"

    def __init__(
        self, message: str, *, problems: list[FieldProblem], more: int, hint: str, extra: dict[str, Any]
    ) -> None:
        super().__init__(message, problems=problems)
        self.more = more
        self.hint = hint
        self.extra = extra

    def describe(self) -> str:
        # The advice goes last, after the list, where a reader's eye ends up.
        more = [f"  ... and {self.more} more"] if self.more else []
        return "\n".join([super().describe(), *more, self.hint])

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), **self.extra, "hint": self.hint}


class _GitFailed(Exception):
    pass


def _git(root: Path, *args: str) -> str:
    result = _remote.run_git(root, list(args))
    if not result.ok:
        raise _GitFailed(f"git {args[0]} failed: {result.err.strip() or f'exit {result.code}'}")
    return result.out


def purge_risk(root: Path) -> PurgeRisk:
    """Untracked files git does not ignore, uncommitted changes, stashes, and commits on no remote
    (the memory template's own commits aside: ``remnic init`` makes them again)."""
    risk = PurgeRisk()
    try:
        # --untracked-files=all overrides a status.showUntrackedFiles=no that would hide them.
        _status(_git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all"), risk)
        risk.stashes = [line for line in _git(root, "stash", "list", "--format=%gd: %s").splitlines() if line]
        risk.remotes = _git(root, "remote").split()
        risk.unpushed = _unpushed(root)
    except _GitFailed as exc:
        risk.failure = str(exc)
    return risk


def _status(out: str, risk: PurgeRisk) -> None:
    entries = iter(out.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if "R" in code or "C" in code:
            next(entries, None)  # -z puts a rename's old path in the next field
        (risk.untracked if code == "??" else risk.uncommitted).append(path)


def _unpushed(root: Path) -> list[str]:
    """``sha8 subject`` of every commit reachable from a branch, a tag or HEAD and from no remote-tracking ref."""
    starts = ["--branches", "--tags"]
    if _remote.run_git(root, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).ok:
        starts.append("HEAD")
    elif not _git(root, "for-each-ref", "--count=1", "refs/heads", "refs/tags").strip():
        return []  # no commit at all
    fmt = _SEP.join(("%H", "%s", "%(trailers:only,unfold)")) + _END
    out = _git(root, "log", f"--format={fmt}", *starts, "--not", "--remotes", "--")
    template = _template_paths()
    rows = []
    for chunk in out.split(_END):
        parts = chunk.strip("\n").split(_SEP)
        if len(parts) != 3:
            continue
        sha, subject, trailer_text = parts
        operation = (parse_trailers(trailer_text).get(f"{TRAILER_PREFIX}Operation") or [""])[0]
        if operation in _TEMPLATE_OPERATIONS and _only_template(root, sha, operation, template):
            continue
        rows.append(f"{sha[:8]} {subject}")
    return rows


def _template_paths() -> frozenset[str]:
    from .memory import template_dir  # memory imports this package's spaces module

    base = template_dir()
    return frozenset(
        p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    )


def _only_template(root: Path, sha: str, operation: str, template: frozenset[str]) -> bool:
    """Whether a commit with remnic's init or merge-driver trailer touches only the template's files
    (init never commits a file that was already there, so those files hold only template text)."""
    changed = _git(root, "diff-tree", "--no-commit-id", "--name-only", "-r", "--root", "-z", sha).split("\0")
    allowed = template if operation == "init" else frozenset({".gitattributes"})
    return all(p in allowed for p in changed if p)


def refuse_purge(name: str, root: Path, risk: PurgeRisk) -> UnsavedWorkError:
    """The refusal: what is at risk (counted, and the first few named) and how to go on."""
    # A failed check goes first: the list is cut at LISTED and this one explains the rest.
    problems = [FieldProblem("git", f"could not check what would be lost: {risk.failure}")] if risk.failure else []
    problems += [FieldProblem("untracked", "never committed", path=p) for p in risk.untracked]
    problems += [FieldProblem("uncommitted", "changed since the last commit", path=p) for p in risk.uncommitted]
    problems += [FieldProblem("stash", s) for s in risk.stashes]
    problems += [FieldProblem("unpushed", c) for c in risk.unpushed]
    parts = [
        _count(len(risk.untracked), "untracked file"),
        _count(len(risk.uncommitted), "uncommitted change"),
        _count(len(risk.stashes), "stash", "stashes"),
        _count(len(risk.unpushed), "commit not pushed", "commits not pushed"),
    ]
    summary = ", ".join(p for p in parts if p)
    if risk.unpushed and not risk.remotes:
        summary += " (it has no remote)"
    message = (
        f"not purging space {name!r}: {root} holds {summary}, which removing the folder would destroy "
        "for good (git has no copy of it anywhere else)"
        if summary
        else f"not purging space {name!r}: git could not tell whether {root} holds work it has nowhere else"
    )
    return UnsavedWorkError(
        message,
        problems=problems[:LISTED],
        more=max(0, len(problems) - LISTED),
        hint=_hint(name, root, risk),
        extra={"space": name, "path": str(root), "atRisk": risk.counts(), "remotes": risk.remotes},
    )


def _hint(name: str, root: Path, risk: PurgeRisk) -> str:
    folder = shlex.quote(str(root))
    steps = []
    if risk.untracked or risk.uncommitted:
        steps.append(f"commit the files (`git -C {folder} add -A && git -C {folder} commit`) or move them elsewhere")
    if risk.stashes:
        steps.append(f"apply or drop the stashes (`git -C {folder} stash list`)")
    if risk.unpushed or risk.untracked or risk.uncommitted:
        steps.append(
            f"push (`remnic space push {name}`)"
            if risk.remotes
            else f"add a remote and push (`git -C {folder} remote add origin URL`, then `remnic space push {name}`)"
        )
    todo = "; ".join(steps) + ", then purge again" if steps else "fix the repository, then purge again"
    return (
        f"to keep it: {todo}. To destroy it anyway: `remnic space delete {name} --purge --force`. "
        f"Without --purge the space is only forgotten and its files stay."
    )


def _count(n: int, one: str, many: str | None = None) -> str:
    return "" if not n else f"{n} {one if n == 1 else many or one + 's'}"


def files_in(root: Path) -> tuple[list[str], bool]:
    """Files under ``root`` outside ``.git``, in a stable order, at most ``SCAN_CAP`` of them; and
    whether there were more."""
    found: list[str] = []
    for path in _walk(root):
        if len(found) == SCAN_CAP:
            return found, True
        found.append(path)
    return found, False


def _walk(root: Path) -> Iterator[str]:
    if not root.is_dir():
        return
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if not (Path(directory) == root and d == ".git"))
        base = Path(directory).relative_to(root)
        for name in sorted(files):
            yield (base / name).as_posix()
