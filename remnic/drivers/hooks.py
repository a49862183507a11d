"""Git hooks for a memory repository and the agent host hooks' logic.

The hook files themselves live in the top-level ``hooks/`` folder: small POSIX
sh scripts that call ``remnic hooks run <hook>``, so all logic is here.

- ``pre-commit``: validate the *staged* memory files; non-zero (and a message
  naming path, line and field) when one is malformed.
- ``post-merge``, ``post-checkout``, ``post-rewrite``: an incremental index
  update (a sync that neither writes files nor commits).
- Agent hosts (Claude Code, Codex): ``session-start`` prints memories for the
  session's context; ``stop``/``pre-compact`` hand the transcript's new turns
  to :meth:`Memory.observe`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remnic.config import STATE_DIR, StoreSettings
from remnic.errors import FieldProblem, NotFoundError
from remnic.fsio import write_atomic
from remnic.memfile.normalize import check_bytes
from remnic.observe.transcripts import parse_transcript
from remnic.repo.files import is_memory_path

if TYPE_CHECKING:
    from remnic.repo.ledger import Ledger
    from remnic.service.memory import Memory

GIT_HOOKS = ("pre-commit", "post-merge", "post-checkout", "post-rewrite")
RUNNER = "remnic-hook"
MARKER = "remnic-managed"
BACKUP_SUFFIX = ".pre-remnic"
AGENT_HOSTS = ("claude-code", "codex")
AGENT_EVENTS = ("session-start", "stop", "pre-compact")
_RECORDED = re.compile(r"^REMNIC_PYTHON_RECORDED=.*$", re.MULTILINE)
_AGENT_STATE = "agent-hooks.json"


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
        if p and is_memory_path(p)
    ]


def staged_symlinks(root: Path) -> list[str]:
    """Memory paths this commit adds or changes as symbolic links (index mode 120000)."""
    names = _staged_names(root)
    if not names:
        return []
    out = _git_bytes(root, ["ls-files", "--stage", "-z", "--", *names]).decode("utf-8", "surrogateescape")
    links = []
    for entry in out.split("\0"):
        meta, _, path = entry.partition("\t")
        if meta.startswith("120000 ") and is_memory_path(path):
            links.append(path)
    return links


def pre_commit_problems(root: Path, store: StoreSettings) -> list[FieldProblem]:
    problems = [
        FieldProblem("path", "is a symbolic link; memory files must be regular files", path=p)
        for p in staged_symlinks(root)
    ]
    links = set(p.path for p in problems)
    for path, data in staged_memory_files(root).items():
        if path not in links:
            problems += check_bytes(data, path, store).problems
    return problems


# --- agent hosts ---


def transcript_messages(lines: Iterable[str]) -> list[dict[str, str]]:
    """User and assistant turns of a Claude Code or Codex JSONL transcript, host text and tool
    traffic left out (the rules live in :mod:`remnic.observe.transcripts`); unreadable lines, such
    as a line the host is still writing, are skipped."""
    text = "\n".join(line.rstrip("\r\n") for line in lines)
    parsed = parse_transcript(text, "auto", source="transcript", strict=False)
    return [{"role": turn.role, "content": turn.text} for turn in parsed.turns]


def _agent_state(memory: Memory) -> tuple[Path, dict[str, Any]]:
    path = memory.root / STATE_DIR / _AGENT_STATE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    return path, data if isinstance(data, dict) else {}


def observe_transcript(memory: Memory, payload: Mapping[str, Any], host: str) -> dict[str, Any]:
    """Hand the transcript's turns not handed before to ``Memory.observe`` (when remnic has it)."""
    observe = getattr(memory, "observe", None)
    if observe is None:
        return {"observed": 0, "detail": "this remnic has no observe yet; nothing handed over"}
    transcript = payload.get("transcript_path")
    session = str(payload.get("session_id") or "").strip()
    if not transcript or not session:
        return {"observed": 0, "detail": "the hook input names no transcript_path/session_id"}
    try:
        with open(Path(str(transcript)).expanduser(), encoding="utf-8", errors="replace") as fh:
            messages = transcript_messages(fh)
    except OSError as exc:
        return {"observed": 0, "detail": f"cannot read the transcript: {exc.strerror}"}
    key = f"{host}:{session}"
    with memory.files.lock():
        state_path, state = _agent_state(memory)
        done = int(state.get(key, 0)) if str(state.get(key, 0)).isdigit() else 0
        new = messages[done:] if done <= len(messages) else messages
        result: dict[str, Any] = {"observed": 0}
        if new:
            result = dict(observe(key, new, source=f"{host}-hook"))
            result["observed"] = len(new)
        state[key] = len(messages)
        write_atomic(state_path, json.dumps(state, indent=1, sort_keys=True) + "\n")
    return result


def session_context(memory: Memory, payload: Mapping[str, Any]) -> str:
    """Memories for a new session: what recall finds for the project (its folder name, or
    $REMNIC_SESSION_QUERY). Without an index yet, the most important and most recent memories
    (a session start never waits for a full index build)."""
    from remnic.service.browse import newest_first

    cwd = str(payload.get("cwd") or os.getcwd())
    query = os.environ.get("REMNIC_SESSION_QUERY") or Path(cwd).name.replace("-", " ").replace("_", " ")
    settings = memory.settings.recall
    try:
        hits = list(memory.recall(query)) if query.strip() and memory.index.manifest() is not None else None
    except Exception:  # noqa: BLE001 - no usable index or model: the plain fallback below
        hits = None
    if hits is None:
        records = sorted(memory.list(status="active"), key=newest_first)
        records.sort(key=lambda r: -r.importance)  # stable: most important first, newest first within
        items = [(r.category, r.content, r.id) for r in records[: settings.top_k]]
    else:
        items = [(h.category, h.content, h.id) for h in hits]
    lines: list[str] = []
    used = 0
    for category, content, memory_id in items:
        line = f"- [{category}] {' '.join(content.split())} ({memory_id})"
        if settings.budget_chars and used + len(line) > settings.budget_chars:
            break
        lines.append(line)
        used += len(line) + 1
    if not lines:
        return ""
    return (
        f"Memories from remnic ({memory.root}) for {query!r}; edit them as files there, "
        "or with `remnic store`/`remnic forget`:\n" + "\n".join(lines)
    )


def session_start_output(memory: Memory, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    context = session_context(memory, payload)
    if not context:
        return None
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}
