"""The repository's git hooks: installing remnic's, reporting their state, and the pre-commit check.

The hook files themselves live in the top-level ``hooks/`` folder: small POSIX sh
scripts that call ``remnic hooks run <hook>``.

- ``pre-commit``: validate the *staged* memory files; non-zero (and a message
  naming path, line and field) when one is malformed.
- ``post-merge``, ``post-checkout``, ``post-rewrite``: an incremental index
  update (a sync that neither writes files nor commits).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from remnic.config import StoreSettings
from remnic.errors import FieldProblem, NotFoundError
from remnic.fsio import write_atomic
from remnic.memfile.paths import MemoryPaths, may_be_memory
from remnic.memfile.validate import check_bytes

from .gitlog import literal
from .ledger import Ledger

GIT_HOOKS = ("pre-commit", "post-merge", "post-checkout", "post-rewrite")
RUNNER = "remnic-hook"
MARKER = "remnic-managed"
BACKUP_SUFFIX = ".pre-remnic"
_RECORDED = re.compile(r"^REMNIC_PYTHON_RECORDED=.*$", re.MULTILINE)


def hooks_source_dir() -> Path:
    """The ``hooks/`` folder shipped with remnic (next to the package when installed editable)."""
    packaged = Path(__file__).resolve().parent.parent / "_hooks"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "hooks"


def git_hooks_dir(ledger: Ledger) -> Path:
    """Where git looks for this repository's hooks (honours ``core.hooksPath``)."""
    path = Path(ledger.git("rev-parse", "--git-path", "hooks"))
    return path if path.is_absolute() else (ledger.root / path)


def _runner_text(python: str) -> str:
    text = (hooks_source_dir() / "git" / RUNNER).read_text(encoding="utf-8")
    return _RECORDED.sub(lambda _m: f"REMNIC_PYTHON_RECORDED={shlex.quote(python)}", text, count=1)


def _is_ours(path: Path) -> bool:
    try:
        return MARKER in path.read_text(encoding="utf-8", errors="replace")[:400]
    except OSError:
        return False


def _write_executable(path: Path, text: str) -> None:
    write_atomic(path, text, mode=0o755)
    os.chmod(path, 0o755)


def install_git_hooks(ledger: Ledger, *, force: bool = False, python: str | None = None) -> list[dict[str, str]]:
    """Install the four git hooks (and their runner); a foreign hook is kept, and chained when ``force``."""
    python = python or sys.executable
    target_dir = git_hooks_dir(ledger)
    target_dir.mkdir(parents=True, exist_ok=True)
    source = hooks_source_dir() / "git"
    _write_executable(target_dir / RUNNER, _runner_text(python))
    results = []
    for name in GIT_HOOKS:
        target = target_dir / name
        action = "installed"
        if target.exists() and not _is_ours(target):
            if not force:
                results.append(
                    {
                        "hook": name,
                        "state": "skipped",
                        "path": str(target),
                        "detail": "a hook that is not remnic's is already there; --force keeps it as "
                        f"{name}{BACKUP_SUFFIX} and runs it before remnic's",
                    }
                )
                continue
            backup = target.with_name(name + BACKUP_SUFFIX)
            if backup.exists():
                backup = target.with_name(f"{name}{BACKUP_SUFFIX}.{os.getpid()}")
            target.rename(backup)
            action = f"installed (previous hook kept as {backup.name}, runs first)"
        elif target.exists():
            action = (
                "updated"
                if target.read_text(encoding="utf-8") != (source / name).read_text(encoding="utf-8")
                else "already installed"
            )
        _write_executable(target, (source / name).read_text(encoding="utf-8"))
        results.append({"hook": name, "state": action, "path": str(target)})
    return results


def git_hooks_status(ledger: Ledger) -> list[dict[str, str]]:
    target_dir = git_hooks_dir(ledger)
    source = hooks_source_dir() / "git"
    runner = target_dir / RUNNER
    recorded = None
    if runner.is_file():
        m = _RECORDED.search(runner.read_text(encoding="utf-8"))
        recorded = shlex.split(m.group(0).split("=", 1)[1])[0] if m and m.group(0).split("=", 1)[1] else None
    rows = []
    for name in GIT_HOOKS:
        target = target_dir / name
        if not target.exists():
            state, detail = "missing", "run `remnic hooks install`"
        elif not _is_ours(target):
            state, detail = "foreign", "a hook that is not remnic's (`remnic hooks install --force` chains it)"
        elif not os.access(target, os.X_OK):
            state, detail = "not executable", "run `remnic hooks install`"
        elif target.read_text(encoding="utf-8") != (source / name).read_text(encoding="utf-8"):
            state, detail = "outdated", "run `remnic hooks install` to update it"
        elif not runner.is_file():
            state, detail = "broken", f"{RUNNER} is missing; run `remnic hooks install`"
        elif runner.read_text(encoding="utf-8") != _runner_text(recorded or ""):
            # An older runner (one without `python -P` imports a json.py committed to the repository).
            state, detail = "outdated", f"{RUNNER} is an older remnic's; run `remnic hooks install` to update it"
        else:
            state, detail = "installed", f"python: {recorded or '(remnic on PATH)'}"
            if recorded and not os.access(recorded, os.X_OK):
                state, detail = "stale", f"the recorded python {recorded} is gone; run `remnic hooks install`"
        rows.append({"hook": name, "state": state, "path": str(target), "detail": detail})
    return rows


def uninstall_git_hooks(ledger: Ledger) -> list[dict[str, str]]:
    """Remove remnic's hooks, restoring hooks that install kept aside."""
    target_dir = git_hooks_dir(ledger)
    rows = []
    for name in GIT_HOOKS:
        target = target_dir / name
        backup = target.with_name(name + BACKUP_SUFFIX)
        if target.exists() and _is_ours(target):
            target.unlink()
            state = "removed"
            if backup.exists():
                backup.rename(target)
                state = "removed (previous hook restored)"
        else:
            state = "not installed" if not target.exists() else "left alone (not remnic's)"
        rows.append({"hook": name, "state": state, "path": str(target)})
    runner = target_dir / RUNNER
    if runner.exists() and not any(_is_ours(target_dir / n) for n in GIT_HOOKS if (target_dir / n).exists()):
        runner.unlink()
    return rows


# --- pre-commit ---


def _git_bytes(root: Path, args: list[str], data: bytes | None = None) -> bytes:
    proc = subprocess.run(["git", *args], cwd=root, input=data, capture_output=True, check=False)
    if proc.returncode != 0:
        raise NotFoundError(f"git {args[0]} failed: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return proc.stdout


def staged_memory_files(root: Path) -> dict[str, bytes]:
    """Path → staged bytes of every added/changed memory file (read from git's index, not the disk)."""
    names = _staged_names(root)
    if not names:
        return {}
    out = _git_bytes(root, ["cat-file", "--batch"], "".join(f":{n}\n" for n in names).encode("utf-8"))
    files: dict[str, bytes] = {}
    pos = 0
    for name in names:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        files[name] = out[pos : pos + size]
        pos += size + 1
    return files


def _staged_names(root: Path) -> list[str]:
    """Memory paths this commit adds or changes."""
    return [
        p
        for p in _git_bytes(root, ["diff", "--cached", "--name-only", "-z", "--diff-filter=ACMRT"])
        .decode("utf-8", "surrogateescape")
        .split("\0")
        if p and may_be_memory(p)
    ]


def staged_symlinks(root: Path) -> list[str]:
    """Memory paths this commit adds or changes as symbolic links (index mode 120000)."""
    names = _staged_names(root)
    if not names:
        return []
    out = _git_bytes(root, ["ls-files", "--stage", "-z", "--", *literal(*names)]).decode("utf-8", "surrogateescape")
    links = []
    for entry in out.split("\0"):
        meta, _, path = entry.partition("\t")
        if meta.startswith("120000 ") and may_be_memory(path):
            links.append(path)
    return links


def pre_commit_problems(root: Path, store: StoreSettings) -> list[FieldProblem]:
    paths = MemoryPaths.from_store(store)  # the repository's own rule for which files are memories
    problems = [
        FieldProblem("path", "is a symbolic link; memory files must be regular files", path=p)
        for p in staged_symlinks(root)
        if paths.is_memory(p)
    ]
    links = set(p.path for p in problems)
    for path, data in staged_memory_files(root).items():
        if path not in links and paths.is_memory(path):
            problems += check_bytes(data, path, store).problems
    return problems
