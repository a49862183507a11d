"""Git remotes for a memory repository: fetch, merge, push, and the memory-file merge driver's setup.

Everything runs git itself as a subprocess, so any URL git accepts works (a path,
``file://``, ssh, https) with git's own credential handling: remnic stores no
credentials. Merges run with remnic's git hooks skipped (the caller holds the write
lock and updates the index itself) and never open an editor. No git command here runs the repository's
hooks (a push keeps pre-push) or its fsmonitor command: a pulled repository cannot make remnic run its code.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from remnic.errors import LedgerError

if TYPE_CHECKING:  # annotations only: the merge driver imports this module and must stay light
    from .ledger import Ledger

DRIVER = "remnic"
ATTRIBUTE_LINES = ("*.md merge=remnic", "*.markdown merge=remnic")
ATTRIBUTES_HEADER = "# remnic: memory files merge key by key (see docs/spaces.md)"
CONFLICT_LOG = "remnic-merge.jsonl"
"""In the git directory: one JSON line per conflict the merge driver resolved by keeping both versions."""
INITIAL_BRANCH = "main"
"""The branch a new memory repository starts on (``remnic init``, ``space create``, a clone of an empty remote)."""
NO_FSMONITOR = ("-c", "core.fsmonitor=false")
QUIET_GIT = (*NO_FSMONITOR, "-c", "core.hooksPath=/dev/null")
"""Options of remnic's own git commands: the repository's fsmonitor command and hooks do not run (git.runHooks)."""
_REJECTED = ("[rejected]", "fetch first", "non-fast-forward", "Updates were rejected")


@dataclass(frozen=True)
class GitRun:
    code: int
    out: str
    err: str

    @property
    def ok(self) -> bool:
        return self.code == 0


def _argv(args: Sequence[str], hooks: Path | None) -> list[str]:
    """git's command line: no fsmonitor command and no hook of the repository but those in ``hooks`` (a push's
    pre-push, :func:`push`); config and rev-parse as they are (where hooks are looked up)."""
    if args[0] in ("config", "rev-parse"):
        return ["git", *args]
    return ["git", *(QUIET_GIT if hooks is None else (*NO_FSMONITOR, "-c", f"core.hooksPath={hooks}")), *args]


def _env(env: Mapping[str, str] | None) -> dict[str, str]:
    """remnic's hooks skipped, no editor or terminal prompt for a merge message."""
    return {**os.environ, "REMNIC_SKIP_HOOKS": "1", "GIT_MERGE_AUTOEDIT": "no", "GIT_EDITOR": "true", **(env or {})}


def run_git(
    root: Path,
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    stdin: str | None = None,
    hooks: Path | None = None,
) -> GitRun:
    """git in ``root`` with remnic's hooks skipped and no editor or terminal prompt for a merge message."""
    try:
        proc = subprocess.run(
            _argv(args, hooks),
            cwd=root,
            env=_env(env),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return GitRun(124, "", f"git {args[0]} timed out after {timeout:.0f}s")
    return GitRun(proc.returncode, proc.stdout, proc.stderr)


def run_git_bytes(
    root: Path, args: Sequence[str], stdin: bytes, *, env: Mapping[str, str] | None = None
) -> tuple[int, bytes]:
    """:func:`run_git` with binary input and output (blobs, NUL-separated paths): (exit code, stdout)."""
    proc = subprocess.run(_argv(args, None), cwd=root, env=_env(env), input=stdin, capture_output=True, check=False)
    return proc.returncode, proc.stdout


def run_git_detached(
    root: Path, args: Sequence[str], *, env: Mapping[str, str] | None, started: Callable[[int], object]
) -> GitRun:
    """:func:`run_git` that finishes on its own when this process is killed: in its own session (a signal to
    this process group does not reach it) and writing to files, not pipes (a pipe whose reader died kills it
    with SIGPIPE). ``started`` gets git's pid as soon as it runs; a negative code: git itself was killed."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            _argv(args, None),
            cwd=root,
            env=_env(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        started(proc.pid)
        code = proc.wait()
        out.seek(0)
        err.seek(0)
        said = [f.read().decode("utf-8", "replace") for f in (out, err)]
    return GitRun(code, *said)


def identity(ledger: Ledger) -> dict[str, str]:
    """The author/committer environment remnic's own commits use (a fallback when none is configured)."""
    return dict(ledger._identity_env())


# --- the merge driver ---


def driver_command(python: str) -> str:
    """What git runs for a memory file: this Python's remnic, by absolute path, so a plain ``git pull``
    outside remnic (no virtualenv active, a GUI client) finds it; ``-P``: git runs it in the repository,
    whose own ``json.py`` (a teammate's commit) must never be imported in place of the standard library's."""
    return f"{shlex.quote(python)} -P -m remnic merge-file %O %A %B %P"


def install_driver(ledger: Ledger, python: str) -> bool:
    """Write ``merge.remnic.driver`` into the repository's git config; True when it changed."""
    command = driver_command(python)
    current = run_git(ledger.root, ["config", "--local", "--get", f"merge.{DRIVER}.driver"]).out.strip()
    if current == command:
        return False
    for key, value in (
        (f"merge.{DRIVER}.name", "remnic memory file merge (frontmatter key by key)"),
        (f"merge.{DRIVER}.driver", command),
    ):
        result = run_git(ledger.root, ["config", "--local", key, value])
        if not result.ok:
            raise LedgerError(f"git config {key} failed: {result.err.strip()}")
    return True


def configured_driver(ledger: Ledger) -> str | None:
    return run_git(ledger.root, ["config", "--local", "--get", f"merge.{DRIVER}.driver"]).out.strip() or None


def with_attributes(existing: str) -> str | None:
    """``.gitattributes`` text naming the remnic driver for markdown files (None: already does)."""
    lines = existing.splitlines()
    missing = [line for line in ATTRIBUTE_LINES if line not in (x.strip() for x in lines)]
    if not missing:
        return None
    head = existing if not existing or existing.endswith("\n") else existing + "\n"
    block = ([ATTRIBUTES_HEADER] if ATTRIBUTES_HEADER not in lines else []) + missing
    return head + "\n".join(block) + "\n"


def line_merge(base: str, ours: str, theirs: str) -> tuple[str, bool]:
    """git's own line merge of three texts: (merged text, clean). Conflicted text carries markers and
    is only ever used to tell a conflict apart, never written into a memory file."""
    with tempfile.TemporaryDirectory(prefix="remnic-merge-") as tmp:
        paths = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_text(text, encoding="utf-8", newline="")
            paths.append(str(path))
        proc = subprocess.run(
            ["git", *QUIET_GIT, "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", *paths],
            capture_output=True,
            check=False,
        )
    return proc.stdout.decode("utf-8", "surrogateescape"), proc.returncode == 0


# --- where the repository stands ---


def branch(ledger: Ledger) -> str | None:
    result = run_git(ledger.root, ["symbolic-ref", "--quiet", "--short", "HEAD"])
    return result.out.strip() or None if result.ok else None


def remotes(ledger: Ledger) -> list[str]:
    return run_git(ledger.root, ["remote"]).out.split()


def remote_url(ledger: Ledger, remote: str) -> str | None:
    result = run_git(ledger.root, ["remote", "get-url", remote])
    return result.out.strip() or None if result.ok else None


def remote_for(ledger: Ledger, current: str | None, preferred: str) -> str | None:
    """The branch's configured remote, else ``preferred`` (origin), else the only remote."""
    if current:
        configured = run_git(ledger.root, ["config", "--get", f"branch.{current}.remote"]).out.strip()
        if configured:
            return configured
    names = remotes(ledger)
    if preferred in names:
        return preferred
    return names[0] if len(names) == 1 else None


def upstream(ledger: Ledger) -> str | None:
    result = run_git(ledger.root, ["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}"])
    return result.out.strip() or None if result.ok else None


def rev(ledger: Ledger, ref: str) -> str | None:
    result = run_git(ledger.root, ["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"])
    return result.out.strip() or None if result.ok else None


def merge_head(ledger: Ledger) -> str | None:
    """The commit being merged when a merge is in progress (MERGE_HEAD), else None."""
    path = Path(ledger.repo.git_dir) / "MERGE_HEAD"
    try:
        return path.read_text(encoding="utf-8").split()[0]
    except (OSError, IndexError):
        return None


def unmerged(ledger: Ledger) -> dict[str, dict[int, str]]:
    """Path → {stage: blob sha} of every path git left unmerged (1 base, 2 ours, 3 theirs)."""
    out: dict[str, dict[int, str]] = {}
    for entry in run_git(ledger.root, ["ls-files", "-u", "-z"]).out.split("\0"):
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and path:
            out.setdefault(path, {})[int(parts[2])] = parts[1]
    return out


def blob_text(ledger: Ledger, sha: str) -> str:
    result = run_git(ledger.root, ["cat-file", "blob", sha])
    if not result.ok:
        raise LedgerError(f"git cat-file {sha} failed: {result.err.strip()}")
    return result.out


def changed_paths(ledger: Ledger, old: str | None, new: str | None) -> list[str]:
    if not old or not new or old == new:
        return []
    result = run_git(ledger.root, ["diff", "--name-only", "-z", "--no-renames", old, new])
    return [p for p in result.out.split("\0") if p]


# --- fetch, merge, push ---


def fetch(ledger: Ledger, remote: str, timeout: float) -> GitRun:
    return run_git(ledger.root, ["fetch", "--prune", remote], timeout=timeout)


def merge(ledger: Ledger, ref: str, message: str, *, allow_unrelated: bool = False) -> GitRun:
    # Unrelated histories only when asked: a remote that is another project must never merge silently.
    unrelated = ["--allow-unrelated-histories"] if allow_unrelated else []
    args = ["merge", "--no-edit", "--no-stat", *unrelated, "-m", message, ref]
    return run_git(ledger.root, args, env=identity(ledger))


def merge_base(ledger: Ledger, one: str, other: str) -> str | None:
    """The best common ancestor of two commits; None when their histories share nothing."""
    result = run_git(ledger.root, ["merge-base", one, other])
    return result.out.strip() or None if result.ok else None


def remote_branches(ledger: Ledger, remote: str) -> list[str]:
    """The branches ``remote`` has, as of the last fetch (``origin/HEAD`` left out)."""
    refs = run_git(ledger.root, ["for-each-ref", "--format=%(refname)", f"refs/remotes/{remote}/"]).out.split()
    prefix = f"refs/remotes/{remote}/"
    return sorted(r[len(prefix) :] for r in refs if r.startswith(prefix) and r != f"{prefix}HEAD")


def abort_merge(ledger: Ledger) -> GitRun:
    return run_git(ledger.root, ["merge", "--abort"])


def commit_merge(ledger: Ledger) -> GitRun:
    return run_git(ledger.root, ["commit", "--no-edit", "--no-verify"], env=identity(ledger))


def add(ledger: Ledger, paths: Sequence[str]) -> GitRun:
    return run_git(ledger.root, ["add", "--", *(f":(literal){p}" for p in paths)]) if paths else GitRun(0, "", "")


def push(ledger: Ledger, remote: str, current: str, *, set_upstream: bool, timeout: float) -> GitRun:
    args = ["push", "--porcelain", *(["--set-upstream"] if set_upstream else []), remote, f"HEAD:refs/heads/{current}"]
    hooks = Path(tempfile.mkdtemp(prefix="remnic-hooks-", dir=ledger.repo.git_dir))  # beside the repository's own
    try:
        _pre_push_only(ledger, hooks)
        return run_git(ledger.root, args, timeout=timeout, hooks=hooks)
    finally:
        shutil.rmtree(hooks, ignore_errors=True)


def _pre_push_only(ledger: Ledger, hooks: Path) -> None:
    """``hooks`` made a hooks folder holding only the repository's pre-push hook: a push keeps it (the user's last
    check before sharing), not reference-transaction (run for each ref the push moves). A script that runs the
    hook where it is, so the hook finds its own folder as it does under plain git."""
    found = Path(run_git(ledger.root, ["rev-parse", "--git-path", "hooks/pre-push"]).out.strip())
    hook = found if found.is_absolute() else ledger.root / found
    if hook.is_file() and os.access(hook, os.X_OK):
        (hooks / "pre-push").write_text(f'#!/bin/sh\nexec {shlex.quote(str(hook))} "$@"\n', encoding="utf-8")
        (hooks / "pre-push").chmod(0o755)


def rejected(result: GitRun) -> bool:
    """Whether a push failed because the remote moved (not auth, not the network)."""
    text = result.out + result.err
    return any(marker in text for marker in _REJECTED)


def refused_by_remote(result: GitRun) -> bool:
    """Whether the remote received a push and refused it itself (a pre-receive or update hook, a protected
    branch): git's porcelain status line says ``[remote rejected]``."""
    return "[remote rejected]" in result.out + result.err


def clone(url: str, target: Path, timeout: float) -> GitRun:
    """``git clone``; when the remote's HEAD names a branch it does not have (a bare repository made
    with another default branch), the remote's main (else master, else only) branch is checked out; a clone
    of an empty remote is on :data:`INITIAL_BRANCH`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    result = run_git(target.parent, ["clone", "--quiet", url, str(target)], timeout=timeout)
    if not result.ok or run_git(target, ["rev-parse", "--verify", "--quiet", "HEAD"]).ok:
        return result
    refs = run_git(target, ["for-each-ref", "--format=%(refname:short)", "refs/remotes/origin"]).out.split()
    names = [r.split("/", 1)[1] for r in refs if "/" in r and not r.endswith("/HEAD")]
    pick = next((n for n in ("main", "master") if n in names), names[0] if len(names) == 1 else None)
    if pick is None:
        # An empty remote: the first push creates its branch, so start on the one `space create` uses (git's
        # default may be master), or two teammates starting from it would push two branches and never meet.
        if not names:
            run_git(target, ["symbolic-ref", "HEAD", f"refs/heads/{INITIAL_BRANCH}"])
        return result
    checkout = run_git(target, ["checkout", "--quiet", "-B", pick, "--track", f"origin/{pick}"])
    return result if checkout.ok else checkout
